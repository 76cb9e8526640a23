// Package storetest is the conformance suite every store.Store backend passes.
// A backend's test calls Run with a constructor that returns a fresh, empty
// store for each subtest.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Run runs the whole suite; newStore must return an empty store and arrange
// for it to be closed when the test ends.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"InsertChecksIdempotent", testInsertIdempotent},
		{"ConcurrentInsertChecks", testConcurrentInsert},
		{"CheckRoundTrip", testCheckRoundTrip},
		{"ListChecksPagination", testListChecksPagination},
		{"ListChecksTies", testListChecksTies},
		{"ListChecksFilters", testListChecksFilters},
		{"LatestChecks", testLatestChecks},
		{"MonitorView", testMonitorView},
		{"JudgeSerialisesOneMonitor", testJudge},
		{"UnsettledMonitors", testUnsettledMonitors},
		{"AgentContacts", testAgentContacts},
		{"AgentReports", testAgentReports},
		{"LatencyStats", testLatencyStats},
		{"RollupUptimeMatchesRaw", testRollupMatchesRaw},
		{"UptimeWindows", testUptimeWindows},
		{"UptimeDaily", testUptimeDaily},
		{"ResponseSeries", testResponseSeries},
		{"PruneChecks", testPruneChecks},
		{"CheckScreenshots", testCheckScreenshots},
		{"ResetStatsAndDeleteHistory", testDeleteHistory},
		{"AdoptHistory", testAdoptHistory},
		{"AdoptScope", testAdoptScope},
		{"AdoptConcurrent", testAdoptConcurrent},
		{"PruneRetiredHistory", testPruneRetired},
		{"IncidentLifecycle", testIncidentLifecycle},
		{"DuplicateOpenIncidentRefused", testDuplicateOpen},
		{"ConcurrentOpenIncident", testConcurrentOpen},
		{"ListIncidents", testListIncidents},
		{"NotesTimelineRunbook", testNotesTimelineRunbook},
		{"OutboxLeasing", testOutboxLeasing},
		{"OutboxLeaseExpiry", testOutboxLeaseExpiry},
		{"OutboxSameIDOnce", testOutboxSameIDOnce},
		{"OutboxConcurrentLeases", testOutboxConcurrentLeases},
		{"DeployEvents", testDeployEvents},
		{"DNSRecords", testDNS},
		{"PauseWindows", testPause},
		{"Heartbeats", testHeartbeats},
		{"APIKeys", testAPIKeys},
		{"CertObservations", testCertObservations},
		{"DomainExpiry", testDomainExpiry},
		{"ExpiryNotices", testExpiryNotices},
		{"AIContentAndDrafts", testAIContentAndDrafts},
		{"AIUsage", testAIUsage},
		{"UptimeDailyMany", testUptimeDailyMany},
		{"StatsMany", testStatsMany},
		{"Subscribers", testSubscribers},
		{"ThirdPartySubscriptions", testThirdPartySubscriptions},
		{"ThirdPartyState", testThirdPartyState},
		{"ThirdPartyPages", testThirdPartyPages},
		{"OTelSettings", testOTelSettings},
		{"SiteHealth", testSiteHealth},
		{"AlertRecipients", testAlertRecipients},
		{"Ping", func(t *testing.T, s store.Store) { must(t, s.Ping(ctx(t))) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
}

var base = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func check(monitor, region string, at time.Time, status store.CheckStatus, ms int64) store.Check {
	return store.Check{ID: uuid.NewString(), MonitorID: monitor, Namespace: "ns", Region: region,
		CheckedAt: at, Status: status, ResponseTimeMs: ms}
}

func testInsertIdempotent(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	batch := []store.Check{check(m, "eu", base, store.StatusUp, 100), check(m, "eu", base.Add(time.Minute), store.StatusDown, 900)}
	batch = append(batch, batch[0]) // duplicate within the batch
	n, err := s.InsertChecks(c, batch)
	must(t, err)
	eq(t, "inserted", n, 2)
	n, err = s.InsertChecks(c, append(batch, check(m, "eu", base.Add(2*time.Minute), store.StatusUp, 50)))
	must(t, err)
	eq(t, "re-inserted", n, 1)
	st, err := s.Stats(c, store.StatsQuery{MonitorID: m, From: base.Add(-time.Hour), To: base.Add(time.Hour)})
	must(t, err)
	eq(t, "total after re-insert (rollups not double counted)", st.Total(), int64(3))
	eq(t, "up", st.Up, int64(2))
	items, _, err := s.ListChecks(c, store.ChecksQuery{MonitorID: m, Limit: 10})
	must(t, err)
	eq(t, "stored", len(items), 3)
	_, err = s.InsertChecks(c, []store.Check{{ID: uuid.NewString(), MonitorID: m, CheckedAt: base, Status: "weird"}})
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("bad status: got %v, want ErrInvalid", err)
	}
	n, err = s.InsertChecks(c, nil)
	must(t, err)
	eq(t, "empty batch", n, 0)
}

// testConcurrentInsert sends overlapping batches at once (backends may
// merge concurrent batches into one transaction): every check is stored and
// rolled up once, and the batches' "inserted" counts add up to the checks
// that were new.
func testConcurrentInsert(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	var all []store.Check
	for i := range 400 {
		st := store.StatusUp
		if i%10 == 0 {
			st = store.StatusDown
		}
		all = append(all, check(m, []string{"eu", "us"}[i%2], base.Add(time.Duration(i)*time.Second), st, int64(50+i%100)))
	}
	// Eight batches of 100, each overlapping the next by half.
	var wg sync.WaitGroup
	var mu sync.Mutex
	inserted := 0
	for w := range 8 {
		batch := all[w*50 : min(w*50+100, len(all))]
		wg.Go(func() {
			n, err := s.InsertChecks(c, batch)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inserted += n
			mu.Unlock()
		})
	}
	wg.Wait()
	eq(t, "inserted counts add up to the distinct checks", inserted, len(all))
	st, err := s.Stats(c, store.StatsQuery{MonitorID: m, From: base.Add(-time.Hour), To: base.Add(time.Hour)})
	must(t, err)
	eq(t, "rolled up once", st.Total(), int64(len(all)))
	eq(t, "down rolled up once", st.Down, int64(40))
	n, err := s.InsertChecks(c, all[:100])
	must(t, err)
	eq(t, "nothing new on a retry", n, 0)
}

func testLatencyStats(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	_, err := s.InsertChecks(c, []store.Check{
		check(m, "eu", base, store.StatusUp, 100),                               // good
		check(m, "eu", base.Add(time.Minute), store.StatusDegraded, 300),        // good: at the threshold
		check(m, "eu", base.Add(2*time.Minute), store.StatusUp, 301),            // slow
		check(m, "us", base.Add(3*time.Minute), store.StatusDown, 10),           // failed
		check(m, "us", base.Add(4*time.Minute), store.StatusBlocked, 10),        // excluded
		check(m, "us", base.Add(5*time.Minute), store.StatusUnknown, 10),        // excluded
		check(m, "us", base.Add(time.Hour), store.StatusUp, 10),                 // outside the range
		check(uuid.NewString(), "us", base.Add(time.Minute), store.StatusUp, 1), // another monitor
	})
	must(t, err)
	good, total, err := s.LatencyStats(c, m, base, base.Add(30*time.Minute), 300)
	must(t, err)
	eq(t, "good", good, int64(2))
	eq(t, "total", total, int64(4))
}

