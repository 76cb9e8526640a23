package reliability

import (
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/go-chi/chi/v5"
	"k8s.io/utils/ptr"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	relmath "github.com/uptime-operator/uptime-operator/internal/reliability"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Reliability reports: uptime, incidents, MTTR, MTBF, a health score and the
// SLO state per monitor and for the workspace. The math is in package
// reliability; the formulas are in docs/reliability.md.

// reliabilityWindow is the window of incident counts, MTTR and MTBF.
const reliabilityWindow = 30 * 24 * time.Hour

func sloState(o *monv1.SLO) *restapi.SLOState {
	st := o.Status
	out := &restapi.SLOState{ID: string(o.UID), TargetPercentage: o.Spec.TargetPercentage, SLIType: string(o.Spec.SLIType),
		WindowMinutes: o.Spec.WindowMinutes, IsEnabled: o.Spec.Enabled == nil || *o.Spec.Enabled, State: relmath.SLOState(o),
		CurrentSLI: st.CurrentSLI, ErrorBudgetMinutes: st.ErrorBudgetMinutes, ErrorBudgetRemainingMinutes: st.ErrorBudgetRemainingMinutes,
		ErrorBudgetRemainingPercent: st.ErrorBudgetRemainingPercent, BurnRates: []restapi.BurnRate{}, Conditions: []restapi.SLOCondition{},
		LastEvaluatedAt: core.MetaTimePtr(st.LastEvaluatedAt)}
	for _, b := range st.BurnRates {
		out.BurnRates = append(out.BurnRates, restapi.BurnRate{Window: b.Window, Rate: b.Rate})
	}
	for _, c := range st.Conditions {
		out.Conditions = append(out.Conditions, restapi.SLOCondition{Type: c.Type, Status: string(c.Status), Reason: c.Reason,
			Message: c.Message, LastTransitionTime: core.ISOTime(c.LastTransitionTime.Time)})
	}
	return out
}

// monitorReliability builds the report of m from the store, its incidents of
// the window (and before) and its SLO (nil: none); stats are the incident
// figures of the window, for the workspace's totals.
func (h *Handlers) monitorReliability(ctx context.Context, m *monv1.Monitor, incidents []store.Incident, slo *monv1.SLO, now time.Time) (out *restapi.MonitorReliability, stats relmath.IncidentStats, err error) {
	out = &restapi.MonitorReliability{MonitorID: string(m.UID), Name: m.Spec.Name, CurrentStatus: string(m.Status.CurrentStatus)}
	switch {
	case m.Spec.Paused:
		out.CurrentStatus = string(monv1.StatusPaused)
	case out.CurrentStatus == "":
		out.CurrentStatus = string(monv1.StatusPending)
	}
	for _, u := range []struct {
		dst *(*float64)
		d   time.Duration
	}{{&out.Uptime24h, 24 * time.Hour}, {&out.Uptime7d, 7 * 24 * time.Hour}, {&out.Uptime30d, reliabilityWindow}} {
		v, err := h.st.Uptime(ctx, string(m.UID), now.Add(-u.d), now)
		if err != nil {
			return nil, stats, err
		}
		if v != nil {
			r := relmath.Round2(*v)
			v = &r
		}
		*u.dst = v
	}
	stats = relmath.Incidents(now.Add(-reliabilityWindow), now, reliabilityIncidents(incidents))
	out.Incidents30d, out.OpenIncident = stats.Count, stats.Open
	out.DowntimeSeconds30d = int64(stats.Downtime / time.Second)
	out.MTTRSeconds, out.MTBFSeconds = stats.MTTR(), stats.MTBF()
	in := stats.Health(out.Uptime30d)
	if slo != nil {
		out.SLO = sloState(slo)
		relmath.SLOHealth(&in, slo)
	}
	score, components := relmath.HealthScore(in)
	out.HealthScore, out.Health = score, make([]restapi.HealthComponent, 0, len(components))
	for _, c := range components {
		out.Health = append(out.Health, restapi.HealthComponent(c))
	}
	return out, stats, nil
}

// sloByMonitor indexes the live SLOs of ns by monitor name.
func (h *Handlers) sloByMonitor(ctx context.Context, ns string) (map[string]*monv1.SLO, []monv1.SLO, error) {
	var list monv1.SLOList
	if err := h.d.List(ctx, &list, ns); err != nil {
		return nil, nil, err
	}
	live := slices.DeleteFunc(list.Items, func(o monv1.SLO) bool { return o.DeletionTimestamp != nil })
	out := map[string]*monv1.SLO{}
	for i := range live {
		out[live[i].Spec.MonitorRef.Name] = &live[i]
	}
	return out, live, nil
}

// reliabilityMonitor answers GET /reliability/monitor/:monitorId.
func (h *Handlers) reliabilityMonitor(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m, err := h.d.MonitorByID(ctx, core.CallerFrom(ctx).Namespace, chi.URLParam(r, "monitorId"))
	if errors.Is(err, core.ErrNotFound) {
		core.WriteNotFound(w, "Monitor")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	now := h.d.Clock.Now()
	incidents, err := h.incidentsSince(ctx, m.Namespace, string(m.UID), now.Add(-2*reliabilityWindow))
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	slos, _, err := h.sloByMonitor(ctx, m.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out, _, err := h.monitorReliability(ctx, m, incidents, slos[m.Name], now)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if o := slos[m.Name]; o != nil {
		t := sloObject(o, &core.ObjectUIDs{ByName: map[string]string{m.Name: string(m.UID)}})
		out.SLOTarget = &t
	}
	httpjson.Write(w, http.StatusOK, out)
}

// reliabilityOverview answers GET /reliability/overview: the workspace's
// figures and every monitor's report, least healthy first.
func (h *Handlers) reliabilityOverview(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	monitors, err := h.d.NamespaceMonitors(r)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	slos, sloList, err := h.sloByMonitor(ctx, c.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	now := h.d.Clock.Now()
	all, err := h.incidentsSince(ctx, c.Namespace, "", now.Add(-2*reliabilityWindow))
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	byMonitor := map[string][]store.Incident{}
	for _, inc := range all {
		byMonitor[inc.MonitorID] = append(byMonitor[inc.MonitorID], inc)
	}
	sum := core.Summarize(monitors)
	reports := make([]*restapi.MonitorReliability, 0, len(monitors))
	var total relmath.IncidentStats
	uptimes := [3]meanOf{}
	health := meanOf{}
	for i := range monitors {
		m := &monitors[i]
		rep, stats, err := h.monitorReliability(ctx, m, byMonitor[string(m.UID)], slos[m.Name], now)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		reports = append(reports, rep)
		uptimes[0].add(rep.Uptime24h)
		uptimes[1].add(rep.Uptime7d)
		uptimes[2].add(rep.Uptime30d)
		if rep.HealthScore != nil {
			health.add(ptr.To(float64(*rep.HealthScore)))
		}
		total.Pool(stats, rep.Uptime30d != nil)
	}
	slices.SortStableFunc(reports, func(a, b *restapi.MonitorReliability) int {
		return healthOrder(a.HealthScore) - healthOrder(b.HealthScore)
	})
	sloCounts := map[string]int{"met": 0, "breaching": 0, "budget_exhausted": 0, "burning_fast": 0, "burning_slow": 0, "pending": 0, "disabled": 0}
	breaching := 0
	for i := range sloList {
		st := relmath.SLOState(&sloList[i])
		sloCounts[st]++
		if st != "met" && st != "pending" && st != "disabled" {
			breaching++
		}
	}
	var healthScoreOut *int
	if v := health.mean(); v != nil {
		healthScoreOut = ptr.To(int(math.Round(*v)))
	}
	httpjson.Write(w, http.StatusOK, restapi.ReliabilityOverview{
		GeneratedAt:         core.ISOTime(now),
		Monitors:            sum.Total,
		Counts:              sum.Counts,
		OpenIncidents:       sum.OpenIncidents,
		Uptime24h:           uptimes[0].mean(),
		Uptime7d:            uptimes[1].mean(),
		Uptime30d:           uptimes[2].mean(),
		Incidents30d:        total.Count,
		MTTRSeconds:         total.MTTR(),
		MTBFSeconds:         total.MTBF(),
		HealthScore:         healthScoreOut,
		SLOTargets:          len(sloList),
		SLOTargetsBreaching: breaching,
		SLOStates:           sloCounts,
		ByMonitor:           reports,
	})
}

// healthOrder sorts reports without a score last.
func healthOrder(p *int) int {
	if p == nil {
		return 1000
	}
	return *p
}

// meanOf averages the non-nil values added.
type meanOf struct {
	sum float64
	n   int
}

func (m *meanOf) add(v *float64) {
	if v != nil {
		m.sum += *v
		m.n++
	}
}

func (m *meanOf) mean() *float64 {
	if m.n == 0 {
		return nil
	}
	return ptr.To(relmath.Round2(m.sum / float64(m.n)))
}
