package alerting

import (
	"context"
	"errors"
	"fmt"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	monitormodel "github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// EngineAlerts adapts a Router to the interfaces the engine and the
// controllers call: incident, last-mile, maintenance and SLO events.
type EngineAlerts struct {
	Router *Router
	// Kick wakes the delivery worker after events are enqueued; may be nil.
	Kick func()
}

// IncidentEvents implements the engine's Alerts.
func (a EngineAlerts) IncidentEvents(ctx context.Context, kind string, m *monv1.Monitor, inc store.Incident, d alertevent.Decision) ([]store.OutboxEvent, error) {
	ev, err := a.Router.IncidentEvent(ctx, kind, m, inc, EventOptions{Region: d.Region, Reason: d.Reason, Explanation: d.Explanation})
	if err != nil {
		return nil, err
	}
	a.kickSoon()
	return []store.OutboxEvent{ev}, nil
}

// LastMileEvents implements the engine's LastMileAlerts.
func (a EngineAlerts) LastMileEvents(ctx context.Context, kind string, m *monv1.Monitor, n alertevent.LastMileNotice) ([]store.OutboxEvent, error) {
	affected := make([]alertevent.LastMileAffected, 0, len(n.ISPs))
	for _, isp := range n.ISPs {
		affected = append(affected, alertevent.LastMileAffected{ISP: isp, Name: isp, VantagePoints: len(n.FailingRegions),
			Failures: len(n.FailingRegions), FailingSince: n.Since.UTC().Format(time.RFC3339), ErrorClasses: []string{}})
	}
	p := alertevent.NewLastMilePayload(kind == alertevent.LastMileUnreachable, string(m.UID), monitormodel.DisplayName(m), n.NoticeID, a.Router.BaseURL, affected)
	ev, err := a.Router.NoticeEvent(ctx, m.Namespace, kind, p, []*monv1.Monitor{m})
	if err != nil {
		return nil, err
	}
	a.kickSoon()
	return []store.OutboxEvent{ev}, nil
}

// MaintenanceEvents implements the MaintenanceWindow controller's
// MaintenanceAlerts.
func (a EngineAlerts) MaintenanceEvents(ctx context.Context, kind string, w *monv1.MaintenanceWindow, start, end time.Time) ([]store.OutboxEvent, error) {
	f := alertevent.MaintenanceFacts{ID: string(w.UID), Title: w.Spec.Title, Description: w.Spec.Description,
		StartsAt: start, EndsAt: end, Impact: w.Spec.Impact, Scope: string(w.Spec.Scope), MonitorIDs: []string{}, GroupIDs: []string{}, URL: a.Router.BaseURL}
	var affected []*monv1.Monitor
	var list monv1.MonitorList
	if err := a.Router.Reader.List(ctx, &list); err == nil {
		for i := range list.Items {
			m := &list.Items[i]
			if m.Namespace != w.Namespace {
				continue
			}
			if w.Spec.Scope == "all" || coversMonitor(w, m) {
				affected = append(affected, m)
				if w.Spec.Scope != "all" {
					f.MonitorIDs = append(f.MonitorIDs, string(m.UID))
				}
			}
		}
	}
	ev, err := a.Router.NoticeEvent(ctx, w.Namespace, kind, alertevent.NewMaintenancePayload(kind == alertevent.MaintenanceStarted, f), affected)
	if err != nil {
		return nil, err
	}
	a.kickSoon()
	return []store.OutboxEvent{ev}, nil
}

func coversMonitor(w *monv1.MaintenanceWindow, m *monv1.Monitor) bool {
	for _, r := range w.Spec.Monitors {
		if r.Name == m.Name {
			return true
		}
	}
	if m.Spec.GroupRef != nil {
		for _, g := range w.Spec.Groups {
			if g.Name == m.Spec.GroupRef.Name {
				return true
			}
		}
	}
	return false
}

// kickSoon wakes the worker shortly after the caller's transaction commits.
func (a EngineAlerts) kickSoon() {
	if a.Kick != nil {
		time.AfterFunc(50*time.Millisecond, a.Kick)
	}
}

// ChannelTester adapts Worker.SendTest to the REST API's test endpoint: a
// delivered test is nil, anything else an error with the status and excerpt.
type ChannelTester struct{ Worker *Worker }

// TestChannel sends a signed test event to ch now.
func (t ChannelTester) TestChannel(ctx context.Context, ch *monv1.AlertChannel) error {
	res, err := t.Worker.SendTest(ctx, ch)
	if err != nil {
		return err
	}
	if !res.Delivered {
		return errors.New(res.Message())
	}
	return nil
}

// SLOEvents implements the SLO controller's SLOAlerts.
func (a EngineAlerts) SLOEvents(ctx context.Context, kind string, slo *monv1.SLO, m *monv1.Monitor) ([]store.OutboxEvent, error) {
	what := map[string]string{
		alertevent.SLOBurningFast:     "is burning its error budget fast",
		alertevent.SLOBurningSlow:     "is burning its error budget",
		alertevent.SLOBudgetExhausted: "has exhausted its error budget",
	}[kind]
	p := alertevent.SLOPayload{Event: kind, Title: fmt.Sprintf("SLO %s of %s %s", slo.Name, monitormodel.DisplayName(m), what), URL: a.Router.BaseURL,
		SLOID: string(slo.UID), SLOName: slo.Name, MonitorID: string(m.UID), MonitorName: monitormodel.DisplayName(m),
		TargetPercentage: slo.Spec.TargetPercentage, CurrentSLI: slo.Status.CurrentSLI,
		BudgetRemainingPercent: slo.Status.ErrorBudgetRemainingPercent, BurnRates: map[string]float64{}}
	for _, br := range slo.Status.BurnRates {
		p.BurnRates[br.Window] = br.Rate
	}
	ev, err := a.Router.NoticeEvent(ctx, m.Namespace, kind, p, []*monv1.Monitor{m})
	if err != nil {
		return nil, err
	}
	a.kickSoon()
	return []store.OutboxEvent{ev}, nil
}
