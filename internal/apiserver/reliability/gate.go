package reliability

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	relmath "github.com/uptime-operator/uptime-operator/internal/reliability"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// The rollout gate: GET /monitors/:id/gate and GET
// /reliability/slo-targets/:id/gate answer whether a rollout may go on.
// The rule is relmath.Gate; this file reads its input (the monitor's open
// incident from the store, its SLO's evaluated status) and its options
// (the query).

// Bounds of the gate's query parameters.
const (
	gateMaxBurnRateMin = 0.1
	gateMaxBurnRateMax = 1000
)

// gateQuery documents the query parameters of both gate routes.
var gateQuery = []apidoc.Param{
	apidoc.Q("windows", apidoc.With(apidoc.Str(""), "default", strings.Join(relmath.DefaultGateWindows, ",")),
		"Comma-separated burn-rate windows, each of 5m, 30m, 1h, 6h (no repeats): the rollout stops when the burn rate exceeds max_burn_rate over every one of them."),
	apidoc.Q("max_burn_rate", apidoc.Bounds(apidoc.Number(""), gateMaxBurnRateMin, gateMaxBurnRateMax),
		"Burn rate to exceed over every window to stop; default the SLO's burn_rate_fast_threshold."),
	apidoc.Q("min_error_budget", apidoc.With(apidoc.Bounds(apidoc.Number(""), 0, 100), "default", 0),
		"Least error budget left, in percent, to go on; an exhausted budget always stops."),
}

func gateOp(summary string, feature bool) apidoc.Op {
	desc := "decision `go` or `stop` (and the same as the boolean `go`), with every rule applied in `reasons`: an open incident stops; " +
		"with an enabled SLO, so do an evaluation that is pending or older than 10 minutes, an error budget left below min_error_budget " +
		"(or none), and burn rates above max_burn_rate over every chosen window. The SLO figures are the SLO controller's (evaluated every minute). " +
		"See docs/gitops.md for Argo Rollouts and Flagger."
	if feature {
		desc += " Needs the SLO feature."
	}
	return apidoc.Op{Tag: "Reliability", Summary: summary, Desc: desc, Query: gateQuery, Resp: restapi.RolloutGate{}}
}

