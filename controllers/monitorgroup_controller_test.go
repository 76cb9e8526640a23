package controllers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/controllers"
	"github.com/uptime-operator/uptime-operator/internal/manager"
)

// TestMonitorGroupStatus runs the reconciler on a real API server: the
// group's Monitors and Down columns follow its members as they join, open
// an incident, move to another group and go away.
func TestMonitorGroupStatus(t *testing.T) {
	cfg, k8s, ns := withoutManager(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: manager.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	must(t, err)
	must(t, (&controllers.MonitorGroupReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr))
	go func() { _ = mgr.Start(ctx) }()

	for _, name := range []string{"shop", "ops"} {
		must(t, k8s.Create(ctx, &monv1.MonitorGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}))
	}
	monitor := func(name, group string) *monv1.Monitor {
		m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: monv1.MonitorSpec{URL: "https://example.com/" + name, Regions: []string{"eu-west"}}}
		if group != "" {
			m.Spec.GroupRef = &monv1.LocalObjectReference{Name: group}
		}
		must(t, k8s.Create(ctx, m))
		return m
	}
	cart, pay := monitor("cart", "shop"), monitor("pay", "shop")
	monitor("loner", "")
	expect := func(step, group string, monitors, down int32) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			var g monv1.MonitorGroup
			must(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: group}, &g))
			err := fmt.Errorf("%s: group %s has monitors=%d down=%d, want %d and %d (%+v)", step, group, g.Status.Monitors, g.Status.Down, monitors, down, g.Status.Conditions)
			if g.Status.Monitors == monitors && g.Status.Down == down && len(g.Status.Conditions) == 1 && g.Status.ObservedGeneration == g.Generation {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	expect("two members", "shop", 2, 0)
	expect("no members", "ops", 0, 0)

	// The engine records an open incident in the monitor's status.
	patch := client.MergeFrom(cart.DeepCopy())
	cart.Status.OpenIncident = &monv1.IncidentRef{ID: "0b7c3c1e-9a51-4e7e-8f0e-5d2f1c0a6b11", StartedAt: metav1.Now()}
	must(t, k8s.Status().Patch(ctx, cart, patch))
	expect("an incident opens", "shop", 2, 1)

	patch = client.MergeFrom(pay.DeepCopy())
	pay.Spec.GroupRef.Name = "ops"
	must(t, k8s.Patch(ctx, pay, patch))
	expect("a member moves out", "shop", 1, 1)
	expect("a member moves in", "ops", 1, 0)

	must(t, k8s.Delete(ctx, cart))
	expect("the down member is deleted", "shop", 0, 0)
}
