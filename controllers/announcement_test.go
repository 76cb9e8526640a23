package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/controllers"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// withoutManager stops the package's manager and takes the admission
// webhooks away for the test (testenv.Env.WithoutManager): kube-apiserver
// with the CRDs only, so the reconciler under test is the only writer of
// the objects' status. It returns the control plane's configuration, a
// client and a namespace of the test's own.
func withoutManager(t *testing.T) (*rest.Config, client.WithWatch, string) {
	t.Helper()
	env := testenv.Use(t, env)
	ns := env.Namespace(t, nil)
	env.WithoutManager(t)
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return env.Config, c, ns
}

// failFirstStatusPatch wraps c so that its first status patch fails, as a
// conflict or a kube-apiserver restart would make it.
func failFirstStatusPatch(c client.WithWatch) client.Client {
	var failed atomic.Bool
	return interceptor.NewClient(c, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if sub == "status" && failed.CompareAndSwap(false, true) {
				return errors.New("injected: status patch failed")
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}

// randomIDAlerts builds one event per announcement with a fresh id, as the
// alerting router does.
type randomIDAlerts struct{}

func (randomIDAlerts) SLOEvents(_ context.Context, kind string, slo *monv1.SLO, _ *monv1.Monitor) ([]store.OutboxEvent, error) {
	return []store.OutboxEvent{{ID: uuid.NewString(), Namespace: slo.Namespace, Kind: kind, Channels: []string{"pager"}}}, nil
}

func (randomIDAlerts) MaintenanceEvents(_ context.Context, kind string, w *monv1.MaintenanceWindow, _, _ time.Time) ([]store.OutboxEvent, error) {
	return []store.OutboxEvent{{ID: uuid.NewString(), Namespace: w.Namespace, Kind: kind, Channels: []string{"pager"}}}, nil
}

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "uptime.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// announced counts the deliveries of each event kind.
func announced(t *testing.T, st store.Store) map[string]int {
	t.Helper()
	ds, err := st.ListDeliveries(context.Background(), store.DeliveryQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, d := range ds {
		out[d.Kind]++
	}
	return out
}

// TestSLOAlertsOnceWhenTheStatusPatchFails: the first reconcile sees the
// SLO start burning, enqueues its alerts, and fails to record that in
// status; the retry sees the same start again and must not send again.
func TestSLOAlertsOnceWhenTheStatusPatchFails(t *testing.T) {
	_, k8s, ns := withoutManager(t)
	ctx := context.Background()
	st := openStore(t)
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: monv1.MonitorSpec{URL: "https://example.com/", Regions: []string{"eu-west"}}}
	must(t, k8s.Create(ctx, m))
	slo := &monv1.SLO{ObjectMeta: metav1.ObjectMeta{Name: "shop-availability", Namespace: ns},
		Spec: monv1.SLOSpec{MonitorRef: monv1.LocalObjectReference{Name: "shop"}, TargetPercentage: 99.9, WindowMinutes: 60,
			BurnRateFastThreshold: 14.4, BurnRateSlowThreshold: 6}}
	must(t, k8s.Create(ctx, slo))

	// Every check of the last hour failed: fast burn, slow burn, budget gone.
	now := time.Now().UTC().Truncate(time.Second)
	var checks []store.Check
	for i := range 60 {
		checks = append(checks, store.Check{ID: uuid.NewString(), MonitorID: string(m.UID), Namespace: ns, Region: "eu-west",
			CheckedAt: now.Add(-time.Duration(i) * time.Minute), Status: store.StatusDown})
	}
	_, err := st.InsertChecks(ctx, checks)
	must(t, err)

	r := &controllers.SLOReconciler{Client: failFirstStatusPatch(k8s), Store: st, Alerts: randomIDAlerts{}, Events: st,
		Now: func() time.Time { return now.Add(time.Second) }}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: slo.Name}}
	if _, err := r.Reconcile(ctx, req); err == nil {
		t.Fatal("the first reconcile succeeded although its status patch failed")
	}
	for i := range 2 {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatalf("reconcile %d: %v", i+2, err)
		}
	}
	want := map[string]int{alertevent.SLOBurningFast: 1, alertevent.SLOBurningSlow: 1, alertevent.SLOBudgetExhausted: 1}
	if got := announced(t, st); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("deliveries per kind = %v, want each alert once: %v", got, want)
	}
	must(t, k8s.Get(ctx, req.NamespacedName, slo))
	for _, c := range []string{monv1.SLOConditionBurningFast, monv1.SLOConditionBurningSlow, monv1.SLOConditionBudgetExhausted} {
		if !conditionTrue(slo.Status.Conditions, c) {
			t.Errorf("condition %s is not True after the retry: %+v", c, slo.Status.Conditions)
		}
	}
}

// TestMaintenanceAnnouncedOnceWhenTheStatusPatchFails: the same for the
// start of a maintenance window, and its end is still announced.
func TestMaintenanceAnnouncedOnceWhenTheStatusPatchFails(t *testing.T) {
	_, k8s, ns := withoutManager(t)
	ctx := context.Background()
	st := openStore(t)
	now := time.Now().UTC().Truncate(time.Second)
	w := &monv1.MaintenanceWindow{ObjectMeta: metav1.ObjectMeta{Name: "db-upgrade", Namespace: ns},
		Spec: monv1.MaintenanceWindowSpec{Title: "DB upgrade", StartsAt: metav1.NewTime(now.Add(-time.Minute)),
			EndsAt: metav1.NewTime(now.Add(time.Hour)), Scope: "all"}}
	must(t, k8s.Create(ctx, w))

	clock := now
	r := &controllers.MaintenanceWindowReconciler{Client: failFirstStatusPatch(k8s), Alerts: randomIDAlerts{}, Events: st,
		Now: func() time.Time { return clock }}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: w.Name}}
	if _, err := r.Reconcile(ctx, req); err == nil {
		t.Fatal("the first reconcile succeeded although its status patch failed")
	}
	for i := range 2 {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatalf("reconcile %d: %v", i+2, err)
		}
	}
	if got := announced(t, st); fmt.Sprint(got) != "map[maintenance.started:1]" {
		t.Errorf("deliveries per kind = %v, want maintenance.started once", got)
	}
	clock = now.Add(2 * time.Hour)
	for range 2 {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if got := announced(t, st); fmt.Sprint(got) != "map[maintenance.ended:1 maintenance.started:1]" {
		t.Errorf("deliveries per kind = %v, want the start and the end once each", got)
	}
}

func conditionTrue(conds []metav1.Condition, t string) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