// parseGateOptions reads and validates the query of a gate request.
func parseGateOptions(r *http.Request) (relmath.GateOptions, []core.FieldError) {
	q := r.URL.Query()
	var opts relmath.GateOptions
	var errs []core.FieldError
	if v, ok := q["windows"]; ok {
		for _, w := range strings.Split(strings.Join(v, ","), ",") {
			w = strings.TrimSpace(w)
			if !relmath.ValidGateWindow(w) || slices.Contains(opts.Windows, w) {
				errs = append(errs, core.FieldErr("windows", "must be a comma-separated list of distinct windows of %s", strings.Join(relmath.GateWindows, ", ")))
				break
			}
			opts.Windows = append(opts.Windows, w)
		}
	}
	number := func(name string, lo, hi float64, dst *float64) {
		v := q.Get(name)
		if v == "" {
			return
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < lo || f > hi {
			errs = append(errs, core.FieldErr(name, "must be a number between %s and %s", strconv.FormatFloat(lo, 'f', -1, 64), strconv.FormatFloat(hi, 'f', -1, 64)))
			return
		}
		*dst = f
	}
	number("max_burn_rate", gateMaxBurnRateMin, gateMaxBurnRateMax, &opts.MaxBurnRate)
	number("min_error_budget", 0, 100, &opts.MinBudgetPercent)
	return opts, errs
}

// monitorGate answers GET /monitors/:id/gate: the gate of the monitor and
// its SLO, if it has one.
func (h *Handlers) monitorGate(w http.ResponseWriter, r *http.Request) {
	opts, errs := parseGateOptions(r)
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	m := h.d.PathSharedMonitor(w, r)
	if m == nil {
		return
	}
	slos, _, err := h.sloByMonitor(r.Context(), m.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	h.writeGate(w, r, m, slos[m.Name], opts)
}

// sloGate answers GET /reliability/slo-targets/:id/gate: the gate of the
// SLO and its monitor.
func (h *Handlers) sloGate(w http.ResponseWriter, r *http.Request) {
	opts, errs := parseGateOptions(r)
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	o := h.pathSLO(w, r)
	if o == nil {
		return
	}
	var m monv1.Monitor
	if err := h.d.Client.Get(r.Context(), client.ObjectKey{Namespace: o.Namespace, Name: o.Spec.MonitorRef.Name}, &m); err != nil || m.DeletionTimestamp != nil {
		// The SLO's monitor is gone: nothing to gate on.
		core.WriteNotFound(w, "Monitor")
		return
	}
	h.writeGate(w, r, &m, o, opts)
}

func (h *Handlers) writeGate(w http.ResponseWriter, r *http.Request, m *monv1.Monitor, slo *monv1.SLO, opts relmath.GateOptions) {
	out, err := h.gate(r.Context(), m, slo, opts)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, out)
}

// gate evaluates the gate of m and slo (nil: none).
func (h *Handlers) gate(ctx context.Context, m *monv1.Monitor, slo *monv1.SLO, opts relmath.GateOptions) (*restapi.RolloutGate, error) {
	now := h.d.Clock.Now()
	open, err := h.st.ListIncidents(ctx, store.IncidentQuery{Namespace: m.Namespace, MonitorID: string(m.UID), Status: store.IncidentOngoing, PageSize: 1})
	if err != nil {
		return nil, fmt.Errorf("list open incidents: %w", err)
	}
	in := relmath.GateInput{SLO: slo, Now: now}
	out := &restapi.RolloutGate{MonitorID: string(m.UID), MonitorName: m.Spec.Name, EvaluatedAt: core.ISOTime(now)}
	if len(open.Items) > 0 {
		inc := open.Items[0]
		in.OpenIncident = &relmath.GateIncident{ID: inc.ID, StartedAt: inc.StartedAt}
		out.OpenIncident, out.OpenIncidentID = true, core.StrPtr(inc.ID)
	}
	res := relmath.Gate(in, opts)
	out.Go, out.Decision = res.Go, "stop"
	if res.Go {
		out.Decision = "go"
	}
	out.Reasons = make([]restapi.GateReason, 0, len(res.Reasons))
	for _, reason := range res.Reasons {
		out.Reasons = append(out.Reasons, restapi.GateReason{Code: reason.Code, OK: reason.OK, Message: reason.Message})
	}
	if slo != nil {
		st := slo.Status
		g := &restapi.GateSLO{ID: string(slo.UID), Target: slo.Spec.TargetPercentage, SLIType: string(slo.Spec.SLIType),
			WindowMinutes: slo.Spec.WindowMinutes, IsEnabled: slo.Spec.Enabled == nil || *slo.Spec.Enabled, State: relmath.SLOState(slo),
			CurrentSLI: st.CurrentSLI, ErrorBudgetRemaining: st.ErrorBudgetRemainingPercent, ErrorBudgetRemainingMinutes: st.ErrorBudgetRemainingMinutes,
			MinErrorBudgetRemaining: opts.MinBudgetPercent, BurnRateFast: res.BurnRateFast, BurnRateSlow: res.BurnRateSlow,
			BurnRateFastThreshold: slo.Spec.BurnRateFastThreshold, BurnRateSlowThreshold: slo.Spec.BurnRateSlowThreshold,
			MaxBurnRate: res.MaxBurnRate, Windows: make([]restapi.GateWindow, 0, len(res.Windows)),
			EvaluatedAt: core.MetaTimePtr(st.LastEvaluatedAt)}
		if g.MaxBurnRate == 0 {
			g.MaxBurnRate = slo.Spec.BurnRateFastThreshold
		}
		for _, gw := range res.Windows {
			g.Windows = append(g.Windows, restapi.GateWindow{Window: gw.Window, BurnRate: gw.BurnRate, Exceeded: gw.Exceeded})
		}
		out.SLO = g
	}
	return out, nil
}
