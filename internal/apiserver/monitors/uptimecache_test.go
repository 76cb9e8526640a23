package monitors

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// countingStore counts the uptime queries that reach the SQLite store.
type countingStore struct {
	*sqlite.Store
	queries atomic.Int64
}

func (c *countingStore) UptimeWindows(ctx context.Context, monitorID string, to time.Time, windows ...time.Duration) ([]*float64, error) {
	c.queries.Add(1)
	return c.Store.UptimeWindows(ctx, monitorID, to, windows...)
}

// TestUptimeCacheIsExact: GET /monitors/:id reuses a monitor's uptimes
// while nothing they are computed from changed, and computes them again
// after every change: an ingest, the minute turning (the windows slide),
// pruned rollups, a statistics reset and deleted history.
func TestUptimeCacheIsExact(t *testing.T) {
	const ns = "team"
	// Half a minute past 12:00: the 24 h window is [yesterday 12:01, 12:01).
	t0 := time.Date(2026, 11, 26, 12, 0, 30, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	cr := teamCache(t, ns)
	m := benchMonitorIn(ns, 0, t0)
	if err := cr.add(m); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "history.db"), sqlite.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sq.Close() })
	st := &countingStore{Store: sq}
	s := newTestServer(testOptions{Client: cr, Reader: cr, Monitors: informerMonitors{indexer: cr.indexers[monitorGVK]},
		Plans: &plans.Resolver{Reader: cr, DefaultPlan: "p"}, Store: st, Clock: clk})

	get := func() (day, mon *float64) {
		t.Helper()
		rec := getMonitorAsReader(s, ns, string(m.UID))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET = %d %s", rec.Code, rec.Body)
		}
		var out restapi.Monitor
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out.Uptime24h, out.Uptime30d
	}
	expect := func(what string, wantDay, wantMon *float64, queries int64) {
		t.Helper()
		day, mon := get()
		if !samePercent(day, wantDay) || !samePercent(mon, wantMon) {
			t.Fatalf("%s: uptime_24h, uptime_30d = %s, %s; want %s, %s", what, pct(day), pct(mon), pct(wantDay), pct(wantMon))
		}
		// Asked again without a change: no query.
		if day, mon := get(); !samePercent(day, wantDay) || !samePercent(mon, wantMon) {
			t.Fatalf("%s, asked again: uptime_24h, uptime_30d = %s, %s", what, pct(day), pct(mon))
		}
		if got := st.queries.Load(); got != queries {
			t.Fatalf("%s: %d uptime queries in all, want %d", what, got, queries)
		}
	}
	n := 0
	insert := func(status store.CheckStatus, at time.Time) {
		t.Helper()
		n++
		c := store.Check{ID: fmt.Sprintf("c-%d", n), MonitorID: string(m.UID), Namespace: ns, Region: "eu-1",
			CheckedAt: at, Status: status, ResponseTimeMs: 10}
		if _, err := st.InsertChecks(ctx, []store.Check{c}); err != nil {
			t.Fatal(err)
		}
	}

	expect("no checks", nil, nil, 1)
	for i := range 3 {
		insert(store.StatusUp, t0.Add(-time.Duration(i+1)*time.Minute)) // 11:57:30 to 11:59:30
	}
	expect("three up", p(100), p(100), 2)
	insert(store.StatusDown, t0.Add(-10*time.Second))              // 12:00:20
	insert(store.StatusDown, t0.Add(-24*time.Hour+40*time.Second)) // yesterday 12:01:10
	expect("two down", p(60), p(60), 3)
	clk.SetTime(t0.Add(20 * time.Second)) // 12:00:50: the same minute
	expect("the same minute", p(60), p(60), 3)
	clk.SetTime(t0.Add(time.Minute)) // 12:01:30: yesterday 12:01 left the 24 h window
	expect("the next minute", p(75), p(60), 4)
	// Without the hour buckets, only the minutes at the windows' edges
	// remain: 12:00:20 (down) in both, yesterday 12:01:10 (down) in 30 d.
	if _, err := st.PruneRollups(ctx, time.Hour, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	expect("hour buckets pruned", p(0), p(0), 5)
	if err := st.ResetStats(ctx, string(m.UID)); err != nil {
		t.Fatal(err)
	}
	expect("statistics reset", nil, nil, 6)
	insert(store.StatusUp, t0)
	expect("one up", p(100), p(100), 7)
	if err := st.DeleteMonitorHistory(ctx, string(m.UID)); err != nil {
		t.Fatal(err)
	}
	expect("history deleted", nil, nil, 8)
}

func p(v float64) *float64 { return &v }

func samePercent(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func pct(v *float64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(*v)
}
