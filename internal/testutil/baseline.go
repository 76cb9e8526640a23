package testutil

import (
	"slices"
	"sync"
	"time"
)

// Baseline is the rate of a bare stand-in for the work a benchmark
// measures (a bare net/http handler serving the same bytes, a bare
// connect-GET-close loop), taken in the same run on the same machine, so a
// benchmark can print its figure as a ratio to what the machine allows.
type Baseline struct {
	// PerSecond is operations per second over all workers.
	PerSecond float64
	// Latencies are the sorted per-operation durations.
	Latencies []time.Duration
}

// MeasureBaseline runs op from workers goroutines for d and returns the
// rate. It stops at the first error and returns it.
func MeasureBaseline(d time.Duration, workers int, op func() error) (Baseline, error) {
	var (
		mu    sync.Mutex
		lat   []time.Duration
		first error
		wg    sync.WaitGroup
	)
	start := time.Now()
	stop := start.Add(d)
	for range workers {
		wg.Go(func() {
			local := make([]time.Duration, 0, 1024)
			for time.Now().Before(stop) {
				t0 := time.Now()
				if err := op(); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	return Baseline{PerSecond: float64(len(lat)) / elapsed.Seconds(), Latencies: lat}, first
}

// Percentile returns the p-quantile (0 < p ≤ 1) of the latencies in
// milliseconds.
func (b Baseline) Percentile(p float64) float64 {
	return Percentile(b.Latencies, p)
}

// Percentile returns the p-quantile of sorted durations in milliseconds.
func Percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.999999) - 1
	return float64(sorted[min(max(i, 0), len(sorted)-1)]) / float64(time.Millisecond)
}
