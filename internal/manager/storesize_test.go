package manager

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

func TestStoreSizeMeasuresBothBackends(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "uptime.db")
	st, err := OpenStore(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := storeSize("sqlite://"+path, st)(ctx); err != nil || n <= 0 {
		t.Fatalf("sqlite size = %d, %v; want the file's size", n, err)
	}

	dsn := testutil.PostgresDSN(t)
	pg, err := OpenStore(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if n, err := storeSize(dsn, pg)(ctx); err != nil || n <= 0 {
		t.Fatalf("postgres size = %d, %v; want pg_database_size", n, err)
	}
}

// TestStoreSizeOnEveryReplica: the store's size is published by a replica
// that is not the leader too (a runnable that needs leader election runs on
// the leader only), so a scrape of any manager Pod shows it.
func TestStoreSizeOnEveryReplica(t *testing.T) {
	r := storeSizeReporter(func(context.Context) (int64, error) { return 4242, nil })
	if r.NeedLeaderElection() {
		t.Fatal("the store size reporter runs on the leader only")
	}
	metrics.StoreBytes.Set(0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	value := func() float64 {
		var m dto.Metric
		_ = metrics.StoreBytes.Write(&m)
		return m.GetGauge().GetValue()
	}
	for value() != 4242 {
		if time.Now().After(deadline) {
			t.Fatalf("store bytes = %v, want 4242", value())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
