package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/postgres"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

// countingAlerts builds one routed event per state change, like the real
// router, so the test can count what would be delivered.
type countingAlerts struct{}

func (countingAlerts) IncidentEvents(_ context.Context, kind string, m *monv1.Monitor, inc store.Incident, _ alertevent.Decision) ([]store.OutboxEvent, error) {
	return []store.OutboxEvent{{ID: uuid.NewString(), Namespace: m.Namespace, Kind: kind,
		Payload: []byte(fmt.Sprintf(`{"incident_id":%q}`, inc.ID)), Channels: []string{"channel-1"}}}, nil
}

// TestReplicasShareOneWriterPerMonitor runs two engines, as two manager
// replicas would, on one PostgreSQL store and feeds both the same failing
// results at the same time. The store's one-open-incident-per-monitor rule
// must leave exactly one incident and one alert, and both replicas must
// agree on it.
func TestReplicasShareOneWriterPerMonitor(t *testing.T) {
	dsn := testutil.PostgresDSN(t)
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn, postgres.Options{Schema: "ha_" + uuid.NewString()[:8]})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	m := &monv1.Monitor{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default", UID: "6f1f7c2e-0000-4000-8000-000000000001"},
		Spec:       monv1.MonitorSpec{Name: "API", URL: "https://example.com", IntervalSeconds: 60, Regions: []string{"a", "b", "c"}},
		Status:     monv1.MonitorStatus{EffectiveRegions: []string{"a", "b", "c"}, EffectiveIntervalSeconds: 60},
	}
	newEngine := func() *Engine {
		c := cacheOf(m.DeepCopy())
		return New(Options{Store: st, Client: c, Secrets: c, Alerts: countingAlerts{}})
	}
	replicas := []*Engine{newEngine(), newEngine()}

	now := time.Now().UTC()
	results := outageResults(string(m.UID), now)
	var wg sync.WaitGroup
	for range 5 {
		for _, e := range replicas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := e.Ingest(ctx, results); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()

	list, err := st.ListIncidents(ctx, store.IncidentQuery{MonitorID: string(m.UID), Page: 1, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("two replicas opened %d incidents, want 1", len(list.Items))
	}
	deliveries, err := st.LeaseDeliveries(ctx, "test", 100, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(deliveries) != 1 {
		t.Fatalf("%d alert deliveries queued, want 1", len(deliveries))
	}
	stats, err := st.Stats(ctx, store.StatsQuery{MonitorID: string(m.UID), From: now.Add(-time.Minute), To: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Total() != 3 {
		t.Fatalf("stored %d checks for 3 results sent 10 times, want 3", stats.Total())
	}
	for i, e := range replicas {
		live, err := e.LiveState(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if live.OpenIncident == nil || live.OpenIncident.ID != list.Items[0].ID {
			t.Fatalf("replica %d does not know the open incident", i)
		}
	}
}

// cacheOf is a fake of the manager's cache holding objs, with the Monitor
// uid index the engine looks monitors up by.
func cacheOf(objs ...client.Object) client.Client {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = monv1.AddToScheme(scheme)
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&monv1.Monitor{}, monv1.UIDIndex, func(o client.Object) []string { return []string{string(o.GetUID())} }).Build()
}

// outageResults are one result per region of a, b and c for monitorID at
// now: a and b fail, c passes (an outage confirmed by two of three).
func outageResults(monitorID string, now time.Time) []probeapi.Result {
	var results []probeapi.Result
	for i, region := range []string{"a", "b", "c"} {
		status := probeapi.StatusDown
		if region == "c" {
			status = probeapi.StatusUp
		}
		results = append(results, probeapi.Result{ID: uuid.NewString(), MonitorID: monitorID, Region: region,
			CheckedAt: now.Add(time.Duration(i) * time.Millisecond), Status: status, ErrorType: "timeout"})
	}
	return results
}
