package plans

import (
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func TestIntervals(t *testing.T) {
	for _, tc := range []struct {
		min, wantMin, wantDefault int32
	}{
		{0, 15, 120},
		{60, 60, 120},
		{300, 300, 300},
	} {
		p := &monv1.Plan{Spec: monv1.PlanSpec{Limits: monv1.PlanLimits{MinIntervalSeconds: tc.min}}}
		if got := MinIntervalSeconds(p); got != tc.wantMin {
			t.Errorf("MinIntervalSeconds(min=%d) = %d, want %d", tc.min, got, tc.wantMin)
		}
		if got := DefaultIntervalSeconds(p); got != tc.wantDefault {
			t.Errorf("DefaultIntervalSeconds(min=%d) = %d, want %d", tc.min, got, tc.wantDefault)
		}
	}
}

func TestDefaultRegions(t *testing.T) {
	available := []string{"eu-1", "us-1", "us-2"}
	for _, tc := range []struct {
		name string
		spec monv1.PlanSpec
		want []string
	}{
		{"all allowed", monv1.PlanSpec{}, []string{"eu-1", "us-1", "us-2"}},
		{"restricted", monv1.PlanSpec{Regions: []string{"us-1", "us-2"}}, []string{"us-1", "us-2"}},
		{"capped", monv1.PlanSpec{Limits: monv1.PlanLimits{ProbeLocations: 2}}, []string{"eu-1", "us-1"}},
		{"explicit default", monv1.PlanSpec{DefaultRegions: []string{"us-2"}}, []string{"us-2"}},
	} {
		got := DefaultRegions(&monv1.Plan{Spec: tc.spec}, available)
		if len(got) != len(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
			}
		}
	}
	if !HasFeature(Unlimited(), monv1.FeatureWhiteLabel) {
		t.Error("the unlimited plan must grant every feature")
	}
}
