package reliability

import (
	"k8s.io/apimachinery/pkg/api/meta"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// SLO states, the one-word summary of an SLO's evaluated status.
const (
	SLODisabled        = "disabled"
	SLOPending         = "pending"
	SLOBudgetExhausted = "budget_exhausted"
	SLOBurningFast     = "burning_fast"
	SLOBurningSlow     = "burning_slow"
	SLOBreaching       = "breaching"
	SLOMet             = "met"
)

// SLOState is the state of o, the first that applies: disabled, pending
// (not evaluated yet), budget_exhausted, burning_fast, burning_slow,
// breaching (SLI under target) or met.
func SLOState(o *monv1.SLO) string {
	cond := func(t string) bool { return meta.IsStatusConditionTrue(o.Status.Conditions, t) }
	switch {
	case o.Spec.Enabled != nil && !*o.Spec.Enabled:
		return SLODisabled
	case o.Status.CurrentSLI == nil:
		return SLOPending
	case cond(monv1.SLOConditionBudgetExhausted):
		return SLOBudgetExhausted
	case cond(monv1.SLOConditionBurningFast):
		return SLOBurningFast
	case cond(monv1.SLOConditionBurningSlow):
		return SLOBurningSlow
	case *o.Status.CurrentSLI < o.Spec.TargetPercentage:
		return SLOBreaching
	}
	return SLOMet
}

// SLOHealth fills the error budget part of a health score input from o:
// only an enabled SLO counts, and only once evaluated.
func SLOHealth(in *HealthInput, o *monv1.SLO) {
	if o == nil || (o.Spec.Enabled != nil && !*o.Spec.Enabled) {
		return
	}
	in.BudgetRemaining = o.Status.ErrorBudgetRemainingPercent
	in.BurningFast = meta.IsStatusConditionTrue(o.Status.Conditions, monv1.SLOConditionBurningFast)
}