func testCheckRoundTrip(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	code := 503
	at := time.Date(2026, 3, 10, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	in := store.Check{ID: uuid.NewString(), MonitorID: m, Namespace: "team-a", Region: "us-east", CheckedAt: at,
		Status: store.StatusDown, StatusCode: &code, ResponseTimeMs: 1234, ErrorType: "http_status",
		ErrorMessage: "503 Service Unavailable", Details: json.RawMessage(`{"a":1}`)}
	plain := check(m, "us-east", at.Add(-time.Second), store.StatusUp, 12)
	_, err := s.InsertChecks(c, []store.Check{in, plain})
	must(t, err)
	items, _, err := s.ListChecks(c, store.ChecksQuery{MonitorID: m})
	must(t, err)
	eq(t, "count", len(items), 2)
	got := items[0]
	eq(t, "id", got.ID, in.ID)
	eq(t, "checked_at UTC microseconds", got.CheckedAt, time.Date(2026, 3, 10, 11, 0, 0, 123456000, time.UTC))
	eq(t, "location", got.CheckedAt.Location(), time.UTC)
	eq(t, "namespace", got.Namespace, "team-a")
	eq(t, "region", got.Region, "us-east")
	eq(t, "status", got.Status, store.StatusDown)
	if got.StatusCode == nil || *got.StatusCode != 503 {
		t.Fatalf("status code: %v", got.StatusCode)
	}
	eq(t, "rt", got.ResponseTimeMs, int64(1234))
	eq(t, "error type", got.ErrorType, "http_status")
	eq(t, "error message", got.ErrorMessage, "503 Service Unavailable")
	var d map[string]int
	must(t, json.Unmarshal(got.Details, &d))
	eq(t, "details", d["a"], 1)
	p := items[1]
	if p.StatusCode != nil || p.ErrorType != "" || p.ErrorMessage != "" || p.Details != nil {
		t.Fatalf("null fields not null: %+v", p)
	}
}

func testListChecksPagination(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	var batch []store.Check
	// 25 checks 1 µs apart, plus odd sub-second offsets so rounding would show.
	for i := range 25 {
		batch = append(batch, check(m, "eu", base.Add(time.Duration(i)*time.Microsecond+987654*time.Microsecond), store.StatusUp, int64(i)))
	}
	_, err := s.InsertChecks(c, batch)
	must(t, err)
	var seen []store.Check
	var before *time.Time
	pages := 0
	for {
		items, next, err := s.ListChecks(c, store.ChecksQuery{MonitorID: m, Before: before, Limit: 10})
		must(t, err)
		pages++
		seen = append(seen, items...)
		if next == nil {
			break
		}
		eq(t, "cursor is last item time", *next, items[len(items)-1].CheckedAt)
		// The cursor goes through its wire form unchanged.
		wire := next.Format("2006-01-02T15:04:05.000000Z")
		parsed, err := time.Parse("2006-01-02T15:04:05.999999Z", wire)
		must(t, err)
		before = &parsed
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
	}
	eq(t, "pages", pages, 3)
	eq(t, "all checks once", len(seen), 25)
	for i := range seen {
		want := batch[24-i]
		eq(t, fmt.Sprintf("item %d", i), seen[i].ID, want.ID)
	}
	// Exactly limit items left: no further page.
	items, next, err := s.ListChecks(c, store.ChecksQuery{MonitorID: m, Limit: 25})
	must(t, err)
	eq(t, "full page", len(items), 25)
	if next != nil {
		t.Fatalf("next_before should be nil, got %v", next)
	}
}

func testListChecksTies(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	var batch []store.Check
	for i := range 4 { // 4 regions at the same instant, then 3 older
		batch = append(batch, check(m, fmt.Sprintf("r%d", i), base, store.StatusUp, 1))
	}
	for i := range 3 {
		batch = append(batch, check(m, "r0", base.Add(-time.Duration(i+1)*time.Second), store.StatusUp, 1))
	}
	batch = append(batch, check(m, "r0", base.Add(time.Second), store.StatusUp, 1))
	_, err := s.InsertChecks(c, batch)
	must(t, err)
	ids := map[string]bool{}
	var before *time.Time
	for range 10 {
		items, next, err := s.ListChecks(c, store.ChecksQuery{MonitorID: m, Before: before, Limit: 3})
		must(t, err)
		for _, it := range items {
			if ids[it.ID] {
				t.Fatalf("check %s returned twice", it.ID)
			}
			ids[it.ID] = true
		}
		if next == nil {
			break
		}
		before = next
	}
	eq(t, "every check seen across tied timestamps", len(ids), len(batch))
}

func testListChecksFilters(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	statuses := []store.CheckStatus{store.StatusUp, store.StatusDown, store.StatusDegraded, store.StatusBlocked, store.StatusUnknown}
	var batch []store.Check
	for i := range 20 {
		region := "eu"
		if i%2 == 1 {
			region = "us"
		}
		batch = append(batch, check(m, region, base.Add(time.Duration(i)*time.Second), statuses[i%5], 10))
	}
	batch = append(batch, check(uuid.NewString(), "eu", base, store.StatusDown, 1)) // other monitor
	_, err := s.InsertChecks(c, batch)
	must(t, err)
	count := func(q store.ChecksQuery) int {
		q.MonitorID, q.Limit = m, 500
		items, _, err := s.ListChecks(c, q)
		must(t, err)
		for _, it := range items {
			if it.MonitorID != m {
				t.Fatalf("other monitor leaked")
			}
			if q.Status == store.StatusProblem && it.Status == store.StatusUp {
				t.Fatalf("problem filter returned an up check")
			}
		}
		return len(items)
	}
	eq(t, "all", count(store.ChecksQuery{}), 20)
	eq(t, "problem", count(store.ChecksQuery{Status: store.StatusProblem}), 16)
	eq(t, "down", count(store.ChecksQuery{Status: store.StatusDown}), 4)
	eq(t, "region", count(store.ChecksQuery{Region: "us"}), 10)
	eq(t, "region+problem", count(store.ChecksQuery{Region: "us", Status: store.StatusProblem}), 8)
	from, to := base.Add(5*time.Second), base.Add(10*time.Second)
	eq(t, "from/to", count(store.ChecksQuery{From: &from, To: &to}), 5)
	_, _, err = s.ListChecks(c, store.ChecksQuery{MonitorID: m, Status: "nope"})
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("bad status filter: %v", err)
	}
}

func testLatestChecks(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	_, err := s.InsertChecks(c, []store.Check{
		check(m, "eu", base, store.StatusUp, 1), check(m, "eu", base.Add(time.Minute), store.StatusDown, 1),
		check(m, "us", base, store.StatusDegraded, 1),
	})
	must(t, err)
	got, err := s.LatestChecks(c, m)
	must(t, err)
	eq(t, "regions", len(got), 2)
	eq(t, "eu latest", got[0].Status, store.StatusDown)
	eq(t, "us latest", got[1].Status, store.StatusDegraded)
}

// rawStats computes what Stats must return, straight from the checks.
func rawStats(checks []store.Check, from, to time.Time, region string) store.Stats {
	var st store.Stats
	for _, c := range checks {
		at := store.UTC(c.CheckedAt)
		if at.Before(from) || !at.Before(to) || (region != "" && c.Region != region) {
			continue
		}
		st.AddCheck(c.Status, c.ResponseTimeMs)
	}
	return st
}

func sameStats(t *testing.T, what string, got, want store.Stats) {
	t.Helper()
	g, w := got, want
	if g.Up != w.Up || g.Down != w.Down || g.Degraded != w.Degraded || g.Blocked != w.Blocked || g.Unknown != w.Unknown ||
		g.ResponseSumMs != w.ResponseSumMs || !samePtr(g.ResponseMinMs, w.ResponseMinMs) || !samePtr(g.ResponseMaxMs, w.ResponseMaxMs) {
		t.Fatalf("%s: got %s, want %s", what, fmtStats(g), fmtStats(w))
	}
}

