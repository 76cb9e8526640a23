package restapi

import monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"

// Value lists of the wire's states. Fields of this package name them in
// their `openapi:"enum=@name"` tag (Enums); query parameters use them too.
var (
	// CheckStates are the statuses of one check.
	CheckStates = []string{"up", "down", "degraded", "blocked", "unknown"}
	// IncidentStates are the states of an incident.
	IncidentStates = []string{"ongoing", "resolved", "suppressed", "acknowledged"}
)

// Enums are the value lists an `openapi:"enum=@name"` tag names.
var Enums = map[string][]string{
	"monitorTypes":  monitorTypes(),
	"monitorStates": {"up", "down", "degraded", "blocked", "unknown", "pending", "paused", "maintenance"},
	"checkStates":   CheckStates,
	"draftPhases":   {"investigating", "identified", "monitoring", "resolved"},
}

func monitorTypes() []string {
	out := make([]string, len(monv1.MonitorTypes))
	for i, t := range monv1.MonitorTypes {
		out[i] = string(t)
	}
	return out
}
