package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// generation is a new generation of ns/name of type http.
func generation(ns, name string) store.MonitorIdentity {
	return store.MonitorIdentity{UID: uuid.NewString(), Namespace: ns, Name: name, Type: "http"}
}

// claim claims id adopting from its own name and returns the UID adopted.
func claim(t *testing.T, s store.Store, id store.MonitorIdentity, at time.Time) string {
	t.Helper()
	adopted, err := s.ClaimMonitorHistory(ctx(t), store.HistoryClaim{MonitorIdentity: id, AdoptFrom: id.Name, At: at})
	must(t, err)
	return adopted
}

// testAdoptHistory deletes and re-creates a monitor (retire, then claim a
// new UID with the same namespace and name): every kind of history moves to
// the new UID, merging with what the new UID stored before its claim, and
// nothing is left under the old one.
func testAdoptHistory(t *testing.T, s store.Store) {
	c := ctx(t)
	old := generation("team", "web")
	eq(t, "first claim adopts", claim(t, s, old, base.Add(-48*time.Hour)), "")
	var batch []store.Check
	for i := range 48 * 60 / 10 { // every 10 minutes for two days, one in eight down
		status := store.StatusUp
		if i%8 == 0 {
			status = store.StatusDown
		}
		batch = append(batch, check(old.UID, "eu", base.Add(-48*time.Hour+time.Duration(i)*10*time.Minute), status, 100))
	}
	_, err := s.InsertChecks(c, batch)
	must(t, err)
	resolved, err := s.OpenIncident(c, store.Incident{Namespace: "team", MonitorID: old.UID, MonitorName: "web", StartedAt: base.Add(-30 * time.Hour)})
	must(t, err)
	_, err = s.ResolveIncident(c, resolved.ID, base.Add(-29*time.Hour), false, "")
	must(t, err)
	_, err = s.AddNote(c, store.Note{IncidentID: resolved.ID, Body: "root cause: a full disk"})
	must(t, err)
	open, err := s.OpenIncident(c, store.Incident{Namespace: "team", MonitorID: old.UID, MonitorName: "web", StartedAt: base.Add(-10 * time.Minute)})
	must(t, err)
	must(t, s.RecordHeartbeat(c, store.HeartbeatPing{MonitorID: old.UID, At: base.Add(-time.Hour), OK: true}))
	_, err = s.RecordDNS(c, store.DNSRecord{MonitorID: old.UID, ObservedAt: base.Add(-time.Hour), RecordType: "A", Answers: []string{"192.0.2.1"}})
	must(t, err)
	must(t, s.RecordCertObservation(c, store.CertObservation{MonitorID: old.UID, Region: "eu", ObservedAt: base.Add(-time.Hour), NotAfter: base.Add(30 * 24 * time.Hour)}))
	must(t, s.PauseMonitor(c, old.UID, base.Add(-5*time.Minute)))
	from, to := base.Add(-48*time.Hour), base.Add(time.Hour)
	before, err := s.Stats(c, store.StatsQuery{MonitorID: old.UID, From: from, To: to})
	must(t, err)

	// Deleted: the open incident ends (nothing watches the target) and the
	// pause window closes; the history stays.
	must(t, s.RetireMonitorHistory(c, old, base))
	inc, err := s.GetIncident(c, open.ID)
	must(t, err)
	if inc.ResolvedAt == nil || !inc.ResolvedAt.Equal(base) {
		t.Fatalf("open incident of a deleted monitor: resolved at %v, want %v", inc.ResolvedAt, base)
	}
	pw, err := s.ListPauseWindows(c, old.UID, base.Add(-time.Hour))
	must(t, err)
	if len(pw) != 1 || pw[0].ResumedAt == nil {
		t.Fatalf("pause window of a deleted monitor: %+v, want one closed", pw)
	}

	list, err := s.ListIncidents(c, store.IncidentQuery{Namespace: "team"})
	must(t, err)
	eq(t, "incidents of a deleted monitor in the workspace's list", list.Total, 0)

	// Re-created: the new UID stores a result before the controller claims
	// it (agents are assigned from the cache at once), in the same minute
	// bucket as one of the old generation's.
	cur := generation("team", "web")
	early := check(cur.UID, "eu", base.Add(-48*time.Hour+30*time.Second), store.StatusDown, 300)
	_, err = s.InsertChecks(c, []store.Check{early})
	must(t, err)
	eq(t, "adopted", claim(t, s, cur, base.Add(time.Minute)), old.UID)
	eq(t, "claiming again adopts nothing", claim(t, s, cur, base.Add(2*time.Minute)), "")

	after, err := s.Stats(c, store.StatsQuery{MonitorID: cur.UID, From: from, To: to})
	must(t, err)
	want := before
	want.AddCheck(early.Status, early.ResponseTimeMs)
	if after.Up != want.Up || after.Down != want.Down || after.ResponseSumMs != want.ResponseSumMs {
		t.Fatalf("stats of the new generation: %+v, want %+v", after, want)
	}
	up, err := s.Uptime(c, cur.UID, from, to)
	must(t, err)
	if up == nil || *up != *want.UptimePercent() {
		t.Fatalf("uptime of the new generation: %v, want %v", up, *want.UptimePercent())
	}
	items, _, err := s.ListChecks(c, store.ChecksQuery{MonitorID: cur.UID, Limit: 500})
	must(t, err)
	eq(t, "checks of the new generation", len(items), len(batch)+1)
	for _, it := range items {
		eq(t, "check monitor id", it.MonitorID, cur.UID)
	}
	list, err = s.ListIncidents(c, store.IncidentQuery{MonitorID: cur.UID})
	must(t, err)
	eq(t, "incidents of the new generation", list.Total, 2)
	list, err = s.ListIncidents(c, store.IncidentQuery{Namespace: "team"})
	must(t, err)
	eq(t, "incidents in the workspace's list", list.Total, 2)
	for _, it := range list.Items {
		eq(t, "incident monitor id", it.MonitorID, cur.UID)
	}
	notes, err := s.ListNotes(c, resolved.ID)
	must(t, err)
	eq(t, "notes kept (root cause and none else)", len(notes), 1)
	tl, _, err := s.ListTimeline(c, store.TimelineQuery{IncidentID: resolved.ID})
	must(t, err)
	eq(t, "timeline kept (opened, resolved, note)", len(tl), 3)
	hb, err := s.ListHeartbeats(c, cur.UID, 10)
	must(t, err)
	eq(t, "heartbeats", len(hb), 1)
	dns, err := s.ListDNSRecords(c, cur.UID, false, 10)
	must(t, err)
	eq(t, "dns records", len(dns), 1)
	certs, err := s.ListCertObservations(c, cur.UID)
	must(t, err)
	eq(t, "certificate observations", len(certs), 1)
	pw, err = s.ListPauseWindows(c, cur.UID, base.Add(-time.Hour))
	must(t, err)
	eq(t, "pause windows", len(pw), 1)

	// Nothing is left under the old UID.
	left, err := s.Stats(c, store.StatsQuery{MonitorID: old.UID, From: from, To: to})
	must(t, err)
	eq(t, "rollups left under the old uid", left.Total(), int64(0))
	items, _, err = s.ListChecks(c, store.ChecksQuery{MonitorID: old.UID})
	must(t, err)
	eq(t, "checks left under the old uid", len(items), 0)
	list, err = s.ListIncidents(c, store.IncidentQuery{MonitorID: old.UID})
	must(t, err)
	eq(t, "incidents left under the old uid", list.Total, 0)
}