func samePtr(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func fmtStats(s store.Stats) string {
	p := func(v *int64) string {
		if v == nil {
			return "nil"
		}
		return fmt.Sprint(*v)
	}
	return fmt.Sprintf("{up %d down %d deg %d blk %d unk %d sum %d min %s max %s}", s.Up, s.Down, s.Degraded, s.Blocked, s.Unknown, s.ResponseSumMs, p(s.ResponseMinMs), p(s.ResponseMaxMs))
}

func testRollupMatchesRaw(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	statuses := []store.CheckStatus{store.StatusUp, store.StatusUp, store.StatusDown, store.StatusDegraded, store.StatusBlocked, store.StatusUp, store.StatusUnknown}
	var all []store.Check
	start := base.Add(-3*24*time.Hour - 17*time.Minute)
	// ~3.5 days of checks every 37 s with odd microseconds, two regions,
	// inserted in several batches.
	for i := 0; i < 8500; i++ {
		at := start.Add(time.Duration(i)*37*time.Second + time.Duration(i%1000)*time.Microsecond)
		region := "eu"
		if i%3 == 0 {
			region = "us"
		}
		all = append(all, check(m, region, at, statuses[(i*7+i/5)%len(statuses)], int64(20+i%300)))
	}
	for lo := 0; lo < len(all); lo += 1000 {
		_, err := s.InsertChecks(c, all[lo:min(lo+1000, len(all))])
		must(t, err)
	}
	ranges := [][2]time.Time{
		{start.Add(-time.Hour), start.Add(5 * 24 * time.Hour)},                                   // everything
		{start.Add(13*time.Second + 7*time.Microsecond), base.Add(-5*time.Hour - 3*time.Second)}, // odd edges spanning days
		{base.Add(-26 * time.Hour), base},                                                        // hour-aligned
		{base.Add(-90 * time.Second), base.Add(-30 * time.Second)},                               // sub-minute raw only
		{base.Add(-48 * time.Hour).Truncate(24 * time.Hour), base.Truncate(24 * time.Hour)},      // whole days
		{base, base}, // empty
	}
	for i, r := range ranges {
		for _, region := range []string{"", "us"} {
			got, err := s.Stats(c, store.StatsQuery{MonitorID: m, Region: region, From: r[0], To: r[1]})
			must(t, err)
			sameStats(t, fmt.Sprintf("range %d region %q", i, region), got, rawStats(all, r[0], r[1], region))
		}
		up, err := s.Uptime(c, m, r[0], r[1])
		must(t, err)
		want := rawStats(all, r[0], r[1], "").UptimePercent()
		if (up == nil) != (want == nil) || (up != nil && math.Abs(*up-*want) > 1e-9) {
			t.Fatalf("uptime range %d: got %v want %v", i, up, want)
		}
	}
	// The uptime rule itself.
	m2 := uuid.NewString()
	_, err := s.InsertChecks(c, []store.Check{
		check(m2, "eu", base, store.StatusUp, 10), check(m2, "eu", base.Add(time.Second), store.StatusDegraded, 30),
		check(m2, "eu", base.Add(2*time.Second), store.StatusDown, 5000), check(m2, "eu", base.Add(3*time.Second), store.StatusBlocked, 1),
		check(m2, "eu", base.Add(4*time.Second), store.StatusUnknown, 1),
	})
	must(t, err)
	st, err := s.Stats(c, store.StatsQuery{MonitorID: m2, From: base.Add(-time.Hour), To: base.Add(time.Hour)})
	must(t, err)
	if p := st.UptimePercent(); p == nil || math.Abs(*p-200.0/3) > 1e-9 {
		t.Fatalf("uptime rule: got %v, want 66.67", p)
	}
	eq(t, "total", st.Total(), int64(5))
	eq(t, "successful", st.Successful(), int64(2))
	eq(t, "failed", st.Failed(), int64(1))
	eq(t, "avg", st.AvgResponseMs(), 20.0)
	none, err := s.Uptime(c, uuid.NewString(), base.Add(-time.Hour), base)
	must(t, err)
	if none != nil {
		t.Fatalf("uptime without checks: %v", *none)
	}
}

func testUptimeDaily(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	now := time.Now().UTC()
	loc, err := time.LoadLocation("Asia/Kolkata") // +05:30: local days are not whole UTC hours
	if err != nil {
		loc = time.FixedZone("IST", 5*3600+1800)
	}
	var all []store.Check
	for i := range 3 * 24 * 12 { // every 5 minutes for 3 days
		at := now.Add(-time.Duration(i) * 5 * time.Minute)
		st := store.StatusUp
		if i%4 == 0 {
			st = store.StatusDown
		}
		all = append(all, check(m, "eu", at, st, 10))
	}
	_, err = s.InsertChecks(c, all)
	must(t, err)
	days, err := s.UptimeDaily(c, m, 5, loc)
	must(t, err)
	eq(t, "days", len(days), 5)
	eq(t, "today", days[4].Date, now.In(loc).Format("2006-01-02"))
	var total int64
	for i, d := range days {
		end := d.Start.AddDate(0, 0, 1)
		if end.After(store.UTC(time.Now())) {
			end = store.UTC(time.Now())
		}
		want := rawStats(all, d.Start, end, "")
		sameStats(t, "day "+d.Date, d.Stats, want)
		total += d.Stats.Total()
		if i == 0 && d.UptimePercent != nil {
			t.Fatalf("day without checks has uptime %v", *d.UptimePercent)
		}
	}
	eq(t, "all checks in some day", total, int64(len(all)))
}

func testResponseSeries(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	day := base.Truncate(24 * time.Hour)
	var all []store.Check
	for i := range 6 * 60 { // every minute for 6 hours
		all = append(all, check(m, "eu", day.Add(time.Duration(i)*time.Minute+time.Second), store.StatusUp, int64(i)))
	}
	all = append(all, check(m, "us", day.Add(30*time.Second), store.StatusUp, 1000))
	_, err := s.InsertChecks(c, all)
	must(t, err)
	pts, err := s.ResponseSeries(c, store.SeriesQuery{MonitorID: m, From: day, To: day.Add(6 * time.Hour), Step: time.Hour})
	must(t, err)
	eq(t, "hourly points", len(pts), 6)
	eq(t, "first at", pts[0].At, day)
	eq(t, "first count", pts[0].Stats.Successful(), int64(61))
	sameStats(t, "hour 2", pts[2].Stats, rawStats(all, day.Add(2*time.Hour), day.Add(3*time.Hour), ""))
	pts, err = s.ResponseSeries(c, store.SeriesQuery{MonitorID: m, Region: "eu", From: day.Add(10 * time.Minute), To: day.Add(40 * time.Minute), Step: 15 * time.Minute})
	must(t, err)
	eq(t, "15m points", len(pts), 2)
	eq(t, "15m second at", pts[1].At, day.Add(25*time.Minute))
	sameStats(t, "15m bucket", pts[0].Stats, rawStats(all, day.Add(10*time.Minute), day.Add(25*time.Minute), "eu"))
	if _, err := s.ResponseSeries(c, store.SeriesQuery{MonitorID: m, From: day, To: day.Add(time.Hour), Step: 10 * time.Second}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("sub-minute step: %v", err)
	}
}

func testPruneChecks(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	var all []store.Check
	for i := range 250 {
		all = append(all, check(m, "eu", base.Add(-time.Duration(i)*time.Minute), store.StatusUp, 5))
	}
	_, err := s.InsertChecks(c, all)
	must(t, err)
	cut := base.Add(-99*time.Minute - time.Second) // keeps i = 0..99
	n, err := s.PruneChecks(c, cut, 30)
	must(t, err)
	eq(t, "pruned", n, int64(150))
	items, _, err := s.ListChecks(c, store.ChecksQuery{MonitorID: m, Limit: 500})
	must(t, err)
	eq(t, "kept", len(items), 100)
	// Rollups outlive raw checks: a whole-hour range still counts everything.
	st, err := s.Stats(c, store.StatsQuery{MonitorID: m, From: base.Add(-5 * time.Hour), To: base.Add(time.Hour)})
	must(t, err)
	eq(t, "rollups kept", st.Total(), int64(250))
	n, err = s.PruneRollups(c, time.Minute, base.Add(time.Hour))
	must(t, err)
	if n == 0 {
		t.Fatal("no minute rollups pruned")
	}
	if _, err := s.PruneRollups(c, time.Second, base); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("bad step: %v", err)
	}
}

