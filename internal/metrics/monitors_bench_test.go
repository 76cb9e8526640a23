package metrics

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// BenchmarkMonitorSeries measures what the per-monitor series cost at 1,000
// and 10,000 monitors, each checked from three regions with a certificate:
// one op is a scrape (gather and text encoding, as promhttp does), and it
// reports the scrape's CPU time, size and series count and the heap the
// exporter keeps (the Monitors themselves sit in the informer anyway).
//
//	go test -run '^$' -bench MonitorSeries -benchmem ./internal/metrics/
func BenchmarkMonitorSeries(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("monitors=%d", n), func(b *testing.B) {
			c := &cache{}
			for i := range n {
				m := testMonitor(fmt.Sprintf("ws-%03d", i%100), fmt.Sprintf("monitor-%05d", i), i,
					map[string]string{"eu-central": "up", "us-east": "up", "ap-south": "down"})
				c.monitors = append(c.monitors, m)
			}
			heapBefore := heapInUse()
			s := &MonitorSeries{Max: n, Monitors: c.each}
			for i, m := range c.monitors {
				for j, region := range m.Status.EffectiveRegions {
					for k := range 20 {
						s.ObserveResponse(m, region, time.Duration(10+(i+j*7+k*13)%900)*time.Millisecond)
					}
				}
				s.ObserveCertificate(m, epoch.Add(time.Duration(i)*time.Hour), epoch)
			}
			heap := heapInUse() - heapBefore
			reg := prometheus.NewRegistry()
			reg.MustRegister(s)
			var buf bytes.Buffer
			series := 0
			cpuBefore := cpuTime()
			b.ResetTimer()
			for range b.N {
				buf.Reset()
				families, err := reg.Gather()
				if err != nil {
					b.Fatal(err)
				}
				enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
				series = 0
				for _, f := range families {
					if err := enc.Encode(f); err != nil {
						b.Fatal(err)
					}
					for _, m := range f.GetMetric() {
						series++
						if h := m.GetHistogram(); h != nil {
							series += len(h.GetBucket()) + 2 // +Inf, _sum and _count
						}
					}
				}
			}
			b.StopTimer()
			// CPU time tells the cost apart from the wait of a loaded machine.
			b.ReportMetric(float64(cpuTime()-cpuBefore)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(buf.Len()), "scrape-bytes")
			// Prometheus asks for gzip; this is what crosses the network.
			var gz bytes.Buffer
			w := gzip.NewWriter(&gz)
			_, _ = w.Write(buf.Bytes())
			_ = w.Close()
			b.ReportMetric(float64(gz.Len()), "gzip-bytes")
			b.ReportMetric(float64(series), "series")
			b.ReportMetric(float64(heap), "heap-bytes")
			runtime.KeepAlive(s)
		})
	}
}

// cpuTime is the CPU time the process used so far (user and system, every
// thread, the garbage collector's too).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
