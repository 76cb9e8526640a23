package apiserver

import (
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/go-chi/chi/v5"
	"k8s.io/apimachinery/pkg/api/meta"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Reliability reports: uptime, incidents, MTTR, MTBF, a health score and the
// SLO state per monitor and for the workspace. The formulas are in
// docs/reliability.md.

// reliabilityWindow is the window of incident counts, MTTR and MTBF.
const reliabilityWindow = 30 * 24 * time.Hour

// Health score weights and saturation points.
const (
	healthAvailabilityWeight = 45.0
	healthAvailabilityNines  = 3.0 // 99.9 % gets full points
	healthIncidentsWeight    = 20.0
	healthIncidentsZero      = 10.0 // 10 incidents in 30 days get none
	healthRecoveryWeight     = 15.0
	healthRecoveryFullMin    = 5.0   // MTTR up to 5 minutes gets full points
	healthRecoveryZeroMin    = 120.0 // MTTR of 2 hours or more gets none
	healthBudgetWeight       = 20.0
	healthOpenIncidentCap    = 50
)

// incidentStats are the incident figures of one window.
type incidentStats struct {
	Count      int
	Resolved   int
	RepairSum  time.Duration // sum of resolved incidents' durations
	Downtime   time.Duration // incident time inside the window
	Open       bool
	WindowSpan time.Duration
}

// incidentFigures computes the figures of [from, to) from incidents that
// started in the window or before it.
func incidentFigures(from, to time.Time, incidents []store.Incident) incidentStats {
	st := incidentStats{WindowSpan: to.Sub(from)}
	for _, inc := range incidents {
		end := to
		if inc.ResolvedAt != nil {
			end = *inc.ResolvedAt
		} else {
			st.Open = true
		}
		start := inc.StartedAt
		if start.Before(from) {
			start = from
		}
		if end.After(start) {
			st.Downtime += end.Sub(start)
		}
		if inc.StartedAt.Before(from) {
			continue
		}
		st.Count++
		if inc.ResolvedAt != nil {
			st.Resolved++
			st.RepairSum += inc.ResolvedAt.Sub(inc.StartedAt)
		}
	}
	return st
}

// mttr is the mean time to recovery, nil without resolved incidents.
func (st incidentStats) mttr() *float64 {
	if st.Resolved == 0 {
		return nil
	}
	v := round2(st.RepairSum.Seconds() / float64(st.Resolved))
	return &v
}

// mtbf is the mean time between failures: the time up in the window divided
// by the number of incidents, nil without incidents.
func (st incidentStats) mtbf() *float64 {
	if st.Count == 0 {
		return nil
	}
	v := round2((st.WindowSpan - st.Downtime).Seconds() / float64(st.Count))
	return &v
}

// healthComponent is one weighted part of a health score.
type healthComponent struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
	Value  float64 `json:"value"` // 0-1
	Points float64 `json:"points"`
}

// healthInput is what a health score is computed from.
type healthInput struct {
	Uptime30d *float64
	Incidents incidentStats
	// BudgetRemaining is the SLO's remaining error budget in percent, nil
	// without an evaluated SLO.
	BudgetRemaining *float64
	BurningFast     bool
}

// healthScore scores a monitor 0-100 (higher is healthier); nil without
// uptime data. Components without data are left out and the rest
// re-weighted; an open incident caps the score at 50.
func healthScore(in healthInput) (*int, []healthComponent) {
	if in.Uptime30d == nil {
		return nil, []healthComponent{}
	}
	clamp := func(v float64) float64 { return math.Max(0, math.Min(1, v)) }
	avail := 1.0
	if u := *in.Uptime30d; u < 100 {
		avail = clamp(-math.Log10(1-u/100) / healthAvailabilityNines)
	}
	comps := []healthComponent{
		{Name: "availability", Weight: healthAvailabilityWeight, Value: avail},
		{Name: "incidents", Weight: healthIncidentsWeight, Value: clamp(1 - float64(in.Incidents.Count)/healthIncidentsZero)},
	}
	recovery := 1.0
	if m := in.Incidents.mttr(); m != nil {
		recovery = clamp(1 - (*m/60-healthRecoveryFullMin)/(healthRecoveryZeroMin-healthRecoveryFullMin))
	}
	comps = append(comps, healthComponent{Name: "recovery", Weight: healthRecoveryWeight, Value: recovery})
	if in.BudgetRemaining != nil {
		v := clamp(*in.BudgetRemaining / 100)
		if in.BurningFast {
			v = 0
		}
		comps = append(comps, healthComponent{Name: "error_budget", Weight: healthBudgetWeight, Value: v})
	}
	var sumW, sum float64
	for _, c := range comps {
		sumW += c.Weight
	}
	for i := range comps {
		comps[i].Points = round2(100 * comps[i].Weight * comps[i].Value / sumW)
		comps[i].Value = round2(comps[i].Value)
		sum += 100 * comps[i].Weight * comps[i].Value / sumW
	}
	score := int(math.Round(sum))
	if in.Incidents.Open {
		score = min(score, healthOpenIncidentCap)
	}
	return &score, comps
}

