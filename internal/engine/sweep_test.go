package engine

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// TestSweepJudgesUnsettledOnly: among 300 monitors in two regions, one has
// a failing region that the other, passing region still outvotes. Its
// judgement marks it watched, so the sweep judges that one alone (one read
// finds every unsettled monitor; the other 299 cost none) and opens its incident once the
// passing region's result goes stale: time alone confirms the outage. When
// both regions pass again, the incident resolves and the mark goes. A
// region that turns degraded on a settled monitor asks for a status
// refresh at once.
func TestSweepJudgesUnsettledOnly(t *testing.T) {
	ctx := context.Background()
	st := sqliteStore(t)
	objs, uids := fleet("default", 300, "eu", "us")
	counter := &readCounter{Store: st}
	t0 := time.Now().UTC().Truncate(time.Second)
	clock := t0
	e := New(Options{Store: counter, Client: cacheOf(objs...), Now: func() time.Time { return clock }})
	result := func(uid, region string, at time.Time, status probeapi.Status) probeapi.Result {
		return probeapi.Result{ID: uuid.NewString(), MonitorID: uid, Region: region, CheckedAt: at, Status: status}
	}
	ingest := func(rs ...probeapi.Result) {
		t.Helper()
		if _, err := e.Ingest(ctx, rs); err != nil {
			t.Fatal(err)
		}
	}
	unsettled := func(uid string) bool {
		t.Helper()
		got, err := st.UnsettledMonitors(ctx, []string{uid})
		if err != nil {
			t.Fatal(err)
		}
		return got[uid]
	}
	watched := uids[0]

	// Every monitor passes in us at t0; in eu all pass except the watched
	// one, which fails 200 s later, while us is still fresh (staleness:
	// 3 × 60 s + 30 s): one failing vote of two confirms nothing.
	var batch []probeapi.Result
	for _, uid := range uids {
		batch = append(batch, result(uid, "us", t0, probeapi.StatusUp))
		if uid != watched {
			batch = append(batch, result(uid, "eu", t0, probeapi.StatusUp))
		}
	}
	ingest(batch...)
	clock = t0.Add(200 * time.Second)
	ingest(result(watched, "eu", clock, probeapi.StatusDown))
	if _, err := st.GetOpenIncident(ctx, watched); err == nil {
		t.Fatal("an incident opened while the passing region outvotes the failing one")
	}
	if !unsettled(watched) {
		t.Fatal("the monitor with a failing vote is not marked watched")
	}
	if unsettled(uids[1]) {
		t.Fatal("a passing monitor is marked")
	}

	// us goes stale: the sweep judges the watched monitor and confirms
	// the outage from eu alone; the others cost no read.
	clock = t0.Add(215 * time.Second)
	counter.views.Store(0)
	if err := e.sweep(ctx, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetOpenIncident(ctx, watched); err != nil {
		t.Fatalf("the sweep did not open the incident that staleness confirms: %v", err)
	}
	if v, u := counter.views.Load(), counter.allUnsettled.Load(); v != 1 || u != 1 {
		t.Errorf("the sweep read %d views and %d sets of unsettled monitors, want 1 and 1", v, u)
	}

	// Both regions pass again: resolved, and no longer marked.
	clock = t0.Add(230 * time.Second)
	ingest(result(watched, "eu", clock, probeapi.StatusUp), result(watched, "us", clock, probeapi.StatusUp))
	if _, err := st.GetOpenIncident(ctx, watched); err == nil {
		t.Fatal("the incident is still open after both regions pass")
	}
	if unsettled(watched) {
		t.Fatal("the recovered monitor is still marked")
	}

	// A settled monitor whose region turns degraded asks for a refresh.
	for len(e.updates) > 0 {
		<-e.updates
	}
	ingest(result(uids[1], "eu", clock, probeapi.StatusUp))
	if n := len(e.updates); n != 0 {
		t.Fatalf("an unchanged status asked for %d refreshes", n)
	}
	ingest(result(uids[1], "eu", clock.Add(time.Second), probeapi.StatusDegraded))
	if n := len(e.updates); n != 1 {
		t.Fatalf("a region turned degraded: %d refreshes asked, want 1", n)
	}
}
