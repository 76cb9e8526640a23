package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

func testMonitorView(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	gap := 3 * time.Minute
	q := store.ViewQuery{Regions: []string{"eu", "us", "ap"}, Now: base.Add(10 * time.Minute), Gap: gap}
	v, err := s.MonitorView(c, m, q)
	must(t, err)
	eq(t, "checks of a new monitor", len(v.Checks), 0)
	eq(t, "run of a new monitor", v.RunSince == nil, true)
	eq(t, "open incident of a new monitor", v.Open == nil, true)

	// A run that ended long ago, then a new one after a silence: RunSince
	// is the new run's first check.
	_, err = s.InsertChecks(c, []store.Check{
		check(m, "eu", base, store.StatusUp, 1), check(m, "us", base, store.StatusUp, 1),
		check(m, "eu", base.Add(9*time.Minute), store.StatusDown, 1),
		check(m, "eu", base.Add(10*time.Minute), store.StatusDown, 1),
		check(m, "other", base.Add(10*time.Minute), store.StatusDown, 1),
	})
	must(t, err)
	v, err = s.MonitorView(c, m, q)
	must(t, err)
	eq(t, "regions with a check", len(v.Checks), 2)
	for _, ch := range v.Checks {
		switch ch.Region {
		case "eu":
			eq(t, "eu newest", store.UTC(ch.CheckedAt), base.Add(10*time.Minute))
		case "us":
			eq(t, "us newest", store.UTC(ch.CheckedAt), base)
		default:
			t.Fatalf("unexpected region %q", ch.Region)
		}
	}
	if v.RunSince == nil || !store.UTC(*v.RunSince).Equal(base.Add(9*time.Minute)) {
		t.Fatalf("RunSince = %v, want %s", v.RunSince, base.Add(9*time.Minute))
	}
	// Reported without a silence: the run began before the gap.
	m2 := uuid.NewString()
	var steady []store.Check
	for i := range 5 {
		steady = append(steady, check(m2, "eu", base.Add(time.Duration(i)*time.Minute), store.StatusUp, 1))
	}
	_, err = s.InsertChecks(c, steady)
	must(t, err)
	v, err = s.MonitorView(c, m2, store.ViewQuery{Regions: q.Regions, Now: base.Add(5 * time.Minute), Gap: gap})
	must(t, err)
	eq(t, "run that began before the gap", v.RunSince == nil, true)
	eq(t, "steady regions", len(v.Checks), 1)
}

