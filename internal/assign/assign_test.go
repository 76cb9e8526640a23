package assign_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/assign"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// TestForRegionBeforeStatus: a Monitor that names no regions is assigned
// to its plan's default regions while its status is still empty (the
// Monitor controller's writes are paced and nothing waits for them), and to
// the regions its status names once written.
func TestForRegionBeforeStatus(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = monv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{monv1.PlanLabel: "pro"}}},
		&monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "pro"}, Spec: monv1.PlanSpec{DefaultRegions: []string{"eu"}}},
		&monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "eu"}},
		&monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "us"}},
	).Build()
	fresh := monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "team", UID: "a"},
		Spec: monv1.MonitorSpec{Type: monv1.MonitorHTTP, URL: "https://example.com/", IntervalSeconds: 60}}
	written := *fresh.DeepCopy()
	written.Name, written.UID = "written", "b"
	written.Status.EffectiveRegions = []string{"us"}
	monitors := []monv1.Monitor{fresh, written}
	ctx := context.Background()
	ids := func(as []probeapi.Assignment) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.ID+"@"+a.Regions[0])
		}
		return out
	}
	resolver := &monitor.RegionResolver{Reader: c, Plans: &plans.Resolver{Reader: c}}
	if got := ids(assign.ForRegion(ctx, nil, monitors, "eu", resolver, nil)); !slices.Equal(got, []string{"a@eu"}) {
		t.Errorf("eu assigned %v, want the monitor without status, from its plan's default", got)
	}
	if got := ids(assign.ForRegion(ctx, nil, monitors, "us", resolver, nil)); !slices.Equal(got, []string{"b@us"}) {
		t.Errorf("us assigned %v, want the monitor whose status names us", got)
	}
}
