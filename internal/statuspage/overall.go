package statuspage

import (
	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// Overall is the state of a whole page.
type Overall string

// Overall states, from best to worst. Maintenance ranks below the outages: a
// confirmed outage outside the maintenance is what visitors need to see.
const (
	Operational   Overall = "operational"
	Degraded      Overall = "degraded"
	Maintenance   Overall = "maintenance"
	PartialOutage Overall = "partial_outage"
	MajorOutage   Overall = "major_outage"
)

// MonitorMissing is the state reported for a listed monitor that does not
// exist.
const MonitorMissing = "missing"

// OverallStatus computes a page's state from the states of its monitors.
//
// Paused and missing monitors are left out. With the rest:
//   - major_outage when more than half of them are down (a page with one
//     monitor that is down is a major outage);
//   - partial_outage when at least one is down;
//   - degraded when none is down and at least one is degraded;
//   - maintenance when none is down or degraded and at least one is under
//     maintenance;
//   - operational otherwise, including pending, unknown and blocked monitors
//     (no confirmed problem) and a page without monitors.
func OverallStatus(states []string) Overall {
	var counted, down, degraded, maintenance int
	for _, s := range states {
		switch monv1.MonitorStatusValue(s) {
		case monv1.StatusPaused, MonitorMissing:
			continue
		case monv1.StatusDown:
			down++
		case monv1.StatusDegraded:
			degraded++
		case monv1.StatusMaintenance:
			maintenance++
		}
		counted++
	}
	switch {
	case down > 0 && 2*down > counted:
		return MajorOutage
	case down > 0:
		return PartialOutage
	case degraded > 0:
		return Degraded
	case maintenance > 0:
		return Maintenance
	}
	return Operational
}

// PublicState maps a monitor's currentStatus to the state a page shows: up,
// down, degraded, maintenance, paused or unknown. Pending, blocked and unknown
// are all shown as unknown: why a check could not run is not public.
func PublicState(s monv1.MonitorStatusValue) string {
	switch s {
	case monv1.StatusUp, monv1.StatusDown, monv1.StatusDegraded, monv1.StatusMaintenance, monv1.StatusPaused:
		return string(s)
	}
	return string(monv1.StatusUnknown)
}
