package reliability

import (
	"context"
	"fmt"
	"net/http"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	relmath "github.com/uptime-operator/uptime-operator/internal/reliability"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// checksSince returns all checks of a monitor since from, newest first.
func (h *Handlers) checksSince(ctx context.Context, monitorID string, from, to time.Time) ([]store.Check, error) {
	var out []store.Check
	var before *time.Time
	for {
		page, next, err := h.st.ListChecks(ctx, store.ChecksQuery{MonitorID: monitorID, From: &from, To: &to, Before: before, Limit: store.MaxChecksPage})
		if err != nil {
			return nil, fmt.Errorf("list checks: %w", err)
		}
		out = append(out, page...)
		if next == nil {
			return out, nil
		}
		before = next
	}
}

// incidentsSince returns the incidents of ns (one monitor when monitorID is
// set) that started at or after from.
func (h *Handlers) incidentsSince(ctx context.Context, ns, monitorID string, from time.Time) ([]store.Incident, error) {
	var out []store.Incident
	for page := 1; ; page++ {
		l, err := h.st.ListIncidents(ctx, store.IncidentQuery{Namespace: ns, MonitorID: monitorID, From: &from, Page: page, PageSize: 100})
		if err != nil {
			return nil, fmt.Errorf("list incidents: %w", err)
		}
		out = append(out, l.Items...)
		if len(l.Items) < 100 {
			return out, nil
		}
	}
}

// reliabilityChecks is what the flakiness score reads of stored checks.
func reliabilityChecks(checks []store.Check) []relmath.Check {
	out := make([]relmath.Check, len(checks))
	for i, c := range checks {
		out[i] = relmath.Check{Region: c.Region, At: c.CheckedAt, Status: monv1.MonitorStatusValue(c.Status)}
	}
	return out
}

// reliabilityIncidents is what the incident figures read of stored
// incidents.
func reliabilityIncidents(incidents []store.Incident) []relmath.Incident {
	out := make([]relmath.Incident, len(incidents))
	for i, inc := range incidents {
		out[i] = relmath.Incident{StartedAt: inc.StartedAt, ResolvedAt: inc.ResolvedAt, Flapping: inc.IsFlapping}
	}
	return out
}

// monitorFlakiness answers GET /monitors/:id/flakiness.
func (h *Handlers) monitorFlakiness(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	now := h.d.Clock.Now()
	from30 := now.Add(-30 * 24 * time.Hour)
	checks, err := h.checksSince(ctx, string(m.UID), from30, now)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	// Incidents that started a little before the window can still confirm
	// failures inside it.
	incidents, err := h.incidentsSince(ctx, m.Namespace, string(m.UID), from30.Add(-7*24*time.Hour))
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	rc, ri := reliabilityChecks(checks), reliabilityIncidents(incidents)
	httpjson.Write(w, http.StatusOK, restapi.Flakiness{
		MonitorID:  string(m.UID),
		ComputedAt: core.ISOTime(now),
		Days7:      relmath.Flakiness(now.Add(-7*24*time.Hour), now, rc, ri),
		Days30:     relmath.Flakiness(from30, now, rc, ri),
	})
}
