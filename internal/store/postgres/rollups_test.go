package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/postgres"
)

var day0 = time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)

// genChecks makes n checks of monitors in regions over span from day0 with
// every status and varied response times, in random order.
func genChecks(rng *rand.Rand, monitors, regions []string, n int, span time.Duration) []store.Check {
	statuses := []store.CheckStatus{store.StatusUp, store.StatusUp, store.StatusUp, store.StatusDown,
		store.StatusDegraded, store.StatusBlocked, store.StatusUnknown}
	out := make([]store.Check, n)
	for i := range out {
		out[i] = store.Check{ID: uuid.NewString(), MonitorID: monitors[rng.IntN(len(monitors))], Namespace: "ns",
			Region: regions[rng.IntN(len(regions))], CheckedAt: day0.Add(time.Duration(rng.Int64N(int64(span)))),
			Status: statuses[rng.IntN(len(statuses))], ResponseTimeMs: rng.Int64N(5000)}
	}
	return out
}

// wantStats is Stats computed from the checks themselves.
func wantStats(checks []store.Check, monitor string, from, to time.Time) store.Stats {
	var st store.Stats
	for _, c := range checks {
		if c.MonitorID == monitor && !c.CheckedAt.Before(from) && c.CheckedAt.Before(to) {
			st.AddCheck(c.Status, c.ResponseTimeMs)
		}
	}
	return st
}

func fmtStats(st store.Stats) string {
	p := func(v *int64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprint(*v)
	}
	return fmt.Sprintf("%d/%d/%d/%d/%d sum=%d min=%s max=%s", st.Up, st.Down, st.Degraded, st.Blocked, st.Unknown,
		st.ResponseSumMs, p(st.ResponseMinMs), p(st.ResponseMaxMs))
}

// figures renders what the store answers about monitors from its rollups:
// Stats over whole days, over unaligned ranges (minute, hour and day buckets
// plus raw edges), StatsMany, UptimeWindows, and hourly and per-minute
// series.
func figures(t *testing.T, s store.Store, monitors []string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	ranges := [][2]time.Time{
		{day0.Add(-24 * time.Hour), day0.Add(96 * time.Hour)},
		{day0.Add(7*time.Hour + 13*time.Minute + 7*time.Second), day0.Add(50*time.Hour + 59*time.Minute + 31*time.Second)},
		{day0.Add(23 * time.Hour), day0.Add(25 * time.Hour)},
	}
	for _, m := range monitors {
		for _, r := range ranges {
			st, err := s.Stats(ctx, store.StatsQuery{MonitorID: m, From: r[0], To: r[1]})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %s stats %s\n", m, r[0].Format(time.RFC3339), fmtStats(st))
			st, err = s.Stats(ctx, store.StatsQuery{MonitorID: m, Region: "eu", From: r[0], To: r[1]})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %s eu %s\n", m, r[0].Format(time.RFC3339), fmtStats(st))
		}
		ups, err := s.UptimeWindows(ctx, m, day0.Add(50*time.Hour+59*time.Minute), 48*time.Hour, 24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range ups {
			if u == nil {
				t.Fatalf("%s: no uptime", m)
			}
			fmt.Fprintf(&b, "%s uptime %.9f\n", m, *u)
		}
		for _, step := range []time.Duration{time.Hour, time.Minute} {
			ps, err := s.ResponseSeries(ctx, store.SeriesQuery{MonitorID: m, From: day0.Add(22 * time.Hour), To: day0.Add(26 * time.Hour), Step: step})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				fmt.Fprintf(&b, "%s series %s %s\n", m, p.At.Format(time.RFC3339), fmtStats(p.Stats))
			}
		}
	}
	many, err := s.StatsMany(ctx, monitors, ranges[1][0], ranges[1][1])
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range monitors {
		fmt.Fprintf(&b, "%s many %s\n", m, fmtStats(many[m]))
	}
	return b.String()
}