// sloStateJSON is an SLO's evaluated state.
type sloStateJSON struct {
	ID                          string          `json:"id"`
	TargetPercentage            float64         `json:"target_percentage"`
	SLIType                     string          `json:"sli_type"`
	WindowMinutes               int32           `json:"window_minutes"`
	IsEnabled                   bool            `json:"is_enabled"`
	State                       string          `json:"state"`
	CurrentSLI                  *float64        `json:"current_sli"`
	ErrorBudgetMinutes          *float64        `json:"error_budget_minutes"`
	ErrorBudgetRemainingMinutes *float64        `json:"error_budget_remaining_minutes"`
	ErrorBudgetRemainingPercent *float64        `json:"error_budget_remaining_percent"`
	BurnRates                   []burnRateJSON  `json:"burn_rates"`
	Conditions                  []conditionJSON `json:"conditions"`
	LastEvaluatedAt             *string         `json:"last_evaluated_at"`
}

type burnRateJSON struct {
	Window string  `json:"window"`
	Rate   float64 `json:"rate"`
}

type conditionJSON struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	LastTransitionTime string `json:"last_transition_time"`
}

// sloStateName is the one-word state of an SLO: disabled, pending (not
// evaluated yet), budget_exhausted, burning_fast, burning_slow, breaching
// (SLI under target) or met.
func sloStateName(o *monv1.SLO) string {
	cond := func(t string) bool { return meta.IsStatusConditionTrue(o.Status.Conditions, t) }
	switch {
	case o.Spec.Enabled != nil && !*o.Spec.Enabled:
		return "disabled"
	case o.Status.CurrentSLI == nil:
		return "pending"
	case cond(monv1.SLOConditionBudgetExhausted):
		return "budget_exhausted"
	case cond(monv1.SLOConditionBurningFast):
		return "burning_fast"
	case cond(monv1.SLOConditionBurningSlow):
		return "burning_slow"
	case *o.Status.CurrentSLI < o.Spec.TargetPercentage:
		return "breaching"
	}
	return "met"
}

func sloState(o *monv1.SLO) *sloStateJSON {
	st := o.Status
	out := &sloStateJSON{ID: string(o.UID), TargetPercentage: o.Spec.TargetPercentage, SLIType: string(o.Spec.SLIType),
		WindowMinutes: o.Spec.WindowMinutes, IsEnabled: o.Spec.Enabled == nil || *o.Spec.Enabled, State: sloStateName(o),
		CurrentSLI: st.CurrentSLI, ErrorBudgetMinutes: st.ErrorBudgetMinutes, ErrorBudgetRemainingMinutes: st.ErrorBudgetRemainingMinutes,
		ErrorBudgetRemainingPercent: st.ErrorBudgetRemainingPercent, BurnRates: []burnRateJSON{}, Conditions: []conditionJSON{},
		LastEvaluatedAt: metaTimePtr(st.LastEvaluatedAt)}
	for _, b := range st.BurnRates {
		out.BurnRates = append(out.BurnRates, burnRateJSON{Window: b.Window, Rate: b.Rate})
	}
	for _, c := range st.Conditions {
		out.Conditions = append(out.Conditions, conditionJSON{Type: c.Type, Status: string(c.Status), Reason: c.Reason,
			Message: c.Message, LastTransitionTime: isoTime(c.LastTransitionTime.Time)})
	}
	return out
}

// monitorReliabilityJSON is the reliability report of one monitor.
type monitorReliabilityJSON struct {
	MonitorID          string            `json:"monitor_id"`
	Name               string            `json:"name"`
	CurrentStatus      string            `json:"current_status"`
	Uptime24h          *float64          `json:"uptime_24h"`
	Uptime7d           *float64          `json:"uptime_7d"`
	Uptime30d          *float64          `json:"uptime_30d"`
	Incidents30d       int               `json:"incidents_30d"`
	OpenIncident       bool              `json:"open_incident"`
	DowntimeSeconds30d int64             `json:"downtime_seconds_30d"`
	MTTRSeconds        *float64          `json:"mttr_seconds"`
	MTBFSeconds        *float64          `json:"mtbf_seconds"`
	HealthScore        *int              `json:"health_score"`
	Health             []healthComponent `json:"health_components"`
	SLO                *sloStateJSON     `json:"slo"`
	SLOTarget          any               `json:"slo_target,omitempty"`

	stats incidentStats
}

