package engine

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// readCounter counts the store reads a judgement makes.
type readCounter struct {
	Store
	views, unsettled, allUnsettled atomic.Int64
}

func (r *readCounter) AllUnsettledMonitors(ctx context.Context) (map[string]bool, error) {
	r.allUnsettled.Add(1)
	return r.Store.AllUnsettledMonitors(ctx)
}

func (r *readCounter) MonitorView(ctx context.Context, id string, q store.ViewQuery) (store.MonitorView, error) {
	r.views.Add(1)
	return r.Store.MonitorView(ctx, id, q)
}

func (r *readCounter) UnsettledMonitors(ctx context.Context, ids []string) (map[string]bool, error) {
	r.unsettled.Add(1)
	return r.Store.UnsettledMonitors(ctx, ids)
}

// TestIngestPassingBatchOneRead ingests a batch of passing results for many
// monitors: one store read must settle all of those without an incident
// (not a MonitorView each), while the one with an open incident is still
// judged and resolved by its passing result.
func TestIngestPassingBatchOneRead(t *testing.T) {
	ctx := context.Background()
	st := sqliteStore(t)
	objs, uids := fleet("default", 300, "local")
	counter := &readCounter{Store: st}
	e := New(Options{Store: counter, Client: cacheOf(objs...)})

	// The first monitor goes down: its incident opens.
	now := time.Now().UTC()
	down := uids[0]
	if _, err := e.Ingest(ctx, []probeapi.Result{{ID: uuid.NewString(), MonitorID: down, Region: "local",
		CheckedAt: now.Add(-time.Second), Status: probeapi.StatusDown, ErrorType: "timeout"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetOpenIncident(ctx, down); err != nil {
		t.Fatalf("no incident opened for the failing monitor: %v", err)
	}

	counter.views.Store(0)
	batch := make([]probeapi.Result, 0, len(uids))
	for _, uid := range uids {
		batch = append(batch, probeapi.Result{ID: uuid.NewString(), MonitorID: uid, Region: "local", CheckedAt: now, Status: probeapi.StatusUp})
	}
	resp, err := e.Ingest(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Accepted != len(batch) {
		t.Fatalf("accepted %d of %d", resp.Accepted, len(batch))
	}
	if n := counter.unsettled.Load(); n != 1 {
		t.Errorf("%d batched reads for one batch, want 1", n)
	}
	// The judgement of the monitor with the incident reads its view in
	// the judgement's transaction, not through MonitorView.
	if n := counter.views.Load(); n != 0 {
		t.Errorf("%d MonitorView reads for %d passing monitors, want none", n, len(uids))
	}
	if _, err := st.GetOpenIncident(ctx, down); err == nil {
		t.Fatal("the incident of the monitor that passes again is still open")
	}
	// Every monitor of the batch counts for the status refresh pacing.
	e.mu.Lock()
	known := len(e.monitors)
	e.mu.Unlock()
	if known != len(uids) {
		t.Fatalf("the engine knows %d monitors, want %d", known, len(uids))
	}
}

// sqliteStore is a SQLite store in a file of the test's own, closed when
// the test ends.
func sqliteStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "uptime.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
