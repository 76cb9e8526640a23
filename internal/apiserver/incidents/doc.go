// Package incidents serves /incidents: incidents (kept in the history
// store) with their notes, timelines, explanations, postmortems, runbooks,
// snoozes and escalation, and the deploy events shown next to them.
package incidents