// testCheckScreenshots: a check's screenshot is stored once with it (a
// retried batch changes nothing), read by monitor and check id only, left
// out when too large, pruned with its check and deleted with the history.
func testCheckScreenshots(t *testing.T, s store.Store) {
	c := ctx(t)
	m, other := uuid.NewString(), uuid.NewString()
	old := check(m, "eu", base.Add(-2*time.Hour), store.StatusDown, 5)
	old.Screenshot = []byte("\xff\xd8\xffold")
	fresh := check(m, "eu", base, store.StatusDown, 5)
	fresh.Screenshot = []byte("\xff\xd8\xfffresh")
	huge := check(m, "us", base, store.StatusDown, 5)
	huge.Screenshot = make([]byte, store.MaxScreenshotBytes+1)
	plain := check(m, "us", base.Add(time.Minute), store.StatusUp, 5)
	n, err := s.InsertChecks(c, []store.Check{old, fresh, huge, plain})
	must(t, err)
	eq(t, "inserted", n, 4)
	again := fresh
	again.Screenshot = []byte("other bytes")
	n, err = s.InsertChecks(c, []store.Check{again})
	must(t, err)
	eq(t, "inserted again", n, 0)
	img, err := s.CheckScreenshot(c, m, fresh.ID)
	must(t, err)
	eq(t, "screenshot", string(img), string(fresh.Screenshot))
	for what, ids := range map[string][2]string{"another monitor's": {other, fresh.ID}, "too large": {m, huge.ID}, "none": {m, plain.ID}} {
		if _, err := s.CheckScreenshot(c, ids[0], ids[1]); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s screenshot: %v, want not found", what, err)
		}
	}
	items, _, err := s.ListChecks(c, store.ChecksQuery{MonitorID: m})
	must(t, err)
	for _, it := range items {
		if len(it.Screenshot) != 0 {
			t.Fatalf("check %s was read with its screenshot", it.ID)
		}
	}
	_, err = s.PruneChecks(c, base.Add(-time.Hour), 100)
	must(t, err)
	if _, err := s.CheckScreenshot(c, m, old.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pruned check's screenshot: %v", err)
	}
	_, err = s.CheckScreenshot(c, m, fresh.ID)
	must(t, err)
	must(t, s.DeleteMonitorHistory(c, m))
	if _, err := s.CheckScreenshot(c, m, fresh.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("screenshot after the history was deleted: %v", err)
	}
}

func testDeleteHistory(t *testing.T, s store.Store) {
	c := ctx(t)
	m, other := uuid.NewString(), uuid.NewString()
	_, err := s.InsertChecks(c, []store.Check{check(m, "eu", base, store.StatusUp, 1), check(other, "eu", base, store.StatusUp, 1)})
	must(t, err)
	inc, err := s.OpenIncident(c, store.Incident{MonitorID: m, StartedAt: base})
	must(t, err)
	_, err = s.AddNote(c, store.Note{IncidentID: inc.ID, Body: "x"})
	must(t, err)
	must(t, s.PauseMonitor(c, m, base))
	must(t, s.RecordHeartbeat(c, store.HeartbeatPing{MonitorID: m, At: base, OK: true}))
	_, err = s.RecordDNS(c, store.DNSRecord{MonitorID: m, ObservedAt: base, RecordType: "A", Answers: []string{"1.2.3.4"}})
	must(t, err)

	must(t, s.ResetStats(c, m))
	items, _, err := s.ListChecks(c, store.ChecksQuery{MonitorID: m})
	must(t, err)
	eq(t, "checks after reset", len(items), 0)
	st, err := s.Stats(c, store.StatsQuery{MonitorID: m, From: base.Add(-24 * time.Hour), To: base.Add(24 * time.Hour)})
	must(t, err)
	eq(t, "rollups after reset", st.Total(), int64(0))
	_, err = s.GetIncident(c, inc.ID)
	must(t, err) // reset keeps incidents

	must(t, s.DeleteMonitorHistory(c, m))
	if _, err := s.GetIncident(c, inc.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("incident after delete: %v", err)
	}
	notes, err := s.ListNotes(c, inc.ID)
	must(t, err)
	eq(t, "notes", len(notes), 0)
	tl, _, err := s.ListTimeline(c, store.TimelineQuery{IncidentID: inc.ID})
	must(t, err)
	eq(t, "timeline", len(tl), 0)
	pw, err := s.ListPauseWindows(c, m, base.Add(-time.Hour))
	must(t, err)
	eq(t, "pauses", len(pw), 0)
	hb, err := s.ListHeartbeats(c, m, 10)
	must(t, err)
	eq(t, "heartbeats", len(hb), 0)
	dns, err := s.ListDNSRecords(c, m, false, 10)
	must(t, err)
	eq(t, "dns", len(dns), 0)
	items, _, err = s.ListChecks(c, store.ChecksQuery{MonitorID: other})
	must(t, err)
	eq(t, "other monitor untouched", len(items), 1)
}

func testIncidentLifecycle(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	if _, err := s.GetOpenIncident(c, m); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no open incident: %v", err)
	}
	inc, err := s.OpenIncident(c, store.Incident{Namespace: "ns", MonitorID: m, MonitorName: "API", MonitorURL: "https://api.example.com",
		MonitorType: "http", StartedAt: base.Add(123 * time.Microsecond), Confirmations: 2, ConfirmingRegions: []string{"eu", "us"}, RegionsTotal: 3, Cause: "timeout"},
		store.OutboxEvent{Namespace: "ns", Kind: "monitor.down", Payload: json.RawMessage(`{"x":1}`), Channels: []string{"ch1"}})
	must(t, err)
	if inc.ID == "" {
		t.Fatal("no id assigned")
	}
	open, err := s.GetOpenIncident(c, m)
	must(t, err)
	eq(t, "open id", open.ID, inc.ID)
	eq(t, "started", open.StartedAt, base.Add(123*time.Microsecond))
	eq(t, "regions", fmt.Sprint(open.ConfirmingRegions), "[eu us]")
	eq(t, "regions total", open.RegionsTotal, 3)
	eq(t, "name", open.MonitorName, "API")
	if open.ResolvedAt != nil || open.AcknowledgedAt != nil {
		t.Fatalf("fresh incident: %+v", open)
	}
	ds, err := s.ListDeliveries(c, store.DeliveryQuery{ChannelID: "ch1"})
	must(t, err)
	eq(t, "delivery enqueued with the incident", len(ds), 1)

	tr, fl, n := true, true, 3
	reason := "maintenance"
	upd, err := s.UpdateIncident(c, inc.ID, store.IncidentUpdate{AlertSuppressed: &tr, SuppressionReason: &reason, IsFlapping: &fl, Confirmations: &n, ConfirmingRegions: []string{"eu", "us", "ap"}})
	must(t, err)
	if !upd.AlertSuppressed || upd.SuppressionReason != reason || !upd.IsFlapping || upd.Confirmations != 3 || len(upd.ConfirmingRegions) != 3 {
		t.Fatalf("update: %+v", upd)
	}
	if _, err := s.UpdateIncident(c, uuid.NewString(), store.IncidentUpdate{Confirmations: &n}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update missing: %v", err)
	}

	ack, err := s.AcknowledgeIncident(c, inc.ID, "alice", base.Add(time.Minute))
	must(t, err)
	eq(t, "ack by", ack.AcknowledgedBy, "alice")
	ack2, err := s.AcknowledgeIncident(c, inc.ID, "bob", base.Add(2*time.Minute))
	if !errors.Is(err, store.ErrIncidentAcknowledged) {
		t.Fatalf("second ack: %v", err)
	}
	eq(t, "first ack kept", ack2.AcknowledgedBy, "alice")

	until := base.Add(time.Hour)
	sn, err := s.SnoozeIncident(c, inc.ID, &until)
	must(t, err)
	if sn.SnoozedUntil == nil || !sn.SnoozedUntil.Equal(until) {
		t.Fatalf("snooze: %v", sn.SnoozedUntil)
	}
	sn, err = s.SnoozeIncident(c, inc.ID, nil)
	must(t, err)
	if sn.SnoozedUntil != nil {
		t.Fatal("unsnooze kept snoozed_until")
	}

	res, err := s.ResolveIncident(c, inc.ID, base.Add(10*time.Minute), true, "fixed the thing",
		store.OutboxEvent{Namespace: "ns", Kind: "incident.resolved", Channels: []string{"ch1"}})
	must(t, err)
	if res.ResolvedAt == nil || !res.ResolvedAt.Equal(base.Add(10*time.Minute)) || !res.ResolvedManually {
		t.Fatalf("resolve: %+v", res)
	}
	eq(t, "duration", res.DurationSeconds(time.Now()), int64(599))
	if _, err := s.ResolveIncident(c, inc.ID, base.Add(11*time.Minute), false, ""); !errors.Is(err, store.ErrIncidentResolved) {
		t.Fatalf("resolve twice: %v", err)
	}
	if _, err := s.ResolveIncident(c, uuid.NewString(), base, false, ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("resolve missing: %v", err)
	}
	if _, err := s.GetOpenIncident(c, m); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("open after resolve: %v", err)
	}
	notes, err := s.ListNotes(c, inc.ID)
	must(t, err)
	eq(t, "resolve note", len(notes), 1)
	eq(t, "resolve note body", notes[0].Body, "fixed the thing")
	ds, err = s.ListDeliveries(c, store.DeliveryQuery{ChannelID: "ch1"})
	must(t, err)
	eq(t, "deliveries", len(ds), 2)

	// A new incident may open once the previous one is resolved.
	again, err := s.OpenIncident(c, store.Incident{MonitorID: m, StartedAt: base.Add(time.Hour)})
	must(t, err)
	if again.ID == inc.ID {
		t.Fatal("same id reused")
	}
	if _, err := s.GetIncident(c, uuid.NewString()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}
}

