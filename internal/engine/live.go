package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// LiveState implements monitor.LiveSource: the latest check, per-region
// verdicts and the open incident as the store holds them (whichever replica
// stored them), recent incidents, uptime and maintenance.
func (e *Engine) LiveState(ctx context.Context, m *monv1.Monitor) (*monitor.LiveState, error) {
	view, err := e.opts.Store.MonitorView(ctx, string(m.UID), viewQuery(m, e.opts.Now()))
	if err != nil {
		return nil, fmt.Errorf("read monitor view: %w", err)
	}
	now := e.opts.Now()
	live := &monitor.LiveState{}
	if last := latestOf(view); last != nil {
		t := last.CheckedAt
		rt := last.ResponseTimeMs
		live.LastStatus, live.LastCheckedAt, live.LastResponseTimeMs = string(last.Status), &t, &rt
		if last.Status != store.StatusUp {
			live.LastError = last.ErrorMessage
		}
	}
	checks := slices.Clone(view.Checks)
	slices.SortFunc(checks, func(a, b store.Check) int { return strings.Compare(a.Region, b.Region) })
	for _, c := range checks {
		t := metav1.NewTime(c.CheckedAt)
		live.Regions = append(live.Regions, monv1.RegionState{Code: c.Region, Status: string(c.Status), LastCheckedAt: &t, Error: textutil.Truncate(c.ErrorMessage, 200)})
	}
	if view.Open != nil {
		live.OpenIncident = incidentRef(*view.Open)
	}
	recent, err := e.opts.Store.ListIncidents(ctx, store.IncidentQuery{MonitorID: string(m.UID), Page: 1, PageSize: 5})
	if err != nil {
		return nil, fmt.Errorf("list recent incidents: %w", err)
	}
	for _, inc := range recent.Items {
		live.RecentIncidents = append(live.RecentIncidents, *incidentRef(inc))
	}
	if live.Uptime24h, err = e.opts.Store.Uptime(ctx, string(m.UID), now.Add(-24*time.Hour), now); err != nil {
		return nil, fmt.Errorf("uptime 24h: %w", err)
	}
	if live.Uptime30d, err = e.opts.Store.Uptime(ctx, string(m.UID), now.Add(-30*24*time.Hour), now); err != nil {
		return nil, fmt.Errorf("uptime 30d: %w", err)
	}
	if live.UnderMaintenance, err = e.underMaintenance(ctx, m, now); err != nil {
		return nil, err
	}
	if live.LastStatus == "" && live.OpenIncident == nil && !live.UnderMaintenance {
		return nil, nil // nothing known yet: pending
	}
	return live, nil
}

func incidentRef(inc store.Incident) *monv1.IncidentRef {
	ref := &monv1.IncidentRef{ID: inc.ID, StartedAt: metav1.NewTime(inc.StartedAt), ConfirmingRegions: inc.ConfirmingRegions}
	if inc.ResolvedAt != nil {
		t := metav1.NewTime(*inc.ResolvedAt)
		ref.ResolvedAt = &t
	}
	return ref
}

// recordDNS keeps the DNS record history of dns monitors from the answers
// their checks report.
func (e *Engine) recordDNS(ctx context.Context, m *monv1.Monitor, checks []store.Check) {
	if m.Spec.Type != monv1.MonitorDNS {
		return
	}
	for _, c := range checks {
		var d struct {
			RecordType string   `json:"record_type"`
			Answers    []string `json:"answers"`
		}
		if len(c.Details) == 0 || json.Unmarshal(c.Details, &d) != nil || d.RecordType == "" {
			continue
		}
		if c.Status == store.StatusUnknown || c.Status == store.StatusBlocked {
			continue
		}
		if _, err := e.opts.Store.RecordDNS(ctx, store.DNSRecord{MonitorID: c.MonitorID, ObservedAt: c.CheckedAt, RecordType: d.RecordType, Answers: d.Answers}); err != nil {
			e.opts.Log.Error(err, "record dns answer", "monitor", m.Name)
		}
	}
}
