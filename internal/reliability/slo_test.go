package reliability

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func TestSLOState(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cond := func(typ string) []metav1.Condition {
		return []metav1.Condition{{Type: typ, Status: metav1.ConditionTrue}}
	}
	off := false
	for _, tc := range []struct {
		name string
		spec monv1.SLOSpec
		st   monv1.SLOStatus
		want string
	}{
		{"pending", monv1.SLOSpec{TargetPercentage: 99}, monv1.SLOStatus{}, "pending"},
		{"disabled", monv1.SLOSpec{TargetPercentage: 99, Enabled: &off}, monv1.SLOStatus{CurrentSLI: f(50)}, "disabled"},
		{"met", monv1.SLOSpec{TargetPercentage: 99}, monv1.SLOStatus{CurrentSLI: f(99.5)}, "met"},
		{"breaching", monv1.SLOSpec{TargetPercentage: 99}, monv1.SLOStatus{CurrentSLI: f(98)}, "breaching"},
		{"exhausted", monv1.SLOSpec{TargetPercentage: 99}, monv1.SLOStatus{CurrentSLI: f(98), Conditions: cond(monv1.SLOConditionBudgetExhausted)}, "budget_exhausted"},
		{"fast", monv1.SLOSpec{TargetPercentage: 99}, monv1.SLOStatus{CurrentSLI: f(99.5), Conditions: cond(monv1.SLOConditionBurningFast)}, "burning_fast"},
		{"slow", monv1.SLOSpec{TargetPercentage: 99}, monv1.SLOStatus{CurrentSLI: f(99.5), Conditions: cond(monv1.SLOConditionBurningSlow)}, "burning_slow"},
	} {
		if got := SLOState(&monv1.SLO{Spec: tc.spec, Status: tc.st}); got != tc.want {
			t.Errorf("%s: SLOState = %q, want %q", tc.name, got, tc.want)
		}
	}
}
