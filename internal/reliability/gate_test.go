package reliability

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func TestGate(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	off := false
	slo := func(left float64, evaluated time.Time, rates ...float64) *monv1.SLO {
		o := &monv1.SLO{Spec: monv1.SLOSpec{TargetPercentage: 99.9, BurnRateFastThreshold: 14.4, BurnRateSlowThreshold: 6}}
		o.Status.ErrorBudgetRemainingPercent = &left
		at := metav1.NewTime(evaluated)
		o.Status.LastEvaluatedAt = &at
		for i, w := range GateWindows {
			o.Status.BurnRates = append(o.Status.BurnRates, monv1.BurnRate{Window: w, Rate: rates[i]})
		}
		return o
	}
	incident := &GateIncident{ID: "inc-1", StartedAt: now.Add(-time.Minute)}
	for _, tc := range []struct {
		name string
		in   GateInput
		opts GateOptions
		want bool
		// stop is the code of the reason that stops (empty when go).
		stop string
	}{
		{"no SLO, no incident", GateInput{}, GateOptions{}, true, ""},
		{"no SLO, open incident", GateInput{OpenIncident: incident}, GateOptions{}, false, GateOpenIncident},
		{"disabled SLO", GateInput{SLO: func() *monv1.SLO { o := slo(-50, now, 100, 100, 100, 100); o.Spec.Enabled = &off; return o }()}, GateOptions{}, true, ""},
		{"pending SLO", GateInput{SLO: &monv1.SLO{Spec: monv1.SLOSpec{BurnRateFastThreshold: 14.4}}}, GateOptions{}, false, GateSLOPending},
		{"stale SLO", GateInput{SLO: slo(90, now.Add(-time.Hour), 0, 0, 0, 0)}, GateOptions{}, false, GateSLOStale},
		{"healthy", GateInput{SLO: slo(90, now, 1, 1, 1, 1)}, GateOptions{}, true, ""},
		{"healthy SLO, open incident", GateInput{SLO: slo(90, now, 0, 0, 0, 0), OpenIncident: incident}, GateOptions{}, false, GateOpenIncident},
		{"budget exhausted", GateInput{SLO: slo(0, now, 0, 0, 0, 0)}, GateOptions{}, false, GateErrorBudget},
		{"budget under the minimum", GateInput{SLO: slo(20, now, 0, 0, 0, 0)}, GateOptions{MinBudgetPercent: 25}, false, GateErrorBudget},
		{"budget at the minimum", GateInput{SLO: slo(25, now, 0, 0, 0, 0)}, GateOptions{MinBudgetPercent: 25}, true, ""},
		// 5m 20, 30m 2, 1h 15, 6h 1: the fast pair (1h, 5m) exceeds 14.4.
		{"fast burn", GateInput{SLO: slo(80, now, 20, 2, 15, 1)}, GateOptions{}, false, GateBurnRate},
		// Only the 5m window burns: the 1h window does not confirm it.
		{"short blip", GateInput{SLO: slo(80, now, 20, 2, 1, 1)}, GateOptions{}, true, ""},
		{"one chosen window", GateInput{SLO: slo(80, now, 20, 2, 1, 1)}, GateOptions{Windows: []string{"5m"}}, false, GateBurnRate},
		{"own maximum", GateInput{SLO: slo(80, now, 3, 3, 3, 3)}, GateOptions{Windows: []string{"30m", "6h"}, MaxBurnRate: 2}, false, GateBurnRate},
		{"at the maximum", GateInput{SLO: slo(80, now, 2, 2, 2, 2)}, GateOptions{Windows: []string{"30m", "6h"}, MaxBurnRate: 2}, true, ""},
	} {
		tc.in.Now = now
		got := Gate(tc.in, tc.opts)
		if got.Go != tc.want {
			t.Errorf("%s: Go = %v, want %v (%+v)", tc.name, got.Go, tc.want, got.Reasons)
			continue
		}
		var stops []string
		for _, r := range got.Reasons {
			if !r.OK {
				stops = append(stops, r.Code)
			}
			if r.Message == "" {
				t.Errorf("%s: reason %s without a message", tc.name, r.Code)
			}
		}
		if tc.stop == "" && len(stops) > 0 || tc.stop != "" && (len(stops) != 1 || stops[0] != tc.stop) {
			t.Errorf("%s: stopping reasons %v, want [%s]", tc.name, stops, tc.stop)
		}
	}

	// The alert pairs' rates: the lower rate of each pair.
	got := Gate(GateInput{SLO: slo(80, now, 20, 2, 15, 1), Now: now}, GateOptions{})
	if got.BurnRateFast == nil || *got.BurnRateFast != 15 || got.BurnRateSlow == nil || *got.BurnRateSlow != 1 || got.MaxBurnRate != 14.4 {
		t.Errorf("pairs: fast %v slow %v max %v", got.BurnRateFast, got.BurnRateSlow, got.MaxBurnRate)
	}
	if len(got.Windows) != 2 || got.Windows[0].Window != "1h" || !got.Windows[0].Exceeded || got.Windows[1].BurnRate != 20 {
		t.Errorf("windows: %+v", got.Windows)
	}
}
