package probeserver

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// TestAssignmentsMayChange: live-state status writes do not wake the
// agents' long polls; spec, deletion and effective regions or interval do.
func TestAssignmentsMayChange(t *testing.T) {
	base := &monv1.Monitor{}
	base.Generation = 3
	base.Status.EffectiveRegions = []string{"eu"}
	base.Status.EffectiveIntervalSeconds = 60
	for _, tc := range []struct {
		name   string
		change func(m *monv1.Monitor)
		want   bool
	}{
		{"live state only", func(m *monv1.Monitor) { m.Status.LastStatus = "up"; m.Status.Uptime24h = "100.00%" }, false},
		{"labels only", func(m *monv1.Monitor) { m.Labels = map[string]string{"a": "b"} }, false},
		{"spec (generation)", func(m *monv1.Monitor) { m.Generation++ }, true},
		{"deleted", func(m *monv1.Monitor) { now := metav1.Now(); m.DeletionTimestamp = &now }, true},
		{"effective regions", func(m *monv1.Monitor) { m.Status.EffectiveRegions = []string{"eu", "us"} }, true},
		{"effective interval", func(m *monv1.Monitor) { m.Status.EffectiveIntervalSeconds = 300 }, true},
	} {
		n := base.DeepCopy()
		tc.change(n)
		if got := assignmentsMayChange(base, n); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	// A first status write that names the regions and interval the spec
	// names changes no assignment.
	unwritten := &monv1.Monitor{Spec: monv1.MonitorSpec{Regions: []string{"eu"}, IntervalSeconds: 60}}
	written := unwritten.DeepCopy()
	written.Status.EffectiveRegions, written.Status.EffectiveIntervalSeconds = []string{"eu"}, 60
	if assignmentsMayChange(unwritten, written) {
		t.Error("a first status write naming the spec's regions woke the long polls")
	}
	region, regionStatus := &monv1.ProbeRegion{}, &monv1.ProbeRegion{}
	regionStatus.Status.ObservedGeneration = 1
	if assignmentsMayChange(region, regionStatus) {
		t.Error("a region's status write woke the long polls")
	}
}
