package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// TestRegionUseChanged: a Monitor's live-state status writes do not make
// the region controller count every Monitor again; pausing, deleting or
// moving a monitor does.
func TestRegionUseChanged(t *testing.T) {
	base := &monv1.Monitor{Spec: monv1.MonitorSpec{Regions: []string{"eu"}}}
	for _, tc := range []struct {
		name   string
		change func(m *monv1.Monitor)
		want   bool
	}{
		{"live state", func(m *monv1.Monitor) { m.Status.LastStatus = "up"; m.Status.Uptime24h = "100.00%" }, false},
		{"effective regions written as the spec says", func(m *monv1.Monitor) { m.Status.EffectiveRegions = []string{"eu"} }, false},
		{"paused", func(m *monv1.Monitor) { m.Spec.Paused = true }, true},
		{"deleted", func(m *monv1.Monitor) { now := metav1.Now(); m.DeletionTimestamp = &now }, true},
		{"moved", func(m *monv1.Monitor) { m.Spec.Regions = []string{"us"} }, true},
	} {
		n := base.DeepCopy()
		tc.change(n)
		if got := (regionUseChanged{}).Update(event.UpdateEvent{ObjectOld: base, ObjectNew: n}); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