func testDuplicateOpen(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	_, err := s.OpenIncident(c, store.Incident{MonitorID: m, StartedAt: base})
	must(t, err)
	_, err = s.OpenIncident(c, store.Incident{MonitorID: m, StartedAt: base.Add(time.Second)},
		store.OutboxEvent{Kind: "monitor.down", Channels: []string{"dup"}})
	if !errors.Is(err, store.ErrIncidentOpen) {
		t.Fatalf("duplicate open: got %v, want ErrIncidentOpen", err)
	}
	ds, err := s.ListDeliveries(c, store.DeliveryQuery{ChannelID: "dup"})
	must(t, err)
	eq(t, "refused open enqueued nothing", len(ds), 0)
	list, err := s.ListIncidents(c, store.IncidentQuery{MonitorID: m})
	must(t, err)
	eq(t, "incidents", list.Total, 1)
}

func testConcurrentOpen(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, dup := 0, 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.OpenIncident(c, store.Incident{MonitorID: m, StartedAt: base})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, store.ErrIncidentOpen):
				dup++
			default:
				t.Errorf("open: %v", err)
			}
		}()
	}
	wg.Wait()
	eq(t, "exactly one opened", ok, 1)
	eq(t, "others refused", dup, 7)
}

func testListIncidents(t *testing.T, s store.Store) {
	c := ctx(t)
	var ids []string
	mk := func(ns, name, url string, start time.Time, resolve, suppress, ack bool) {
		inc, err := s.OpenIncident(c, store.Incident{Namespace: ns, MonitorID: uuid.NewString(), MonitorName: name, MonitorURL: url, StartedAt: start, AlertSuppressed: suppress})
		must(t, err)
		if ack {
			_, err = s.AcknowledgeIncident(c, inc.ID, "me", start.Add(time.Minute))
			must(t, err)
		}
		if resolve {
			_, err = s.ResolveIncident(c, inc.ID, start.Add(time.Hour), false, "")
			must(t, err)
		}
		ids = append(ids, inc.ID)
	}
	for i := range 30 {
		mk("a", fmt.Sprintf("Service %d", i), fmt.Sprintf("https://svc%d.example.com", i), base.Add(time.Duration(i)*time.Hour), i%3 != 0, i%5 == 0, i%4 == 0)
	}
	mk("b", "Checkout API", "https://shop.example.com/checkout", base, false, false, false)
	list, err := s.ListIncidents(c, store.IncidentQuery{Namespace: "a"})
	must(t, err)
	eq(t, "total", list.Total, 30)
	eq(t, "default page size", len(list.Items), 25)
	eq(t, "newest first", list.Items[0].ID, ids[29])
	eq(t, "counts all", list.Counts.All, 30)
	eq(t, "counts ongoing", list.Counts.Ongoing, 10)
	eq(t, "counts resolved", list.Counts.Resolved, 20)
	eq(t, "counts suppressed", list.Counts.Suppressed, 6)
	p2, err := s.ListIncidents(c, store.IncidentQuery{Namespace: "a", Page: 2})
	must(t, err)
	eq(t, "page 2", len(p2.Items), 5)
	eq(t, "page 2 last", p2.Items[4].ID, ids[0])
	for st, want := range map[store.IncidentStatus]int{store.IncidentOngoing: 10, store.IncidentResolved: 20, store.IncidentSuppressed: 6, store.IncidentAcknowledged: 8} {
		l, err := s.ListIncidents(c, store.IncidentQuery{Namespace: "a", Status: st, PageSize: 100})
		must(t, err)
		eq(t, string(st)+" total", l.Total, want)
		eq(t, string(st)+" items", len(l.Items), want)
		eq(t, string(st)+" counts unaffected", l.Counts.All, 30)
	}
	from, to := base.Add(10*time.Hour), base.Add(20*time.Hour)
	l, err := s.ListIncidents(c, store.IncidentQuery{Namespace: "a", From: &from, To: &to})
	must(t, err)
	eq(t, "from/to", l.Total, 10)
	l, err = s.ListIncidents(c, store.IncidentQuery{Q: "CHECKOUT"})
	must(t, err)
	eq(t, "q by name across namespaces", l.Total, 1)
	l, err = s.ListIncidents(c, store.IncidentQuery{Namespace: "a", Q: "svc1"})
	must(t, err)
	eq(t, "q by url", l.Total, 11) // svc1, svc10..svc19
	l, err = s.ListIncidents(c, store.IncidentQuery{Namespace: "a", Q: "100%_"})
	must(t, err)
	eq(t, "q wildcards are literal", l.Total, 0)
	if _, err := s.ListIncidents(c, store.IncidentQuery{Status: "bogus"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("bad status: %v", err)
	}
	l, err = s.ListIncidents(c, store.IncidentQuery{Namespace: "a", PageSize: 1000})
	must(t, err)
	eq(t, "page size capped", len(l.Items), 30)
}

func testNotesTimelineRunbook(t *testing.T, s store.Store) {
	c := ctx(t)
	inc, err := s.OpenIncident(c, store.Incident{MonitorID: uuid.NewString(), StartedAt: base})
	must(t, err)
	n1, err := s.AddNote(c, store.Note{IncidentID: inc.ID, Body: "looking", Author: "alice", CreatedAt: base.Add(time.Minute)})
	must(t, err)
	_, err = s.AddNote(c, store.Note{IncidentID: inc.ID, Body: "update", Public: true, CreatedAt: base.Add(2 * time.Minute)})
	must(t, err)
	if _, err := s.AddNote(c, store.Note{IncidentID: uuid.NewString(), Body: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("note on missing incident: %v", err)
	}
	notes, err := s.ListNotes(c, inc.ID)
	must(t, err)
	eq(t, "notes", len(notes), 2)
	eq(t, "order", notes[0].ID, n1.ID)
	eq(t, "public", notes[1].Public, true)
	must(t, s.DeleteNote(c, inc.ID, n1.ID))
	if err := s.DeleteNote(c, inc.ID, n1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}

	must(t, s.SetPostmortem(c, inc.ID, "root cause: dns"))
	if err := s.SetPostmortem(c, uuid.NewString(), "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("postmortem missing: %v", err)
	}
	got, err := s.GetIncident(c, inc.ID)
	must(t, err)
	eq(t, "postmortem", got.Postmortem, "root cause: dns")

	rb, err := s.AttachRunbook(c, inc.ID, store.IncidentRunbook{RunbookID: "rb1", Name: "restart", Steps: []store.RunbookStep{{ID: "s1", Title: "check"}, {Title: "restart"}}})
	must(t, err)
	if rb.Runbook == nil || len(rb.Runbook.Steps) != 2 || rb.Runbook.Steps[1].ID == "" {
		t.Fatalf("runbook: %+v", rb.Runbook)
	}
	rb, err = s.SetRunbookStep(c, inc.ID, "s1", true, base.Add(3*time.Minute))
	must(t, err)
	if !rb.Runbook.Steps[0].Completed || rb.Runbook.Steps[0].CompletedAt == nil || rb.Runbook.Steps[1].Completed {
		t.Fatalf("step: %+v", rb.Runbook.Steps)
	}
	if _, err := s.SetRunbookStep(c, inc.ID, "nope", true, base); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing step: %v", err)
	}

	ev, err := s.AppendTimeline(c, store.TimelineEvent{IncidentID: inc.ID, Kind: "check", At: base.Add(30 * time.Second), Data: json.RawMessage(`{"region":"eu"}`)},
		store.TimelineEvent{IncidentID: inc.ID, Kind: "alert", At: base.Add(30 * time.Second)})
	must(t, err)
	if ev[0].ID == 0 || ev[1].ID <= ev[0].ID {
		t.Fatalf("timeline ids: %+v", ev)
	}
	var all []store.TimelineEvent
	cursor := ""
	for range 20 {
		page, next, err := s.ListTimeline(c, store.TimelineQuery{IncidentID: inc.ID, Cursor: cursor, Limit: 2})
		must(t, err)
		all = append(all, page...)
		if next == "" {
			break
		}
		cursor = next
	}
	// opened, check, alert, note, note, postmortem, runbook ×2
	eq(t, "timeline length", len(all), 8)
	for i := 1; i < len(all); i++ {
		if all[i].At.Before(all[i-1].At) {
			t.Fatalf("timeline out of order at %d", i)
		}
	}
	eq(t, "first", all[0].Kind, store.TimelineOpened)
	eq(t, "check before alert", all[1].Kind, "check")
	eq(t, "alert", all[2].Kind, "alert")
	if _, _, err := s.ListTimeline(c, store.TimelineQuery{IncidentID: inc.ID, Cursor: "garbage"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("bad cursor: %v", err)
	}
}

func testOutboxLeasing(t *testing.T, s store.Store) {
	c := ctx(t)
	must(t, s.EnqueueEvents(c, store.OutboxEvent{Namespace: "ns", Kind: "monitor.down", Payload: json.RawMessage(`{"n":1}`), Channels: []string{"a", "b"}},
		store.OutboxEvent{Namespace: "ns", Kind: "monitor.up", Channels: []string{"a"}}))
	l1, err := s.LeaseDeliveries(c, "owner-1", 2, time.Minute)
	must(t, err)
	eq(t, "owner-1 leased", len(l1), 2)
	l2, err := s.LeaseDeliveries(c, "owner-2", 10, time.Minute)
	must(t, err)
	eq(t, "owner-2 gets the rest", len(l2), 1)
	l3, err := s.LeaseDeliveries(c, "owner-3", 10, time.Minute)
	must(t, err)
	eq(t, "nothing left", len(l3), 0)
	seen := map[string]bool{}
	for _, d := range append(l1, l2...) {
		if seen[d.ID] {
			t.Fatalf("delivery %s leased twice", d.ID)
		}
		seen[d.ID] = true
		if d.Status != store.DeliveryPending || d.Kind == "" || len(d.Payload) == 0 {
			t.Fatalf("delivery: %+v", d)
		}
	}
	d := l1[0]
	eq(t, "leased by", d.LeasedBy, "owner-1")
	// Only the owner can finish it.
	if err := s.CompleteDelivery(c, "owner-2", store.DeliveryAttempt{DeliveryID: d.ID, StatusCode: 200}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("complete by other owner: %v", err)
	}
	must(t, s.RetryDelivery(c, "owner-1", store.DeliveryAttempt{DeliveryID: d.ID, StatusCode: 503, Excerpt: "busy", LatencyMs: 12}, time.Now().Add(-time.Second)))
	got, err := s.GetDelivery(c, d.ID)
	must(t, err)
	eq(t, "retry keeps pending", got.Status, store.DeliveryPending)
	eq(t, "attempts", got.Attempts, 1)
	eq(t, "lease released", got.LeasedBy, "")
	eq(t, "last error", got.LastError, "status 503")
	// Due again: lease it again and complete.
	again, err := s.LeaseDeliveries(c, "owner-2", 10, time.Minute)
	must(t, err)
	eq(t, "re-leased after retry", len(again), 1)
	eq(t, "same delivery id across retries", again[0].ID, d.ID)
	must(t, s.CompleteDelivery(c, "owner-2", store.DeliveryAttempt{DeliveryID: d.ID, StatusCode: 200, LatencyMs: 5}))
	got, err = s.GetDelivery(c, d.ID)
	must(t, err)
	eq(t, "delivered", got.Status, store.DeliveryDelivered)
	eq(t, "attempts", got.Attempts, 2)
	if err := s.CompleteDelivery(c, "owner-2", store.DeliveryAttempt{DeliveryID: d.ID, StatusCode: 200}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("complete twice: %v", err)
	}
	atts, err := s.ListDeliveryAttempts(c, d.ID)
	must(t, err)
	eq(t, "attempt log", len(atts), 2)
	eq(t, "attempt 1", atts[0].Attempt, 1)
	eq(t, "attempt 1 code", atts[0].StatusCode, 503)
	eq(t, "attempt 1 excerpt", atts[0].Excerpt, "busy")
	eq(t, "attempt 2 latency", atts[1].LatencyMs, int64(5))
	// A retry scheduled in the future is not due.
	d2 := l1[1]
	must(t, s.RetryDelivery(c, "owner-1", store.DeliveryAttempt{DeliveryID: d2.ID, Error: "timeout"}, time.Now().Add(time.Hour)))
	none, err := s.LeaseDeliveries(c, "owner-3", 10, time.Minute)
	must(t, err)
	eq(t, "future retry not due", len(none), 0)
	must(t, s.FailDelivery(c, "owner-2", store.DeliveryAttempt{DeliveryID: l2[0].ID, StatusCode: 404}))
	got, err = s.GetDelivery(c, l2[0].ID)
	must(t, err)
	eq(t, "failed", got.Status, store.DeliveryFailed)
	failed, err := s.ListDeliveries(c, store.DeliveryQuery{Status: store.DeliveryFailed})
	must(t, err)
	eq(t, "list failed", len(failed), 1)
	if _, err := s.GetDelivery(c, uuid.NewString()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing delivery: %v", err)
	}
	// Pruning keeps events with pending deliveries.
	n, err := s.PruneOutbox(c, time.Now().Add(time.Hour))
	must(t, err)
	eq(t, "pruned finished events", n, int64(1)) // monitor.up (failed); monitor.down still has a pending retry
	if _, err := s.GetDelivery(c, l2[0].ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pruned delivery still there: %v", err)
	}
	if _, err := s.LeaseDeliveries(c, "", 1, time.Minute); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("lease without owner: %v", err)
	}
}

// testOutboxSameIDOnce: enqueueing an event id again (a retried producer)
// stores no second event and no second delivery.
func testOutboxSameIDOnce(t *testing.T, s store.Store) {
	c := ctx(t)
	ev := store.OutboxEvent{ID: "7f1c9a52-0d7e-5a4e-9d43-1b6f0c2a9e11", Namespace: "ns", Kind: "slo.burning_fast", Channels: []string{"a", "b"}}
	must(t, s.EnqueueEvents(c, ev))
	must(t, s.EnqueueEvents(c, ev, store.OutboxEvent{Namespace: "ns", Kind: "monitor.down", Channels: []string{"a"}}))
	all, err := s.LeaseDeliveries(c, "owner", 10, time.Minute)
	must(t, err)
	eq(t, "deliveries: two of the event once, one of the other", len(all), 3)
	n := 0
	for _, d := range all {
		if d.EventID == ev.ID {
			n++
		}
	}
	eq(t, "deliveries of the repeated event", n, 2)
}

func testOutboxLeaseExpiry(t *testing.T, s store.Store) {
	c := ctx(t)
	must(t, s.EnqueueEvents(c, store.OutboxEvent{Kind: "monitor.down", Channels: []string{"a"}}))
	l1, err := s.LeaseDeliveries(c, "crashed", 1, 300*time.Millisecond)
	must(t, err)
	eq(t, "leased", len(l1), 1)
	l2, err := s.LeaseDeliveries(c, "other", 1, time.Minute)
	must(t, err)
	eq(t, "held while leased", len(l2), 0)
	time.Sleep(400 * time.Millisecond)
	l2, err = s.LeaseDeliveries(c, "other", 1, time.Minute)
	must(t, err)
	eq(t, "taken over after expiry", len(l2), 1)
	eq(t, "same delivery", l2[0].ID, l1[0].ID)
	if err := s.CompleteDelivery(c, "crashed", store.DeliveryAttempt{DeliveryID: l1[0].ID, StatusCode: 200}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale owner completed: %v", err)
	}
	must(t, s.CompleteDelivery(c, "other", store.DeliveryAttempt{DeliveryID: l1[0].ID, StatusCode: 200}))

	// A released lease is free at once; someone else's lease is kept.
	must(t, s.EnqueueEvents(c, store.OutboxEvent{Kind: "monitor.down", Channels: []string{"b", "c"}}))
	held, err := s.LeaseDeliveries(c, "stopping", 2, time.Hour)
	must(t, err)
	eq(t, "both leased", len(held), 2)
	must(t, s.ReleaseDeliveries(c, "someone-else", held[0].ID, held[1].ID))
	none, err := s.LeaseDeliveries(c, "other", 2, time.Hour)
	must(t, err)
	eq(t, "a stranger cannot release", len(none), 0)
	must(t, s.ReleaseDeliveries(c, "stopping", held[0].ID))
	again, err := s.LeaseDeliveries(c, "other", 2, time.Hour)
	must(t, err)
	eq(t, "released one taken at once", len(again), 1)
	eq(t, "the released one", again[0].ID, held[0].ID)
	eq(t, "no attempt counted", again[0].Attempts, 0)
	must(t, s.ReleaseDeliveries(c, "stopping"))
}

func testOutboxConcurrentLeases(t *testing.T, s store.Store) {
	c := ctx(t)
	var evs []store.OutboxEvent
	for range 60 {
		evs = append(evs, store.OutboxEvent{Kind: "monitor.down", Channels: []string{"a"}})
	}
	must(t, s.EnqueueEvents(c, evs...))
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("w%d", w)
			for range 30 {
				ds, err := s.LeaseDeliveries(c, owner, 3, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, d := range ds {
					if prev, dup := seen[d.ID]; dup {
						t.Errorf("delivery %s leased by %s and %s", d.ID, prev, owner)
					}
					seen[d.ID] = owner
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	eq(t, "every delivery leased exactly once", len(seen), 60)
}

func testDeployEvents(t *testing.T, s store.Store) {
	c := ctx(t)
	for i := range 5 {
		_, err := s.InsertDeployEvent(c, store.DeployEvent{Namespace: "ns", ServiceName: fmt.Sprintf("svc%d", i%2), Version: fmt.Sprint(i),
			DeployedAt: base.Add(time.Duration(i) * time.Minute), Metadata: json.RawMessage(`{"sha":"abc"}`)})
		must(t, err)
	}
	_, err := s.InsertDeployEvent(c, store.DeployEvent{Namespace: "other", ServiceName: "x"})
	must(t, err)
	evs, err := s.ListDeployEvents(c, store.DeployEventQuery{Namespace: "ns", Limit: 3})
	must(t, err)
	eq(t, "limit", len(evs), 3)
	eq(t, "newest first", evs[0].Version, "4")
	evs, err = s.ListDeployEvents(c, store.DeployEventQuery{Namespace: "ns", ServiceName: "svc1"})
	must(t, err)
	eq(t, "by service", len(evs), 2)
	var meta map[string]string
	must(t, json.Unmarshal(evs[0].Metadata, &meta))
	eq(t, "metadata", meta["sha"], "abc")
	if _, err := s.InsertDeployEvent(c, store.DeployEvent{}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("no service name: %v", err)
	}
}

func testDNS(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	rec := func(at time.Duration, answers ...string) store.DNSRecord {
		r, err := s.RecordDNS(c, store.DNSRecord{MonitorID: m, ObservedAt: base.Add(at), RecordType: "A", Answers: answers})
		must(t, err)
		return r
	}
	eq(t, "first is no change", rec(0, "1.1.1.1", "2.2.2.2").Changed, false)
	eq(t, "same set, other order", rec(time.Minute, "2.2.2.2", "1.1.1.1").Changed, false)
	eq(t, "changed", rec(2*time.Minute, "3.3.3.3").Changed, true)
	_, err := s.RecordDNS(c, store.DNSRecord{MonitorID: m, ObservedAt: base.Add(3 * time.Minute), RecordType: "AAAA", Answers: []string{"::1"}})
	must(t, err)
	all, err := s.ListDNSRecords(c, m, false, 10)
	must(t, err)
	eq(t, "all", len(all), 4)
	eq(t, "newest first", all[0].RecordType, "AAAA")
	changes, err := s.ListDNSRecords(c, m, true, 10)
	must(t, err)
	eq(t, "changes", len(changes), 1)
	eq(t, "answers", fmt.Sprint(changes[0].Answers), "[3.3.3.3]")
}

func testPause(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	must(t, s.PauseMonitor(c, m, base))
	must(t, s.PauseMonitor(c, m, base.Add(time.Minute))) // already paused: no-op
	must(t, s.ResumeMonitor(c, m, base.Add(time.Hour)))
	must(t, s.ResumeMonitor(c, m, base.Add(2*time.Hour))) // not paused: no-op
	must(t, s.PauseMonitor(c, m, base.Add(3*time.Hour)))
	ws, err := s.ListPauseWindows(c, m, base.Add(-time.Hour))
	must(t, err)
	eq(t, "windows", len(ws), 2)
	eq(t, "first paused", ws[0].PausedAt, base)
	if ws[0].ResumedAt == nil || !ws[0].ResumedAt.Equal(base.Add(time.Hour)) || ws[1].ResumedAt != nil {
		t.Fatalf("windows: %+v", ws)
	}
	ws, err = s.ListPauseWindows(c, m, base.Add(90*time.Minute))
	must(t, err)
	eq(t, "windows since", len(ws), 1)
}

func testHeartbeats(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	d := int64(1500)
	code := 0
	must(t, s.RecordHeartbeat(c, store.HeartbeatPing{MonitorID: m, At: base, OK: true, DurationMs: &d}))
	must(t, s.RecordHeartbeat(c, store.HeartbeatPing{MonitorID: m, At: base.Add(time.Minute), OK: false, StatusCode: &code}))
	hb, err := s.ListHeartbeats(c, m, 10)
	must(t, err)
	eq(t, "pings", len(hb), 2)
	eq(t, "newest first", hb[0].OK, false)
	if hb[0].StatusCode == nil || hb[0].DurationMs != nil || hb[1].DurationMs == nil || *hb[1].DurationMs != 1500 {
		t.Fatalf("pings: %+v", hb)
	}
}

func testAPIKeys(t *testing.T, s store.Store) {
	c := ctx(t)
	must(t, s.TouchAPIKey(c, "k1", base.Add(time.Minute)))
	must(t, s.TouchAPIKey(c, "k1", base)) // older: kept later value
	must(t, s.TouchAPIKey(c, "k2", base))
	got, err := s.APIKeyLastUsed(c, "k1", "k2", "k3")
	must(t, err)
	eq(t, "keys", len(got), 2)
	eq(t, "k1", got["k1"], base.Add(time.Minute))
	eq(t, "k2", got["k2"], base)
}

func testUptimeDailyMany(t *testing.T, s store.Store) {
	c := ctx(t)
	now := time.Now().UTC()
	ids := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()} // the last has no checks
	var all []store.Check
	for i := range 3 * 24 * 12 { // every 5 minutes for 3 days
		at := now.Add(-time.Duration(i)*5*time.Minute - 7*time.Second)
		for k, m := range ids[:2] {
			st := store.StatusUp
			if (i+k)%(3+k) == 0 {
				st = store.StatusDown
			}
			all = append(all, check(m, []string{"eu", "us"}[i%2], at, st, int64(10+i%50)))
		}
	}
	_, err := s.InsertChecks(c, all)
	must(t, err)
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		kolkata = time.FixedZone("IST", 5*3600+1800)
	}
	for _, loc := range []*time.Location{time.UTC, kolkata} {
		many, err := s.UptimeDailyMany(c, ids, 5, loc)
		must(t, err)
		eq(t, "monitors", len(many), len(ids))
		for _, id := range ids {
			one, err := s.UptimeDaily(c, id, 5, loc)
			must(t, err)
			got := many[id]
			eq(t, "days", len(got), len(one))
			for i := range one {
				eq(t, "date", got[i].Date, one[i].Date)
				sameStats(t, loc.String()+" "+id+" "+one[i].Date, got[i].Stats, one[i].Stats)
				eq(t, "uptime known", got[i].UptimePercent == nil, one[i].UptimePercent == nil)
			}
		}
	}
	empty, err := s.UptimeDailyMany(c, nil, 90, time.UTC)
	must(t, err)
	eq(t, "no monitors", len(empty), 0)
}

func testStatsMany(t *testing.T, s store.Store) {
	c := ctx(t)
	ids := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}
	var all []store.Check
	for i := range 2000 {
		at := base.Add(-time.Duration(i) * 97 * time.Second)
		for k, m := range ids[:2] {
			st := []store.CheckStatus{store.StatusUp, store.StatusDown, store.StatusDegraded, store.StatusBlocked}[(i+k)%4]
			all = append(all, check(m, "eu", at, st, int64(i%300)))
		}
	}
	_, err := s.InsertChecks(c, all)
	must(t, err)
	for _, r := range []struct{ from, to time.Time }{
		{base.Add(-24 * time.Hour), base},
		{base.Add(-30*time.Hour - 17*time.Second), base.Add(-3*time.Minute + 5*time.Second)},
		{base.Add(-90 * 24 * time.Hour), base.Add(time.Hour)},
	} {
		got, err := s.StatsMany(c, ids, r.from, r.to)
		must(t, err)
		eq(t, "monitors", len(got), len(ids))
		for _, id := range ids {
			var mine []store.Check
			for _, ch := range all {
				if ch.MonitorID == id {
					mine = append(mine, ch)
				}
			}
			sameStats(t, "stats "+id, got[id], rawStats(mine, r.from, r.to, ""))
		}
	}
}

func testSubscribers(t *testing.T, s store.Store) {
	c := ctx(t)
	page := uuid.NewString()
	sent := base.Add(time.Minute)
	sub, err := s.AddSubscriber(c, store.Subscriber{PageUID: page, Namespace: "ns", Channel: store.SubscriberEmail,
		Address: "a@example.com", ConfirmTokenHash: "hash-1", ConfirmationSentAt: &sent, CreatedAt: base})
	must(t, err)
	if sub.ID == "" || sub.Confirmed() {
		t.Fatalf("new subscriber: %+v", sub)
	}
	dup, err := s.AddSubscriber(c, store.Subscriber{PageUID: page, Channel: store.SubscriberEmail, Address: "a@example.com", ConfirmTokenHash: "hash-x"})
	if !errors.Is(err, store.ErrSubscriberExists) || dup.ID != sub.ID {
		t.Fatalf("duplicate subscriber: %v %+v", err, dup)
	}
	if _, err := s.AddSubscriber(c, store.Subscriber{PageUID: page, Channel: "sms", Address: "+1"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("bad channel: %v", err)
	}
	hook, err := s.AddSubscriber(c, store.Subscriber{PageUID: page, Channel: store.SubscriberWebhook, Address: "https://hooks.example.com/x",
		ConfirmTokenHash: "hash-2", CreatedAt: base.Add(time.Second)})
	must(t, err)
	_, err = s.AddSubscriber(c, store.Subscriber{PageUID: uuid.NewString(), Channel: store.SubscriberEmail, Address: "a@example.com",
		ConfirmTokenHash: "hash-3", CreatedAt: base})
	must(t, err)

	got, err := s.GetSubscriber(c, sub.ID)
	must(t, err)
	eq(t, "token hash", got.ConfirmTokenHash, "hash-1")
	eq(t, "address", got.Address, "a@example.com")
	eq(t, "sent", got.ConfirmationSentAt.Equal(sent), true)
	if _, err := s.GetSubscriber(c, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}

	if _, err := s.ConfirmSubscriber(c, "wrong", base); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("confirm with a wrong token: %v", err)
	}
	must(t, s.RenewSubscriberToken(c, sub.ID, "hash-1b", base.Add(time.Hour)))
	if _, err := s.ConfirmSubscriber(c, "hash-1", base); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("confirm with a replaced token: %v", err)
	}
	conf, err := s.ConfirmSubscriber(c, "hash-1b", base.Add(2*time.Hour))
	must(t, err)
	if !conf.Confirmed() || conf.ID != sub.ID || conf.ConfirmTokenHash != "" {
		t.Fatalf("confirmed: %+v", conf)
	}
	if _, err := s.ConfirmSubscriber(c, "hash-1b", base.Add(3*time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a token confirms once: %v", err)
	}
	if err := s.RenewSubscriberToken(c, sub.ID, "hash-1c", base); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("renew a confirmed subscriber: %v", err)
	}

	list, err := s.ListSubscribers(c, page, false)
	must(t, err)
	eq(t, "all", len(list), 2)
	eq(t, "oldest first", list[0].ID, sub.ID)
	list, err = s.ListSubscribers(c, page, true)
	must(t, err)
	eq(t, "confirmed", len(list), 1)
	eq(t, "confirmed id", list[0].ID, sub.ID)

	n, err := s.PruneSubscribers(c, base.Add(2*time.Second))
	must(t, err)
	eq(t, "pruned pending", n, int64(2))
	if _, err := s.GetSubscriber(c, hook.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pruned subscriber: %v", err)
	}
	must(t, s.DeleteSubscriber(c, sub.ID))
	if err := s.DeleteSubscriber(c, sub.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	list, err = s.ListSubscribers(c, page, false)
	must(t, err)
	eq(t, "left", len(list), 0)
}
