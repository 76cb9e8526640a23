package monitors

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
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

// BenchmarkListMonitors100k: GET /monitors of a workspace of 100,000
// monitors (about 80 MB of JSON), one request at a time, with the time to
// the first byte of the body and to the last. "first" is the first answer
// after a start (every item encoded; the caches emptied before each
// request), "one-changed" has one monitor's status changed before each
// request, "unchanged" none. Targets: the first bytes within 1 s and the
// whole list within 10 s in every case; ratio ≥ 0.25 (one changed) to the
// bare handler serving the same bytes.
func BenchmarkListMonitors100k(b *testing.B) {
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
	f := bigFix
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
