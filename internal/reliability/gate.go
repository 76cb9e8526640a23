package reliability

import (
	"fmt"
	"slices"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// Rollout gate: whether a monitor's open incident and its SLO's error
// budget and burn rates allow a rollout to go on. The gate computes no SLI
// of its own: it reads what the SLO controller wrote into the SLO's status
// (the budget and the burn rates of GateWindows), so the gate, the SLO's
// conditions and its alerts always agree. docs/gitops.md documents the rule.

// GateWindows are the burn-rate windows the SLO controller evaluates
// (status.burnRates), the only windows a gate can name.
var GateWindows = []string{"5m", "30m", "1h", "6h"}

// DefaultGateWindows are the fast burn-rate alert's windows: a gate with
// the defaults stops exactly when the SLO's BurningFast alert fires.
var DefaultGateWindows = []string{"1h", "5m"}

// GateStaleAfter is how old an SLO evaluation may be before the gate stops
// on it: the controller re-evaluates every minute, so an older status means
// it is not running and the numbers say nothing about the rollout.
const GateStaleAfter = 10 * time.Minute

// Gate reason codes.
const (
	GateOpenIncident = "open_incident"
	GateErrorBudget  = "error_budget"
	GateBurnRate     = "burn_rate"
	GateNoSLO        = "no_slo"
	GateSLODisabled  = "slo_disabled"
	GateSLOPending   = "slo_pending"
	GateSLOStale     = "slo_stale"
)

// GateOptions are the caller's thresholds.
type GateOptions struct {
	// Windows are the burn-rate windows, each one of GateWindows; empty is
	// DefaultGateWindows.
	Windows []string
	// MaxBurnRate is the burn rate that every window must exceed to stop;
	// zero is the SLO's burnRateFastThreshold.
	MaxBurnRate float64
	// MinBudgetPercent is the least error budget, in percent of the
	// window's budget, that must remain to go on.
	MinBudgetPercent float64
}

// GateInput is what a gate decides on.
type GateInput struct {
	// OpenIncident is the monitor's unresolved incident, if any.
	OpenIncident *GateIncident
	// SLO is the monitor's SLO; nil when it has none.
	SLO *monv1.SLO
	Now time.Time
}

// GateIncident is the open incident the gate reports.
type GateIncident struct {
	ID        string
	StartedAt time.Time
}

// GateReason is one rule the gate applied: OK false means it stops the
// rollout.
type GateReason struct {
	Code    string
	OK      bool
	Message string
}

// GateWindow is one window's burn rate against the maximum.
type GateWindow struct {
	Window   string
	BurnRate float64
	Exceeded bool
}

// GateResult is the decision with its reasons.
type GateResult struct {
	Go      bool
	Reasons []GateReason
	// Windows are the chosen windows' burn rates (none without an
	// evaluated, enabled SLO).
	Windows []GateWindow
	// MaxBurnRate is the maximum applied (the option or the SLO's fast
	// threshold).
	MaxBurnRate float64
	// BurnRateFast and BurnRateSlow are the burn rates of the SLO's two
	// multi-window alerts: the lower rate of the alert's pair of windows
	// (1h and 5m; 6h and 30m), so each exceeds the alert's threshold
	// exactly when the alert fires.
	BurnRateFast, BurnRateSlow *float64
}

// Gate applies the rules in order and collects every reason:
//   - an open incident stops;
//   - without an SLO (or with a disabled one) nothing else applies;
//   - an SLO not evaluated yet, or last evaluated more than GateStaleAfter
//     ago, stops;
//   - an error budget left below MinBudgetPercent, or none left, stops;
//   - burn rates above MaxBurnRate over every chosen window stop (the
//     multi-window rule of the SLO's alerts: the short window confirms the
//     long one is still burning).
func Gate(in GateInput, opts GateOptions) GateResult {
	out := GateResult{Go: true}
	add := func(code string, ok bool, format string, args ...any) {
		out.Reasons = append(out.Reasons, GateReason{Code: code, OK: ok, Message: fmt.Sprintf(format, args...)})
		out.Go = out.Go && ok
	}
	if in.OpenIncident != nil {
		add(GateOpenIncident, false, "incident %s is open since %s", in.OpenIncident.ID, in.OpenIncident.StartedAt.UTC().Format(time.RFC3339))
	} else {
		add(GateOpenIncident, true, "no open incident")
	}
	slo := in.SLO
	switch {
	case slo == nil:
		add(GateNoSLO, true, "the monitor has no SLO; only an open incident stops")
		return out
	case slo.Spec.Enabled != nil && !*slo.Spec.Enabled:
		add(GateSLODisabled, true, "the SLO's evaluation is disabled; only an open incident stops")
		return out
	}
	out.MaxBurnRate = opts.MaxBurnRate
	if out.MaxBurnRate == 0 {
		out.MaxBurnRate = slo.Spec.BurnRateFastThreshold
	}
	st := slo.Status
	if st.LastEvaluatedAt == nil || st.ErrorBudgetRemainingPercent == nil {
		add(GateSLOPending, false, "the SLO has not been evaluated yet")
		return out
	}
	if age := in.Now.Sub(st.LastEvaluatedAt.Time); age > GateStaleAfter {
		add(GateSLOStale, false, "the SLO was last evaluated %s ago (more than %s): is the manager running?", age.Truncate(time.Second), GateStaleAfter)
	}
	left := *st.ErrorBudgetRemainingPercent
	switch {
	case left <= 0:
		add(GateErrorBudget, false, "the error budget is exhausted (%.2f%% left)", left)
	case left < opts.MinBudgetPercent:
		add(GateErrorBudget, false, "%.2f%% of the error budget is left, less than the minimum %.2f%%", left, opts.MinBudgetPercent)
	default:
		add(GateErrorBudget, true, "%.2f%% of the error budget is left (minimum %.2f%%)", left, opts.MinBudgetPercent)
	}
	rates := map[string]float64{}
	for _, b := range st.BurnRates {
		rates[b.Window] = b.Rate
	}
	pair := func(a, b string) *float64 {
		ra, oka := rates[a]
		rb, okb := rates[b]
		if !oka || !okb {
			return nil
		}
		v := min(ra, rb)
		return &v
	}
	out.BurnRateFast, out.BurnRateSlow = pair("1h", "5m"), pair("6h", "30m")
	windows := opts.Windows
	if len(windows) == 0 {
		windows = DefaultGateWindows
	}
	exceeded := 0
	for _, w := range windows {
		r := rates[w]
		gw := GateWindow{Window: w, BurnRate: r, Exceeded: r > out.MaxBurnRate}
		if gw.Exceeded {
			exceeded++
		}
		out.Windows = append(out.Windows, gw)
	}
	names := fmt.Sprint(windows)
	if exceeded == len(windows) {
		add(GateBurnRate, false, "the burn rate exceeds %.2f over every window %s: %s", out.MaxBurnRate, names, windowRates(out.Windows))
	} else {
		add(GateBurnRate, true, "the burn rate is at most %.2f over at least one window of %s: %s", out.MaxBurnRate, names, windowRates(out.Windows))
	}
	return out
}

func windowRates(ws []GateWindow) string {
	s := ""
	for i, w := range ws {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %.2f", w.Window, w.BurnRate)
	}
	return s
}

// ValidGateWindow tells whether w is one of GateWindows.
func ValidGateWindow(w string) bool { return slices.Contains(GateWindows, w) }
