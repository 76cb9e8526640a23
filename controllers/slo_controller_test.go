package controllers

import (
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestComputeBudget(t *testing.T) {
	month := 30 * 24 * time.Hour
	for _, tc := range []struct {
		name                  string
		target                float64
		good, total           int64
		wantSLI               *float64
		wantTotal, wantRemain float64
		wantPct               float64
	}{
		{"no data keeps the whole budget", 99.9, 0, 0, nil, 43.2, 43.2, 100},
		{"perfect", 99.9, 1000, 1000, f(100), 43.2, 43.2, 100},
		{"half spent", 99.9, 19995, 20000, f(99.975), 43.2, 32.4, 75},
		{"overspent", 99, 90, 100, f(90), 432, -3888, -900},
	} {
		b := ComputeBudget(tc.target, month, tc.good, tc.total)
		if (b.SLI == nil) != (tc.wantSLI == nil) || (b.SLI != nil && *b.SLI != *tc.wantSLI) {
			t.Errorf("%s: SLI = %v, want %v", tc.name, deref(b.SLI), deref(tc.wantSLI))
		}
		if b.TotalMinutes != tc.wantTotal || b.RemainingMinutes != tc.wantRemain || b.RemainingPercent != tc.wantPct {
			t.Errorf("%s: budget = %+v, want total %v remaining %v (%v%%)", tc.name, b, tc.wantTotal, tc.wantRemain, tc.wantPct)
		}
	}
}

func TestBurnAlerts(t *testing.T) {
	if got := BurnRate(99.9, 990, 1000); got < 9.99 || got > 10.01 {
		t.Errorf("BurnRate = %v, want 10", got)
	}
	if BurnRate(99.9, 0, 0) != 0 {
		t.Error("no events must not burn")
	}
	for _, tc := range []struct {
		name       string
		rates      map[string]float64
		fast, slow bool
	}{
		{"quiet", map[string]float64{"5m": 0, "30m": 0, "1h": 0, "6h": 0}, false, false},
		{"fast burn", map[string]float64{"5m": 20, "30m": 20, "1h": 15, "6h": 3}, true, false},
		{"spike already over", map[string]float64{"5m": 0, "30m": 10, "1h": 15, "6h": 7}, false, true},
		{"slow burn", map[string]float64{"5m": 7, "30m": 7, "1h": 7, "6h": 7}, false, true},
	} {
		fast, slow := BurnAlerts(tc.rates, 14.4, 6)
		if fast != tc.fast || slow != tc.slow {
			t.Errorf("%s: fast/slow = %v/%v, want %v/%v", tc.name, fast, slow, tc.fast, tc.slow)
		}
	}
}

func f(v float64) *float64 { return &v }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestSetSLOBurnConditions(t *testing.T) {
	for _, tc := range []struct {
		name                           string
		fast, slow, exhausted          bool
		wantFast, wantSlow, wantBudget string
	}{
		{"quiet", false, false, false, monv1.ReasonBelowThreshold, monv1.ReasonBelowThreshold, monv1.ReasonBudgetLeft},
		{"fast burn", true, false, false, monv1.ReasonFastBurn, monv1.ReasonBelowThreshold, monv1.ReasonBudgetLeft},
		{"slow burn, budget gone", false, true, true, monv1.ReasonBelowThreshold, monv1.ReasonSlowBurn, monv1.ReasonExhausted},
	} {
		slo := &monv1.SLO{Spec: monv1.SLOSpec{BurnRateFastThreshold: 14.4, BurnRateSlowThreshold: 6}}
		setSLOBurnConditions(slo, map[string]float64{"1h": 20, "5m": 20}, tc.fast, tc.slow, tc.exhausted, Budget{TotalMinutes: 43.2})
		for typ, want := range map[string]struct {
			on     bool
			reason string
		}{
			monv1.SLOConditionBurningFast:     {tc.fast, tc.wantFast},
			monv1.SLOConditionBurningSlow:     {tc.slow, tc.wantSlow},
			monv1.SLOConditionBudgetExhausted: {tc.exhausted, tc.wantBudget},
		} {
			c := meta.FindStatusCondition(slo.Status.Conditions, typ)
			if c == nil || (c.Status == metav1.ConditionTrue) != want.on || c.Reason != want.reason {
				t.Errorf("%s: %s = %+v, want %v/%s", tc.name, typ, c, want.on, want.reason)
			}
		}
	}
}
