// Package engine turns check results into monitor state and incidents. Per
// monitor and region it keeps the latest verdict; an incident opens when the
// quorum of voting regions confirms failure (blocked and unknown verdicts
// abstain), and resolves when they recover. It records confirmations,
// flapping and suppression (maintenance, parent dependency, snooze), writes
// alert events to the outbox in the same transaction as the state change, and
// evaluates cron heartbeats. It also serves the probe API (assignments out,
// results in) and supplies the Monitor controller's live state.
package engine