// testAdoptScope: history goes only to a generation of the same namespace,
// name (or spec.key, or the name it was renamed from) and type, and never
// when the claim asks for a fresh start.
func testAdoptScope(t *testing.T, s store.Store) {
	c := ctx(t)
	seed := func(id store.MonitorIdentity) {
		t.Helper()
		claim(t, s, id, base.Add(-time.Hour))
		_, err := s.InsertChecks(c, []store.Check{check(id.UID, "eu", base.Add(-time.Hour), store.StatusUp, 10)})
		must(t, err)
		must(t, s.RetireMonitorHistory(c, id, base))
	}
	web := generation("team", "web")
	seed(web)

	eq(t, "same name, other namespace", claim(t, s, generation("other", "web"), base), "")
	tcp := generation("team", "web")
	tcp.Type = "tcp"
	eq(t, "same name, other type", claim(t, s, tcp, base), "")
	fresh := generation("team", "web")
	adopted, err := s.ClaimMonitorHistory(c, store.HistoryClaim{MonitorIdentity: fresh, At: base})
	must(t, err)
	eq(t, "fresh start", adopted, "")
	eq(t, "other name", claim(t, s, generation("team", "website"), base), "")
	// fresh now holds the name web; only the retired generation may be
	// adopted by another name.

	renamed := generation("team", "website-renamed")
	adopted, err = s.ClaimMonitorHistory(c, store.HistoryClaim{MonitorIdentity: renamed, AdoptFrom: "web", At: base.Add(time.Minute)})
	must(t, err)
	eq(t, "rename adopts from the old name", adopted, web.UID)
	items, _, err := s.ListChecks(c, store.ChecksQuery{MonitorID: renamed.UID})
	must(t, err)
	eq(t, "checks of the renamed monitor", len(items), 1)

	// A monitor as code is found by its key whatever its name.
	keyed := generation("team", "api-1")
	keyed.Key = "api"
	seed(keyed)
	again := generation("team", "api-2")
	again.Key = "api"
	eq(t, "same key, other name", claim(t, s, again, base.Add(time.Minute)), keyed.UID)

	// History travels on along a chain of re-creates.
	next := generation("team", "website-renamed")
	must(t, s.RetireMonitorHistory(c, renamed, base.Add(2*time.Minute)))
	eq(t, "second re-create", claim(t, s, next, base.Add(3*time.Minute)), renamed.UID)
	items, _, err = s.ListChecks(c, store.ChecksQuery{MonitorID: next.UID})
	must(t, err)
	eq(t, "checks after two re-creates", len(items), 1)
}

