package monitors

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

// bigMonitors is the workspace of BenchmarkListMonitors100k: the spec's
// GET /monitors returns every monitor, newest first, not paginated.
const bigMonitors = 100_000

var (
	bigOnce sync.Once
	bigFix  *benchFixture
	bigErr  error
)

// bigFixture is the workspace of bigMonitors monitors, built once for
// every benchmark that needs it.
func bigFixture(b *testing.B) *benchFixture {
	b.Helper()
	bigOnce.Do(func() {
		dir, err := tempDir()
		if err != nil {
			bigErr = err
			return
		}
		bigFix, bigErr = newBenchFixture(dir, bigMonitors, 0)
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigFix
}

// BenchmarkListMonitors100k: GET /monitors of a workspace of 100,000
// monitors (about 80 MB of JSON), one request at a time, with the time to
// the first byte of the body and to the last. "first" is the first answer
// after a start (every item encoded; the caches emptied before each
// request), "one-changed" has one monitor's status changed before each
// request, "unchanged" none. Targets: the first bytes within 1 s and the
// whole list within 10 s in every case; ratio ≥ 0.25 (one changed) to the
// bare handler serving the same bytes.
func BenchmarkListMonitors100k(b *testing.B) {
	f := bigFixture(b)
	lister := f.srv.opts.Monitors.(informerMonitors)
	rv := 2_000_000
	touch := func(i int) {
		rv++
		obj, ok, err := lister.indexer.GetByKey(benchNS + "/" + fmt.Sprintf("site-%05d", i%bigMonitors))
		if err != nil || !ok {
			b.Fatalf("monitor %d: %v", i, err)
		}
		m := obj.(*monv1.Monitor).DeepCopy()
		m.ResourceVersion = fmt.Sprint(rv)
		ms := int64(rv % 500)
		m.Status.LastResponseTimeMs = &ms
		if err := lister.indexer.Update(m); err != nil {
			b.Fatal(err)
		}
		lister.versions.changed(m)
	}
	for _, tc := range []struct {
		name   string
		before func(i int)
	}{
		{"first", func(int) {
			f.srv.items = listCache{}
			f.srv.configs = configCache{}
		}},
		{"one-changed", touch},
		{"unchanged", func(int) {}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			// One answer first, so the timed ones find what a running
			// server has (but for "first", which empties it again).
			if _, _, err := f.timedList(); err != nil {
				b.Fatal(err)
			}
			var first, total []time.Duration
			b.ResetTimer()
			for i := range b.N {
				tc.before(i)
				ttfb, all, err := f.timedList()
				if err != nil {
					b.Fatal(err)
				}
				first, total = append(first, ttfb), append(total, all)
			}
			b.StopTimer()
			slices.Sort(first)
			slices.Sort(total)
			b.ReportMetric(testutil.Percentile(first, 0.5), "first-byte-p50-ms")
			b.ReportMetric(testutil.Percentile(first, 1), "first-byte-max-ms")
			b.ReportMetric(testutil.Percentile(total, 0.5), "p50-ms")
			b.ReportMetric(testutil.Percentile(total, 1), "max-ms")
			base := f.bareBaseline(b, 1, "/monitors")
			b.ReportMetric(base.Percentile(0.5), "baseline-p50-ms")
			b.ReportMetric(base.Percentile(0.5)/testutil.Percentile(total, 0.5), "ratio")
		})
	}
}

// timedList is GET /monitors with the time until its body's first byte and
// its last.
func (f *benchFixture) timedList() (first, all time.Duration, err error) {
	req, _ := http.NewRequest(http.MethodGet, f.http.URL+"/monitors", nil)
	req.Header.Set("Authorization", "Bearer "+f.key)
	t0 := time.Now()
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return 0, 0, fmt.Errorf("GET /monitors = %d %s", resp.StatusCode, body)
	}
	var one [1]byte
	if _, err := io.ReadFull(resp.Body, one[:]); err != nil {
		return 0, 0, err
	}
	first = time.Since(t0)
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, 0, err
	}
	return first, time.Since(t0), nil
}

// BenchmarkGetMonitorScaling: GET /monitors/{id} costs the same in a
// workspace of 100,000 monitors as in one of 10,000, and never reads a
// whole namespace of Monitors. It asks for the same 2,000 monitors of
// each workspace (answers built once before, as a running server has
// them), alternating the two fixtures twice, and fails when the larger
// workspace serves fewer than a quarter of the smaller one's requests a
// second (a by-id read that misses the uid index and lists the namespace
// is 10× slower at 10× the monitors: in a manager at 100,000 it was 52
// against 455 requests a second) or when any request listed the
// namespace's Monitors. Both are measured in the same run, so the machine's
// speed and load cancel out.
func BenchmarkGetMonitorScaling(b *testing.B) {
	small := fixture(b)
	big := bigFixture(b)
	const asked, requests, clients = 2_000, 8_000, 4
	// The same monitors' ids in both: site-00000 … site-01999.
	paths := make([]string, asked)
	for i := range paths {
		paths[i] = "/monitors/" + small.ids[i]
		if small.ids[i] != big.ids[i] {
			b.Fatalf("fixtures differ at monitor %d: %s, %s", i, small.ids[i], big.ids[i])
		}
	}
	scans := func() int64 { return small.reader.scans.Load() + big.reader.scans.Load() }
	for _, f := range []*benchFixture{small, big} {
		scans0 := scans()
		for _, p := range paths[:1] {
			if code, body := f.get(p); code != http.StatusOK {
				b.Fatalf("GET %s = %d %s", p, code, body)
			}
		}
		// Fail at once rather than after thousands of slow requests.
		if n := scans() - scans0; n > 0 {
			b.Fatalf("GET /monitors/{id} listed a namespace's Monitors (%d lists): a read that missed the uid index", n)
		}
		for _, p := range paths[1:] {
			if code, body := f.get(p); code != http.StatusOK {
				b.Fatalf("GET %s = %d %s", p, code, body)
			}
		}
	}
	rate := func(f *benchFixture) float64 {
		var next atomic.Int64
		var wg sync.WaitGroup
		t0 := time.Now()
		for range clients {
			wg.Go(func() {
				for i := next.Add(1); i <= requests; i = next.Add(1) {
					if code, body := f.get(paths[(i*7919)%asked]); code != http.StatusOK {
						b.Errorf("GET = %d %s", code, body)
						return
					}
				}
			})
		}
		wg.Wait()
		return requests / time.Since(t0).Seconds()
	}
	b.ResetTimer()
	for range b.N {
		scans0 := scans()
		var smallRate, bigRate float64
		for range 2 {
			smallRate += rate(small) / 2
			bigRate += rate(big) / 2
		}
		b.ReportMetric(smallRate, "10k-req/s")
		b.ReportMetric(bigRate, "100k-req/s")
		b.ReportMetric(bigRate/smallRate, "ratio")
		if n := scans() - scans0; n > 0 {
			b.Fatalf("GET /monitors/{id} listed a namespace's Monitors %d times (a read that missed the uid index)", n)
		}
		if bigRate < smallRate/4 {
			b.Fatalf("GET /monitors/{id} at 100,000 monitors: %.0f req/s, under a quarter of %.0f at 10,000 (by-id reads grew with the workspace)", bigRate, smallRate)
		}
	}
}