// rollupRows reads the rollups table (compacted rows only).
func rollupRows(t *testing.T, s *postgres.Store) map[store.RollupKey]string {
	t.Helper()
	rows, err := s.Pool().Query(context.Background(), `SELECT monitor_id, region, step, bucket, up, down, degraded, blocked, unknown, rt_sum, rt_min, rt_max FROM rollups`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[store.RollupKey]string{}
	for rows.Next() {
		var r store.Rollup
		if err := rows.Scan(&r.MonitorID, &r.Region, &r.Step, &r.Bucket, &r.Up, &r.Down, &r.Degraded, &r.Blocked, &r.Unknown,
			&r.ResponseSumMs, &r.ResponseMinMs, &r.ResponseMaxMs); err != nil {
			t.Fatal(err)
		}
		out[r.RollupKey] = fmtStats(r.Stats)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantRollups is what the rollups table holds once every check is folded.
func wantRollups(checks []store.Check) map[store.RollupKey]string {
	out := map[store.RollupKey]string{}
	for _, r := range store.AggregateRollups(checks) {
		out[r.RollupKey] = fmtStats(r.Stats)
	}
	return out
}

func equalRollups(t *testing.T, got, want map[store.RollupKey]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("rollups: %d buckets, want %d", len(got), len(want))
	}
	bad := 0
	for k, w := range want {
		if g := got[k]; g != w && bad < 5 {
			bad++
			t.Errorf("rollup %+v: got %q, want %q", k, g, w)
		}
	}
}

func pendingDeltas(t *testing.T, s *postgres.Store) int64 {
	t.Helper()
	var n int64
	if err := s.Pool().QueryRow(context.Background(), "SELECT count(*) FROM rollup_deltas").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRollupsPendingOrCompacted: every rollup figure is the same whether the
// increments of the checks are still pending in rollup_deltas, partly
// folded or all folded, and equals what the checks add up to; a retried
// batch (the known-id path) counts once.
func TestRollupsPendingOrCompacted(t *testing.T) {
	s := openIn(t, newSchema(t), postgres.Options{CompactEvery: -1})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 9))
	monitors := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}
	regions := []string{"eu", "us", "ap"}
	all := genChecks(rng, monitors, regions, 3000, 72*time.Hour)
	first, second := all[:2000], all[2000:]
	for lo := 0; lo < len(first); lo += 500 {
		if _, err := s.InsertChecks(ctx, first[lo:lo+500]); err != nil {
			t.Fatal(err)
		}
	}
	// A retry of a stored batch with new checks in it.
	n, err := s.InsertChecks(ctx, append(slices.Clone(first[:300]), second[:200]...))
	if err != nil {
		t.Fatal(err)
	}
	if n != 200 {
		t.Fatalf("retried batch: %d new, want 200", n)
	}
	stored := all[:2200]
	if pendingDeltas(t, s) == 0 {
		t.Fatal("no pending deltas before compaction")
	}
	pending := figures(t, s, monitors)
	for _, m := range monitors {
		got, err := s.Stats(ctx, store.StatsQuery{MonitorID: m, From: day0, To: day0.Add(72 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if g, w := fmtStats(got), fmtStats(wantStats(stored, m, day0, day0.Add(72*time.Hour))); g != w {
			t.Fatalf("stats of %s: got %s, want %s", m, g, w)
		}
	}
	if _, err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pendingDeltas(t, s); n != 0 {
		t.Fatalf("%d deltas left after Compact", n)
	}
	if got := figures(t, s, monitors); got != pending {
		t.Fatalf("figures changed by compaction:\npending:\n%s\ncompacted:\n%s", pending, got)
	}
	equalRollups(t, rollupRows(t, s), wantRollups(stored))
	// Partly folded: new checks pending on top of compacted rows.
	if _, err := s.InsertChecks(ctx, second[200:]); err != nil {
		t.Fatal(err)
	}
	partly := figures(t, s, monitors)
	if _, err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if got := figures(t, s, monitors); got != partly {
		t.Fatalf("figures changed by compaction:\npending:\n%s\ncompacted:\n%s", partly, got)
	}
	equalRollups(t, rollupRows(t, s), wantRollups(all))
}

// TestReplicasIngestConcurrently: two managers ingest into one database at
// once (each with its compactor running), partly the same batches (an agent
// retrying at the other replica). Every check is counted once, a reader
// never sees a total go down or past the end (a delta folded twice or lost
// in flight would), and the rollups add up exactly.
func TestReplicasIngestConcurrently(t *testing.T) {
	schema := newSchema(t)
	a := openIn(t, schema, postgres.Options{CompactEvery: 5 * time.Millisecond})
	b := openIn(t, schema, postgres.Options{CompactEvery: 5 * time.Millisecond})
	replicas := []*postgres.Store{a, b}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	monitors := make([]string, 20)
	for i := range monitors {
		monitors[i] = uuid.NewString()
	}
	// Two hours of checks: every batch touches the same day and hour rows.
	all := genChecks(rng, monitors, []string{"eu", "us"}, 24000, 2*time.Hour)
	var batches [][]store.Check
	for lo := 0; lo < len(all); lo += 500 {
		batches = append(batches, all[lo:lo+500])
	}
	whole := [2]time.Time{day0, day0.Add(24 * time.Hour)}
	final := wantStats(all, monitors[0], whole[0], whole[1]).Total()

	var (
		mu       sync.Mutex
		inserted int
		wg       sync.WaitGroup
		errs     = make(chan error, 100)
	)
	send := func(s *postgres.Store, batch []store.Check) {
		n, err := s.InsertChecks(ctx, batch)
		if err != nil {
			errs <- err
			return
		}
		mu.Lock()
		inserted += n
		mu.Unlock()
	}
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(batches); i += 4 {
				send(replicas[i%2], batches[i])
				if i%3 == 0 { // the same batch again, at the other replica
					send(replicas[(i+1)%2], batches[i])
				}
			}
		})
	}
	stop := make(chan struct{})
	var reads int
	var readErr error
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		var last int64
		for {
			select {
			case <-stop:
				return
			default:
			}
			st, err := replicas[reads%2].Stats(ctx, store.StatsQuery{MonitorID: monitors[0], From: whole[0], To: whole[1]})
			reads++
			switch {
			case err != nil:
				readErr = err
			case st.Total() < last:
				readErr = fmt.Errorf("total went down from %d to %d", last, st.Total())
			case st.Total() > final:
				readErr = fmt.Errorf("total %d past the final %d", st.Total(), final)
			}
			if readErr != nil {
				return
			}
			last = st.Total()
		}
	}()
	wg.Wait()
	close(stop)
	<-readDone
	close(errs)
	for err := range errs {
		t.Fatalf("ingest: %v", err)
	}
	if readErr != nil {
		t.Fatalf("read %d: %v", reads, readErr)
	}
	if inserted != len(all) {
		t.Fatalf("inserted %d, want %d", inserted, len(all))
	}
	// Stop both compactors mid-work, then fold the rest.
	_, _ = a.Close(), b.Close()
	c := openIn(t, schema, postgres.Options{CompactEvery: -1})
	if _, err := c.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pendingDeltas(t, c); n != 0 {
		t.Fatalf("%d deltas left", n)
	}
	equalRollups(t, rollupRows(t, c), wantRollups(all))
	st, err := c.Stats(ctx, store.StatsQuery{MonitorID: monitors[0], From: whole[0], To: whole[1]})
	if err != nil {
		t.Fatal(err)
	}
	if st.Total() != final {
		t.Fatalf("total %d, want %d", st.Total(), final)
	}
	t.Logf("%d checks, %d reads while ingesting", len(all), reads)
}

