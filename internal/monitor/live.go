package monitor

import (
	"context"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// LiveState is what the engine knows of a monitor at run time: the latest
// check, the open incident and uptime. The Monitor controller merges it into
// status (ApplyLiveState) so that status has a single writer.
type LiveState struct {
	LastStatus         string
	LastCheckedAt      *time.Time
	LastResponseTimeMs *int64
	LastError          string
	OpenIncident       *monv1.IncidentRef
	RecentIncidents    []monv1.IncidentRef
	Uptime24h          *float64
	Uptime30d          *float64
	Regions            []monv1.RegionState
	UnderMaintenance   bool
}

// LiveSource supplies LiveState. The engine implements it; without one every
// monitor stays pending.
type LiveSource interface {
	LiveState(ctx context.Context, m *monv1.Monitor) (*LiveState, error)
}

// CurrentStatus derives the monitor's state: paused and maintenance win,
// then an open incident (down), then the latest verdict, else pending.
func CurrentStatus(spec *monv1.MonitorSpec, live *LiveState) monv1.MonitorStatusValue {
	switch {
	case spec.Paused:
		return monv1.StatusPaused
	case live == nil:
		return monv1.StatusPending
	case live.UnderMaintenance:
		return monv1.StatusMaintenance
	case live.OpenIncident != nil:
		return monv1.StatusDown
	case live.LastStatus == "":
		return monv1.StatusPending
	case live.LastStatus == "down":
		// A single failing check without a confirmed incident is not "down":
		// down means an incident is open. Until regions confirm, report up.
		return monv1.StatusUp
	}
	return monv1.MonitorStatusValue(live.LastStatus)
}

// ApplyLiveState copies the engine's state into status.
func ApplyLiveState(st *monv1.MonitorStatus, live *LiveState) {
	if live == nil {
		return
	}
	st.LastStatus = live.LastStatus
	if live.LastCheckedAt != nil {
		t := metav1.NewTime(*live.LastCheckedAt)
		st.LastCheckedAt = &t
	}
	st.LastResponseTimeMs = live.LastResponseTimeMs
	st.LastError = live.LastError
	st.OpenIncident = live.OpenIncident
	st.RecentIncidents = live.RecentIncidents
	st.Uptime24h = FormatPercent(live.Uptime24h)
	st.Uptime30d = FormatPercent(live.Uptime30d)
	st.Regions = live.Regions
	st.UnderMaintenance = live.UnderMaintenance
}

// FormatPercent writes an uptime percentage the way status shows it
// ("99.12%"); nil (no data) is empty. ParsePercent reads it back.
func FormatPercent(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', 2, 64) + "%"
}

// ParsePercent reads a status percentage ("99.95%", or without the sign);
// empty or malformed text is nil.
func ParsePercent(s string) *float64 {
	if s == "" {
		return nil
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return nil
	}
	return &f
}