// monitorReliability builds the report of m from the store, its incidents of
// the window (and before) and its SLO (nil: none).
func (s *Server) monitorReliability(ctx context.Context, m *monv1.Monitor, incidents []store.Incident, slo *monv1.SLO, now time.Time) (*monitorReliabilityJSON, error) {
	out := &monitorReliabilityJSON{MonitorID: string(m.UID), Name: m.Spec.Name, CurrentStatus: string(m.Status.CurrentStatus)}
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
		v, err := s.opts.Store.Uptime(ctx, string(m.UID), now.Add(-u.d), now)
		if err != nil {
			return nil, err
		}
		if v != nil {
			r := round2(*v)
			v = &r
		}
		*u.dst = v
	}
	out.stats = incidentFigures(now.Add(-reliabilityWindow), now, incidents)
	out.Incidents30d, out.OpenIncident = out.stats.Count, out.stats.Open
	out.DowntimeSeconds30d = int64(out.stats.Downtime / time.Second)
	out.MTTRSeconds, out.MTBFSeconds = out.stats.mttr(), out.stats.mtbf()
	in := healthInput{Uptime30d: out.Uptime30d, Incidents: out.stats}
	if slo != nil {
		out.SLO = sloState(slo)
		if out.SLO.IsEnabled {
			in.BudgetRemaining = slo.Status.ErrorBudgetRemainingPercent
			in.BurningFast = meta.IsStatusConditionTrue(slo.Status.Conditions, monv1.SLOConditionBurningFast)
		}
	}
	out.HealthScore, out.Health = healthScore(in)
	return out, nil
}

// sloByMonitor indexes the live SLOs of ns by monitor name.
func (s *Server) sloByMonitor(ctx context.Context, ns string) (map[string]*monv1.SLO, []monv1.SLO, error) {
	var list monv1.SLOList
	if err := s.list(ctx, &list, ns); err != nil {
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
func (s *Server) reliabilityMonitor(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m, err := s.monitorByID(ctx, CallerFrom(ctx).Namespace, chi.URLParam(r, "monitorId"))
	if errors.Is(err, errNotFound) {
		writeNotFound(w, "Monitor")
		return
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	now := s.clock.Now()
	incidents, err := s.incidentsSince(ctx, m.Namespace, string(m.UID), now.Add(-2*reliabilityWindow))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	slos, _, err := s.sloByMonitor(ctx, m.Namespace)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out, err := s.monitorReliability(ctx, m, incidents, slos[m.Name], now)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if o := slos[m.Name]; o != nil {
		out.SLOTarget = sloObject(o, &objectUIDs{byName: map[string]string{m.Name: string(m.UID)}})
	}
	httpjson.Write(w, http.StatusOK, out)
}

// reliabilityOverview answers GET /reliability/overview: the workspace's
// figures and every monitor's report, least healthy first.
func (s *Server) reliabilityOverview(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	monitors, err := s.namespaceMonitors(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	slos, sloList, err := s.sloByMonitor(ctx, c.Namespace)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	now := s.clock.Now()
	all, err := s.incidentsSince(ctx, c.Namespace, "", now.Add(-2*reliabilityWindow))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	byMonitor := map[string][]store.Incident{}
	for _, inc := range all {
		byMonitor[inc.MonitorID] = append(byMonitor[inc.MonitorID], inc)
	}
	sum := summarize(monitors)
	reports := make([]*monitorReliabilityJSON, 0, len(monitors))
	var total incidentStats
	uptimes := [3]meanOf{}
	health := meanOf{}
	for i := range monitors {
		m := &monitors[i]
		rep, err := s.monitorReliability(ctx, m, byMonitor[string(m.UID)], slos[m.Name], now)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		reports = append(reports, rep)
		uptimes[0].add(rep.Uptime24h)
		uptimes[1].add(rep.Uptime7d)
		uptimes[2].add(rep.Uptime30d)
		if rep.HealthScore != nil {
			health.add(ptrTo(float64(*rep.HealthScore)))
		}
		if rep.Uptime30d != nil {
			total.WindowSpan += rep.stats.WindowSpan
		}
		total.Count += rep.stats.Count
		total.Resolved += rep.stats.Resolved
		total.RepairSum += rep.stats.RepairSum
		total.Downtime += rep.stats.Downtime
	}
	slices.SortStableFunc(reports, func(a, b *monitorReliabilityJSON) int {
		return healthOrder(a.HealthScore) - healthOrder(b.HealthScore)
	})
	sloCounts := map[string]int{"met": 0, "breaching": 0, "budget_exhausted": 0, "burning_fast": 0, "burning_slow": 0, "pending": 0, "disabled": 0}
	breaching := 0
	for i := range sloList {
		st := sloStateName(&sloList[i])
		sloCounts[st]++
		if st != "met" && st != "pending" && st != "disabled" {
			breaching++
		}
	}
	var healthScoreOut *int
	if v := health.mean(); v != nil {
		healthScoreOut = ptrTo(int(math.Round(*v)))
	}
	httpjson.Write(w, http.StatusOK, map[string]any{
		"generated_at":          isoTime(now),
		"monitors":              sum.Total,
		"counts":                sum.Counts,
		"open_incidents":        sum.OpenIncidents,
		"uptime_24h":            uptimes[0].mean(),
		"uptime_7d":             uptimes[1].mean(),
		"uptime_30d":            uptimes[2].mean(),
		"incidents_30d":         total.Count,
		"mttr_seconds":          total.mttr(),
		"mtbf_seconds":          total.mtbf(),
		"health_score":          healthScoreOut,
		"slo_targets":           len(sloList),
		"slo_targets_breaching": breaching,
		"slo_states":            sloCounts,
		"by_monitor":            reports,
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
	return ptrTo(round2(m.sum / float64(m.n)))
}
