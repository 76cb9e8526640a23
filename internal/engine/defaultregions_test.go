package engine

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// TestJudgedBeforeStatusNamesRegions: a Monitor that names no regions runs
// in its plan's default ones, and the agents check it from the cache before
// the Monitor controller's (paced) status write names them. Its results
// must be judged as they come: two of three default regions failing open
// an incident although the status is still empty.
func TestJudgedBeforeStatusNamesRegions(t *testing.T) {
	ctx := context.Background()
	st := sqliteStore(t)

	m := &monv1.Monitor{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default", UID: "6f1f7c2e-0000-4000-8000-0000000000d1"},
		Spec:       monv1.MonitorSpec{Name: "API", URL: "https://example.com", IntervalSeconds: 60},
	}
	objs := []client.Object{m, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}}
	for _, code := range []string{"a", "b", "c"} {
		objs = append(objs, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: code}})
	}
	c := cacheOf(objs...)
	e := New(Options{Store: st, Client: c, Secrets: c, Alerts: countingAlerts{}, Plans: &plans.Resolver{Reader: c}})

	results := outageResults(string(m.UID), time.Now().UTC())
	if _, err := e.Ingest(ctx, results); err != nil {
		t.Fatal(err)
	}
	list, err := st.ListIncidents(ctx, store.IncidentQuery{MonitorID: string(m.UID), Page: 1, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d incidents for a monitor failing in 2 of its 3 default regions before its status names them, want 1", len(list.Items))
	}
	if got := list.Items[0].ConfirmingRegions; len(got) != 2 {
		t.Errorf("confirming regions = %v, want a and b", got)
	}
}
