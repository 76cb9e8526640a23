// Package engine turns check results into monitor state and incidents. Per
// monitor and region it keeps the latest verdict; an incident opens when the
// quorum of voting regions confirms failure (blocked and unknown verdicts
// abstain), and resolves when they recover. It records confirmations,
// flapping and suppression (maintenance, parent dependency, snooze), writes
// alert events to the outbox in the same transaction as the state change, and
// evaluates cron heartbeats, and supplies the Monitor controller's live state
// (monitor.LiveState).
//
// Assignments are built by package assign and served to agents by package
// probeserver, which hands their results to Ingest; the engine asks it which
// agents are online (Agents) for the quorum and for RunCheck.
package engine
