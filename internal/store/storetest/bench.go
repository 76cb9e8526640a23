package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// RawInsert is an ingest baseline: it writes a batch of checks to a bare
// table of the same columns and indexes in the same kind of database, the
// fastest way the driver allows (a prepared multi-row INSERT in SQLite, COPY
// in PostgreSQL), without de-duplication or rollups.
type RawInsert func(ctx context.Context, batch []store.Check) error

// BenchIngest measures batched InsertChecks of fresh checks from writers
// concurrent producers (probe regions pushing at the same time) and reports
// checks/s beside raw, the same rows written by a RawInsert with the same
// writers in the same run, and their ratio (target ≥ 0.5: de-duplication
// and rollups may cost as much as the insert itself).
func BenchIngest(b *testing.B, s store.Store, batchSize, writers int, raw RawInsert) {
	ctx := context.Background()
	monitors := make([]string, 200)
	for i := range monitors {
		monitors[i] = uuid.NewString()
	}
	regions := []string{"eu-west", "us-east", "ap-south"}
	start := time.Now().Add(-24 * time.Hour)
	var seq atomic.Int64
	// Batches are generated up front so only InsertChecks is timed.
	gen := func() []store.Check {
		batch := make([]store.Check, batchSize)
		for i := range batch {
			n := int(seq.Add(1))
			// Probe agents make time-ordered UUIDv7 ids: the id index then grows
			// at its end instead of dirtying a random page per check.
			batch[i] = store.Check{ID: uuid.Must(uuid.NewV7()).String(), MonitorID: monitors[n%len(monitors)], Namespace: "bench",
				Region: regions[n%len(regions)], CheckedAt: start.Add(time.Duration(n) * time.Millisecond),
				Status: store.StatusUp, ResponseTimeMs: int64(20 + n%200)}
			if n%50 == 0 {
				batch[i].Status = store.StatusDown
				batch[i].ErrorType = "timeout"
			}
		}
		return batch
	}
	// round writes one batch per writer through insert and returns the
	// time it took.
	round := func(insert func(batch []store.Check) error) time.Duration {
		batches := make([][]store.Check, writers)
		for w := range batches {
			batches[w] = gen()
		}
		t0 := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for w := range writers {
			wg.Go(func() { errs[w] = insert(batches[w]) })
		}
		wg.Wait()
		elapsed := time.Since(t0)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		return elapsed
	}
	viaStore := func(batch []store.Check) error {
		n, err := s.InsertChecks(ctx, batch)
		if err == nil && n != batchSize {
			err = fmt.Errorf("inserted %d of %d", n, batchSize)
		}
		return err
	}
	// Rounds through the store and raw rounds alternate, so both see the
	// same machine.
	var elapsed, rawElapsed time.Duration
	rounds := 0
	for b.Loop() {
		elapsed += round(viaStore)
		b.StopTimer()
		rawElapsed += round(func(batch []store.Check) error { return raw(ctx, batch) })
		b.StartTimer()
		rounds++
	}
	rows := float64(rounds * writers * batchSize)
	rate, rawRate := rows/elapsed.Seconds(), rows/rawElapsed.Seconds()
	b.ReportMetric(rate, "checks/s")
	b.ReportMetric(rawRate, "raw-checks/s")
	b.ReportMetric(rate/rawRate, "ratio")
}

// BenchUptimeQuery measures a 90-day uptime query for one of 1,000 monitors
// checked every 60 s and reports the p99 latency. The history is loaded as
// rollups through load (day and hour buckets for 90 days, minute buckets
// around the range edges, raw checks at the edges of the queried ranges), so
// setup stays well under a minute.
func BenchUptimeQuery(b *testing.B, s store.Store, load func(context.Context, []store.Rollup) error) {
	ctx := context.Background()
	const nMon = 1000
	to := time.Now().UTC().Truncate(time.Second)
	from := to.Add(-90 * 24 * time.Hour)
	monitors := make([]string, nMon)
	for i := range monitors {
		monitors[i] = uuid.NewString()
	}
	bucket := func(step int64, at int64, m int) store.Rollup {
		n := step / 60 // checks per bucket at 60 s
		down := int64(0)
		if (at/step+int64(m))%97 == 0 {
			down = max(n/10, 1)
		}
		mn, mx := int64(20), int64(900)
		return store.Rollup{RollupKey: store.RollupKey{MonitorID: monitors[m], Region: "eu-west", Step: step, Bucket: at},
			Stats: store.Stats{Up: n - down, Down: down, ResponseSumMs: (n - down) * 120, ResponseMinMs: &mn, ResponseMaxMs: &mx}}
	}
	setup := time.Now()
	for m := range nMon {
		var rs []store.Rollup
		for d := store.Bucket(from, store.StepDay); d <= to.Unix(); d += store.StepDay {
			rs = append(rs, bucket(store.StepDay, d, m))
		}
		for h := store.Bucket(from, store.StepHour); h <= to.Unix(); h += store.StepHour {
			rs = append(rs, bucket(store.StepHour, h, m))
		}
		for _, edge := range []time.Time{from, to} {
			for t := store.Bucket(edge.Add(-2*time.Hour), store.StepMinute); t <= edge.Add(2*time.Hour).Unix(); t += store.StepMinute {
				rs = append(rs, bucket(store.StepMinute, t, m))
			}
		}
		if err := load(ctx, rs); err != nil {
			b.Fatal(err)
		}
	}
	// Raw checks in the partial minutes at the edges of the queried ranges.
	var raw []store.Check
	for m := range nMon {
		for _, edge := range []time.Time{from, to} {
			for i := range 2 {
				raw = append(raw, store.Check{ID: uuid.NewString(), MonitorID: monitors[m], Region: "eu-west",
					CheckedAt: edge.Add(time.Duration(i-1) * 30 * time.Second), Status: store.StatusUp, ResponseTimeMs: 100})
			}
		}
	}
	if _, err := s.InsertChecks(ctx, raw); err != nil {
		b.Fatal(err)
	}
	b.Logf("setup: %d monitors, 90 days, %s", nMon, time.Since(setup).Round(time.Millisecond))

	rng := rand.New(rand.NewPCG(1, 2))
	var lat []time.Duration
	for b.Loop() {
		m := monitors[rng.IntN(nMon)]
		// Unaligned edges exercise every level: raw, minute, hour and day.
		f := from.Add(time.Duration(rng.IntN(3600)) * time.Second)
		t0 := time.Now()
		up, err := s.Uptime(ctx, m, f, to)
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		if up == nil || *up < 90 || *up > 100 {
			b.Fatalf("implausible uptime %v", up)
		}
	}
	slices.Sort(lat)
	p99 := lat[min(len(lat)-1, len(lat)*99/100)]
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
}
