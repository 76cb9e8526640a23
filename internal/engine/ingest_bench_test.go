package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// BenchmarkEngineIngest measures Engine.Ingest on SQLite, judgement
// included: batches of 600 results for 200 monitors in 3 regions, all up
// (the steady state) or with one region of every monitor failing (each
// monitor then takes the locked judgement).
func BenchmarkEngineIngest(b *testing.B) {
	for _, failing := range []bool{false, true} {
		b.Run(fmt.Sprintf("oneRegionDown=%v", failing), func(b *testing.B) {
			ctx := context.Background()
			st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			scheme := runtime.NewScheme()
			_ = clientgoscheme.AddToScheme(scheme)
			_ = monv1.AddToScheme(scheme)
			regions := []string{"eu", "us", "ap"}
			objs, uids := fleet("bench", 200, regions...)
			k := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
				WithIndex(&monv1.Monitor{}, monv1.UIDIndex, func(o client.Object) []string { return []string{string(o.GetUID())} }).Build()
			fast := &cachedClient{Client: k, monitors: map[string]monv1.Monitor{}}
			for _, o := range objs {
				switch o := o.(type) {
				case *monv1.Monitor:
					fast.monitors[string(o.UID)] = *o
				case *monv1.ProbeRegion:
					fast.regions = append(fast.regions, *o)
				}
			}
			e := New(Options{Store: st, Client: fast, Secrets: k})
			at := time.Now().Add(-time.Hour)
			total := 0
			for b.Loop() {
				b.StopTimer()
				batch := make([]probeapi.Result, 0, len(uids)*len(regions))
				for _, uid := range uids {
					for i, r := range regions {
						s := probeapi.StatusUp
						if failing && i == 0 {
							s = probeapi.StatusDown
						}
						batch = append(batch, probeapi.Result{ID: uuid.NewString(), MonitorID: uid, Region: r, CheckedAt: at, Status: s})
					}
				}
				at = at.Add(time.Second)
				b.StartTimer()
				if _, err := e.Ingest(ctx, batch); err != nil {
					b.Fatal(err)
				}
				total += len(batch)
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "results/s")
		})
	}
}

// cachedClient answers the engine's hot lookups (a Monitor by UID, the
// ProbeRegions) from memory, as the manager's informer cache does; the fake
// client's List would dominate the measurement.
type cachedClient struct {
	client.Client
	monitors map[string]monv1.Monitor
	regions  []monv1.ProbeRegion
}

func (c *cachedClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	switch l := list.(type) {
	case *monv1.MonitorList:
		for _, o := range opts {
			if f, ok := o.(client.MatchingFields); ok && f[monv1.UIDIndex] != "" {
				l.Items = nil
				if m, ok := c.monitors[f[monv1.UIDIndex]]; ok {
					l.Items = append(l.Items, *m.DeepCopy())
				}
				return nil
			}
		}
	case *monv1.ProbeRegionList:
		l.Items = append([]monv1.ProbeRegion(nil), c.regions...)
		return nil
	}
	return c.Client.List(ctx, list, opts...)
}

// fleet is n HTTP Monitors of namespace ns checked every 60 s from regions
// (their status already names them), followed by the ProbeRegions; uids
// are the monitors' in order.
func fleet(ns string, n int, regions ...string) (objs []client.Object, uids []string) {
	for i := range n {
		m := &monv1.Monitor{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("m%d", i), Namespace: ns, UID: types.UID(uuid.NewString())},
			Spec:       monv1.MonitorSpec{URL: "https://example.com", IntervalSeconds: 60, Regions: regions},
			Status:     monv1.MonitorStatus{EffectiveRegions: regions, EffectiveIntervalSeconds: 60},
		}
		objs = append(objs, m)
		uids = append(uids, string(m.UID))
	}
	for _, r := range regions {
		objs = append(objs, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: r}})
	}
	return objs, uids
}