func testJudge(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	_, err := s.InsertChecks(c, []store.Check{check(m, "eu", base, store.StatusDown, 1), check(m, "us", base, store.StatusDown, 1)})
	must(t, err)
	q := store.ViewQuery{Regions: []string{"eu", "us"}, Now: base, Gap: time.Hour}
	// Concurrent judgements of one monitor run one at a time: each sees the
	// previous one's incident, so exactly one opens.
	var wg sync.WaitGroup
	var mu sync.Mutex
	opened := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Judge(c, m, func(tx store.JudgeTx) error {
				v, err := tx.View(c, q)
				if err != nil || v.Open != nil {
					return err
				}
				if len(v.Checks) != 2 {
					t.Errorf("judgement saw %d regions, want 2", len(v.Checks))
				}
				if _, err := tx.Open(c, store.Incident{Namespace: "ns", MonitorID: m, StartedAt: base, Confirmations: 2},
					store.OutboxEvent{Namespace: "ns", Kind: "monitor.down", Channels: []string{"ch"}}); err != nil {
					return err
				}
				mu.Lock()
				opened++
				mu.Unlock()
				return tx.SetState(c, []byte(`{"k":1}`))
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	eq(t, "incidents opened", opened, 1)
	v, err := s.MonitorView(c, m, q)
	must(t, err)
	if v.Open == nil || v.Open.Confirmations != 2 {
		t.Fatalf("open incident %+v, want one with 2 confirmations", v.Open)
	}
	eq(t, "state", string(v.State), `{"k":1}`)
	n := 0
	must(t, s.Judge(c, m, func(tx store.JudgeTx) error {
		var err error
		n, err = tx.OpenedSince(c, base.Add(-time.Minute))
		return err
	}))
	eq(t, "opened since", n, 1)

	// A failed judgement leaves nothing behind.
	boom := errors.New("boom")
	err = s.Judge(c, m, func(tx store.JudgeTx) error {
		if _, err := tx.Resolve(c, v.Open.ID, base.Add(time.Minute)); err != nil {
			return err
		}
		return boom
	})
	eq(t, "failed judgement", errors.Is(err, boom), true)
	inc, err := s.GetOpenIncident(c, m)
	must(t, err)
	eq(t, "still open", inc.ID, v.Open.ID)

	must(t, s.Judge(c, m, func(tx store.JudgeTx) error {
		if _, err := tx.Resolve(c, inc.ID, base.Add(time.Minute)); err != nil {
			return err
		}
		return tx.SetState(c, nil)
	}))
	v, err = s.MonitorView(c, m, q)
	must(t, err)
	eq(t, "open after resolve", v.Open == nil, true)
	eq(t, "state after delete", len(v.State), 0)
}

func testAgentContacts(t *testing.T, s store.Store) {
	c := ctx(t)
	must(t, s.RecordAgentContact(c, "eu", "a1", base))
	must(t, s.RecordAgentContact(c, "eu", "a2", base.Add(-time.Hour)))
	must(t, s.RecordAgentContact(c, "us", "b1", base.Add(-time.Minute)))
	must(t, s.RecordAgentContact(c, "us", "b1", base.Add(-2*time.Hour))) // older: kept later one
	must(t, s.RecordAgentContact(c, "us", "b2", base.Add(-30*time.Second)))
	got, err := s.AgentsOnline(c, base.Add(-90*time.Second))
	must(t, err)
	eq(t, "eu agents", got["eu"].Agents, 1)
	eq(t, "eu last contact", got["eu"].Last.Equal(base), true)
	eq(t, "us agents", got["us"].Agents, 2)
	eq(t, "us last contact", got["us"].Last.Equal(base.Add(-30*time.Second)), true)
	eq(t, "regions", len(got), 2)
	eq(t, "eu backlog before any report", got["eu"].Backlog, 0)
}

// testAgentReports: two replicas report the pushes of the agents that reach
// each; the region's backlog is the sum over its live agents of the latest
// report of each (whichever replica wrote it, in whatever order), and its
// replayed results add up.
func testAgentReports(t *testing.T, s store.Store) {
	c := ctx(t)
	before, err := s.RegionReplays(c)
	must(t, err)
	eq(t, "no replays yet", len(before), 0)
	// Replica 1 hears a1, replica 2 hears a2; a3's last push is too old.
	must(t, s.RecordAgentReport(c, store.AgentReport{Region: "eu", Agent: "a1", At: base.Add(-10 * time.Second), Backlog: 40, Replayed: 500}))
	must(t, s.RecordAgentReport(c, store.AgentReport{Region: "eu", Agent: "a2", At: base.Add(-5 * time.Second), Backlog: 2, Replayed: 7}))
	must(t, s.RecordAgentReport(c, store.AgentReport{Region: "eu", Agent: "a3", At: base.Add(-time.Hour), Backlog: 1000}))
	must(t, s.RecordAgentContact(c, "eu", "a2", base)) // a poll: the backlog stays
	got, err := s.AgentsOnline(c, base.Add(-90*time.Second))
	must(t, err)
	eq(t, "eu agents", got["eu"].Agents, 2)
	eq(t, "eu backlog of the live agents", got["eu"].Backlog, 42)
	eq(t, "eu last contact", got["eu"].Last.Equal(base), true)

	// a1 drains its backlog: the report reaches replica 2 first, then an
	// older one (a retried write of replica 1) arrives: the later wins.
	must(t, s.RecordAgentReport(c, store.AgentReport{Region: "eu", Agent: "a1", At: base, Backlog: 0, Replayed: 40}))
	must(t, s.RecordAgentReport(c, store.AgentReport{Region: "eu", Agent: "a1", At: base.Add(-2 * time.Second), Backlog: 20, Replayed: 20}))
	got, err = s.AgentsOnline(c, base.Add(-90*time.Second))
	must(t, err)
	eq(t, "eu backlog after a1 drained", got["eu"].Backlog, 2)
	eq(t, "eu last contact kept", got["eu"].Last.Equal(base), true)

	must(t, s.RecordAgentReport(c, store.AgentReport{Region: "us", Agent: "b1", At: base, Backlog: 3}))
	replays, err := s.RegionReplays(c)
	must(t, err)
	eq(t, "eu replayed, both replicas", replays["eu"].Results, int64(500+7+40+20))
	eq(t, "eu last replay", replays["eu"].Last.Equal(base), true)
	_, us := replays["us"]
	eq(t, "us never replayed", us, false)

	if err := s.RecordAgentReport(c, store.AgentReport{Region: "eu", Agent: "a1", At: base, Backlog: -1}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a negative backlog: %v, want ErrInvalid", err)
	}
}

func testUnsettledMonitors(t *testing.T, s store.Store) {
	c := ctx(t)
	open, state, resolved, quiet := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	must(t, s.Judge(c, open, func(tx store.JudgeTx) error {
		_, err := tx.Open(c, store.Incident{Namespace: "ns", MonitorID: open, StartedAt: base, Confirmations: 1})
		return err
	}))
	must(t, s.Judge(c, state, func(tx store.JudgeTx) error { return tx.SetState(c, []byte(`{"k":1}`)) }))
	must(t, s.Judge(c, resolved, func(tx store.JudgeTx) error {
		inc, err := tx.Open(c, store.Incident{Namespace: "ns", MonitorID: resolved, StartedAt: base, Confirmations: 1})
		if err != nil {
			return err
		}
		_, err = tx.Resolve(c, inc.ID, base.Add(time.Minute))
		return err
	}))
	// More ids than one statement takes.
	ids := []string{quiet, open, resolved, state}
	for range 1200 {
		ids = append(ids, uuid.NewString())
	}
	got, err := s.UnsettledMonitors(c, ids)
	must(t, err)
	eq(t, "unsettled monitors", len(got), 2)
	eq(t, "open incident unsettled", got[open], true)
	eq(t, "judgement document unsettled", got[state], true)
	got, err = s.UnsettledMonitors(c, nil)
	must(t, err)
	eq(t, "unsettled of none", len(got), 0)
	all, err := s.AllUnsettledMonitors(c)
	must(t, err)
	eq(t, "open incident among all unsettled", all[open], true)
	eq(t, "judgement document among all unsettled", all[state], true)
	eq(t, "resolved among all unsettled", all[resolved], false)
	eq(t, "quiet among all unsettled", all[quiet], false)
}
