package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// BenchmarkColdStart measures how long a freshly started manager takes to
// reconcile every Monitor of a cluster that already holds many (default
// 10,000; UPTIME_BENCH_MONITORS overrides). It reports the seconds until the
// Monitor controller has reconciled each of them once, beside its baseline:
// a bare informer's list and sync of the same objects (ratio = baseline ÷
// figure; 1 would mean reconciling costs nothing beyond the list).
func BenchmarkColdStart(b *testing.B) {
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("UPTIME_BENCH_MONITORS")); err == nil && v > 0 {
		n = v
	}
	// Its subject is the manager's start: it runs its own, restarted below.
	env := testenv.Use(b, env)
	opts := manager.Options{Store: filepath.Join(b.TempDir(), "uptime.db"), AllowPrivateTargets: true}
	env.RunManager(b, opts)
	ns := env.Namespace(b, nil)
	ctx := context.Background()
	if err := env.Client.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				m := &monv1.Monitor{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("m-%05d", i), Namespace: ns},
					Spec:       monv1.MonitorSpec{URL: fmt.Sprintf("https://example.com/%d", i), IntervalSeconds: 60},
				}
				if err := env.Client.Create(ctx, m); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.Logf("created %d monitors in %s", n, time.Since(start).Round(time.Second))

	for range b.N {
		env.StopManager()
		// The baseline runs while no manager does, against the same server.
		base := informerSync(b, env, n)
		before := reconciles(b)
		t0 := time.Now()
		if err := env.StartManager(opts); err != nil {
			b.Fatal(err)
		}
		deadline := t0.Add(10 * time.Minute)
		for reconciles(b)-before < float64(n) {
			if time.Now().After(deadline) {
				b.Fatalf("only %.0f of %d monitors reconciled after 10 minutes", reconciles(b)-before, n)
			}
			time.Sleep(100 * time.Millisecond)
		}
		took := time.Since(t0).Seconds()
		b.ReportMetric(took, "s-to-reconcile-all")
		b.ReportMetric(float64(n), "monitors")
		b.ReportMetric(base, "baseline-s")
		b.ReportMetric(base/took, "ratio")
	}
}

// informerSync is the cold start's baseline: the seconds a bare informer
// takes to list and sync the same Monitors from the same API server, which
// is what any controller pays before its first reconcile.
func informerSync(b *testing.B, env *testenv.Env, n int) float64 {
	b.Helper()
	c, err := cache.New(env.Config, cache.Options{Scheme: manager.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Now()
	if _, err := c.GetInformer(ctx, &monv1.Monitor{}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("the bare informer never synced")
	}
	took := time.Since(t0).Seconds()
	var list monv1.MonitorList
	if err := c.List(ctx, &list); err != nil || len(list.Items) < n {
		b.Fatalf("bare informer holds %d of %d monitors (%v)", len(list.Items), n, err)
	}
	return took
}

// reconciles reads controller-runtime's reconcile counter of the Monitor
// controller (all results).
func reconciles(b *testing.B) float64 {
	families, err := metrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "monitor" {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}