// TestMigrateOldSchema: a database of the schema before rollup_deltas (its
// checks and rollups written as that version's ingest wrote them) migrates
// when a new store opens it and answers the same figures; ingest then goes on
// adding up exactly.
func TestMigrateOldSchema(t *testing.T) {
	schema := newSchema(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The old schema: migrations 0001 to 0009, recorded as Open records them.
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // no-op after commit
	for _, q := range []string{
		"CREATE SCHEMA " + pgx.Identifier{schema}.Sanitize(),
		"SET LOCAL search_path = " + pgx.Identifier{schema}.Sanitize(),
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for v := 1; v <= 9; v++ {
		f := files[v-1]
		if !strings.HasPrefix(filepath.Base(f), fmt.Sprintf("%04d_", v)) {
			t.Fatalf("migration %d is %s", v, f)
		}
		sql, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", v, strings.TrimSuffix(filepath.Base(f), ".sql")); err != nil {
			t.Fatal(err)
		}
	}
	// History as the old ingest left it: checks, and their rollups updated in place.
	rng := rand.New(rand.NewPCG(5, 6))
	monitors := []string{uuid.NewString(), uuid.NewString()}
	old := genChecks(rng, monitors, []string{"eu", "us"}, 1500, 72*time.Hour)
	for _, c := range old {
		if _, err := tx.Exec(ctx, `INSERT INTO checks (id, monitor_id, namespace, region, checked_at, status, response_time_ms)
 VALUES ($1, $2, $3, $4, $5, $6, $7)`, c.ID, c.MonitorID, c.Namespace, c.Region, c.CheckedAt, string(c.Status), c.ResponseTimeMs); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range store.AggregateRollups(old) {
		if _, err := tx.Exec(ctx, `INSERT INTO rollups (monitor_id, region, step, bucket, up, down, degraded, blocked, unknown, rt_sum, rt_min, rt_max)
 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`, r.MonitorID, r.Region, r.Step, r.Bucket, r.Up, r.Down, r.Degraded,
			r.Blocked, r.Unknown, r.ResponseSumMs, r.ResponseMinMs, r.ResponseMaxMs); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// Figures of the old history, from a store that cannot read it yet
	// wrongly: computed from the checks.
	want := func(checks []store.Check) string {
		var b strings.Builder
		for _, m := range monitors {
			fmt.Fprintf(&b, "%s %s\n", m, fmtStats(wantStats(checks, m, day0, day0.Add(72*time.Hour))))
		}
		return b.String()
	}
	got := func(s store.Store) string {
		var b strings.Builder
		for _, m := range monitors {
			st, err := s.Stats(ctx, store.StatsQuery{MonitorID: m, From: day0, To: day0.Add(72 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %s\n", m, fmtStats(st))
		}
		return b.String()
	}

	s := openIn(t, schema, postgres.Options{CompactEvery: -1})
	var version int
	if err := s.Pool().QueryRow(ctx, "SELECT max(version) FROM schema_migrations").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version < 10 {
		t.Fatalf("schema at version %d after Open", version)
	}
	if g, w := got(s), want(old); g != w {
		t.Fatalf("migrated figures:\n%s\nwant:\n%s", g, w)
	}
	before := figures(t, s, monitors)
	newer := genChecks(rng, monitors, []string{"eu", "us"}, 1000, 72*time.Hour)
	if _, err := s.InsertChecks(ctx, newer); err != nil {
		t.Fatal(err)
	}
	all := append(slices.Clone(old), newer...)
	if g, w := got(s), want(all); g != w {
		t.Fatalf("figures after ingest:\n%s\nwant:\n%s", g, w)
	}
	if _, err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	equalRollups(t, rollupRows(t, s), wantRollups(all))
	if before == figures(t, s, monitors) {
		t.Fatal("ingest after the migration changed no figure")
	}
}