// testAdoptConcurrent: replicas claiming one new generation at once; one
// of them adopts, the history arrives whole. The old object vanished
// without its finalizer (a rebuilt cluster), so its incident is still
// open; the new generation opened its own first, and the newer stays open.
func testAdoptConcurrent(t *testing.T, s store.Store) {
	c := ctx(t)
	old := generation("team", "web")
	claim(t, s, old, base.Add(-time.Hour))
	var batch []store.Check
	for i := range 50 {
		batch = append(batch, check(old.UID, "eu", base.Add(-time.Hour+time.Duration(i)*time.Minute), store.StatusUp, 10))
	}
	_, err := s.InsertChecks(c, batch)
	must(t, err)
	oldInc, err := s.OpenIncident(c, store.Incident{Namespace: "team", MonitorID: old.UID, StartedAt: base.Add(-5 * time.Minute)})
	must(t, err)
	cur := generation("team", "web")
	curInc, err := s.OpenIncident(c, store.Incident{Namespace: "team", MonitorID: cur.UID, StartedAt: base})
	must(t, err)

	var wg sync.WaitGroup
	results := make([]string, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = s.ClaimMonitorHistory(c, store.HistoryClaim{MonitorIdentity: cur, AdoptFrom: "web", At: base.Add(time.Minute)})
		}()
	}
	wg.Wait()
	must(t, errors.Join(errs...))
	adoptions := 0
	for _, r := range results {
		if r != "" {
			eq(t, "adopted", r, old.UID)
			adoptions++
		}
	}
	eq(t, "adoptions", adoptions, 1)
	items, _, err := s.ListChecks(c, store.ChecksQuery{MonitorID: cur.UID, Limit: 500})
	must(t, err)
	eq(t, "checks of the new generation", len(items), len(batch))
	inc, err := s.GetIncident(c, oldInc.ID)
	must(t, err)
	if inc.ResolvedAt == nil || !inc.ResolvedAt.Equal(curInc.StartedAt) {
		t.Fatalf("adopted open incident: resolved at %v, want %v (when the new generation opened its own)", inc.ResolvedAt, curInc.StartedAt)
	}
	eq(t, "adopted incident's monitor", inc.MonitorID, cur.UID)
	open, err := s.GetOpenIncident(c, cur.UID)
	must(t, err)
	eq(t, "open incident", open.ID, curInc.ID)
}

// testPruneRetired: history retired longer than the retention and adopted
// by nobody is deleted; live and recently retired generations keep theirs.
func testPruneRetired(t *testing.T, s store.Store) {
	c := ctx(t)
	gone, recent, live := generation("team", "gone"), generation("team", "recent"), generation("team", "live")
	for _, id := range []store.MonitorIdentity{gone, recent, live} {
		claim(t, s, id, base.Add(-48*time.Hour))
		_, err := s.InsertChecks(c, []store.Check{check(id.UID, "eu", base.Add(-47*time.Hour), store.StatusUp, 10)})
		must(t, err)
		_, err = s.OpenIncident(c, store.Incident{Namespace: "team", MonitorID: id.UID, StartedAt: base.Add(-47 * time.Hour)})
		must(t, err)
	}
	must(t, s.RetireMonitorHistory(c, gone, base.Add(-25*time.Hour)))
	must(t, s.RetireMonitorHistory(c, recent, base.Add(-time.Hour)))
	unretired, err := s.UnretiredGenerations(c)
	must(t, err)
	if len(unretired) != 1 || unretired[0] != live {
		t.Fatalf("unretired generations: %+v, want only %+v", unretired, live)
	}
	n, err := s.PruneRetiredHistory(c, base.Add(-24*time.Hour))
	must(t, err)
	eq(t, "pruned generations", n, int64(1))
	for _, tc := range []struct {
		id   store.MonitorIdentity
		want int
	}{{gone, 0}, {recent, 1}, {live, 1}} {
		items, _, err := s.ListChecks(c, store.ChecksQuery{MonitorID: tc.id.UID})
		must(t, err)
		eq(t, tc.id.Name+" checks", len(items), tc.want)
		list, err := s.ListIncidents(c, store.IncidentQuery{MonitorID: tc.id.UID})
		must(t, err)
		eq(t, tc.id.Name+" incidents", list.Total, tc.want)
	}
	eq(t, "a pruned name adopts nothing", claim(t, s, generation("team", "gone"), base), "")
}
