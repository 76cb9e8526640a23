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
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// BenchmarkColdStart measures how long a freshly started manager takes to
// reconcile every Monitor of a cluster that already holds many (default
// 10,000; UPTIME_BENCH_MONITORS overrides). It reports the seconds until the
// Monitor controller has reconciled each of them once.
func BenchmarkColdStart(b *testing.B) {
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("UPTIME_BENCH_MONITORS")); err == nil && v > 0 {
		n = v
	}
	dir := b.TempDir()
	opts := manager.Options{Store: filepath.Join(dir, "uptime.db"), AllowPrivateTargets: true, SkipNameValidation: true}
	env, err := testenv.Start(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer env.Stop()
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
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("m-%05d", i), Namespace: "default"},
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
		b.ReportMetric(time.Since(t0).Seconds(), "s-to-reconcile-all")
		b.ReportMetric(float64(n), "monitors")
	}
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
