package probes

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

// BenchmarkHTTPCheck runs full http checks (new connection each, no
// keep-alive, body read, keyword matched, result built) in parallel against
// a loopback server, beside its baseline: a bare loop that connects, sends
// a GET, reads the answer to EOF and closes, with the same parallelism in
// the same run. "ratio" is checks/s over baseline/s (target ≥ 0.6).
func BenchmarkHTTPCheck(b *testing.B) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok"))
	}))
	ts.Config.SetKeepAlivesEnabled(false)
	ts.Start()
	defer ts.Close()
	addr := ts.Listener.Addr().String()
	request := []byte("GET / HTTP/1.1\r\nHost: " + addr + "\r\nConnection: close\r\n\r\n")
	base, err := testutil.MeasureBaseline(2*time.Second, runtime.GOMAXPROCS(0), func() error {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := c.Write(request); err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, c)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	env := testEnv()
	a := &probeapi.Assignment{ID: "bench", Type: probeapi.TypeHTTP, URL: ts.URL, TimeoutMs: 5000,
		Config: monv1.MonitorSpec{HTTP: &monv1.HTTPConfig{Keyword: "ok"}}}
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r := Run(context.Background(), a, env); r.Status != probeapi.StatusUp {
				b.Errorf("status %s: %s", r.Status, r.ErrorMessage)
				return
			}
		}
	})
	rate := float64(b.N) / time.Since(start).Seconds()
	b.ReportMetric(rate, "checks/s")
	b.ReportMetric(base.PerSecond, "baseline/s")
	b.ReportMetric(rate/base.PerSecond, "ratio")
}

// processCPU is the user plus system CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchCheckCost runs check in parallel b.N times, each run must be up,
// and reports checks/s and checks per CPU-second. The CPU is the whole
// process's: the check and the loopback target it talks to, so the figure
// compares check types (BenchmarkCheckCost runs http, grpc and websocket
// side by side) rather than measuring the agent alone.
func benchCheckCost(b *testing.B, check func() probeapi.Result) {
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), processCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r := check(); r.Status != probeapi.StatusUp {
				b.Errorf("status %s: %s", r.Status, r.ErrorMessage)
				return
			}
		}
	})
	wall, used := time.Since(start), processCPU(b)-cpu
	b.ReportMetric(float64(b.N)/wall.Seconds(), "checks/s")
	if used > 0 {
		b.ReportMetric(float64(b.N)/used.Seconds(), "checks/cpu-s")
	}
}

// BenchmarkCheckCost reports checks per CPU-second of one full check of
// each network type against a loopback target in the same process, a new
// connection per check: http (GET, keyword), grpc (plaintext, a
// grpc.health.v1 Check answered SERVING) and websocket (handshake, one
// message, its echo, close).
func BenchmarkCheckCost(b *testing.B) {
	env := testEnv()
	b.Run("http", func(b *testing.B) {
		ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte("ok"))
		}))
		ts.Config.SetKeepAlivesEnabled(false)
		ts.Start()
		defer ts.Close()
		a := &probeapi.Assignment{ID: "bench", Type: probeapi.TypeHTTP, URL: ts.URL, TimeoutMs: 5000,
			Config: monv1.MonitorSpec{HTTP: &monv1.HTTPConfig{Keyword: "ok"}}}
		benchCheckCost(b, func() probeapi.Result { return Run(context.Background(), a, env) })
	})
	b.Run("http-reuse", func(b *testing.B) {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte("ok"))
		}))
		defer ts.Close()
		a := &probeapi.Assignment{ID: "bench-reuse", Type: probeapi.TypeHTTP, URL: ts.URL, TimeoutMs: 5000,
			Config: monv1.MonitorSpec{HTTP: &monv1.HTTPConfig{Keyword: "ok", ReuseConnection: true}}}
		benchCheckCost(b, func() probeapi.Result { return Run(context.Background(), a, env) })
	})
	b.Run("grpc", func(b *testing.B) {
		srv := startGRPC(b, true, "", nil)
		p := &grpcParams{Target: srv.Addr, Service: "orders", Plaintext: true}
		benchCheckCost(b, func() probeapi.Result {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return probeGRPC(ctx, env, p)
		})
	})
	b.Run("websocket", func(b *testing.B) {
		srv := startWS(b)
		p := &wsParams{URL: srv.url("/echo"), Message: "ping", ExpectedReply: "ping", MaxRedirects: defaultMaxRedirects}
		benchCheckCost(b, func() probeapi.Result {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return probeWebSocket(ctx, env, p)
		})
	})
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkSchedulerIdleMemory reports heap bytes per idle scheduled
// monitor, including the assignment itself (a realistic http assignment
// with a header), once the caller has dropped its own copy.
func BenchmarkSchedulerIdleMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				before := heapInUse()
				as := make([]probeapi.Assignment, n)
				for i := range as {
					as[i] = probeapi.Assignment{ID: fmt.Sprintf("00000000-0000-0000-0000-%012d", i), Namespace: "team-a", Name: fmt.Sprintf("monitor-%d", i),
						Type: probeapi.TypeHTTP, URL: fmt.Sprintf("https://example-%d.com/health", i), IntervalSeconds: 60, Regions: []string{"eu1", "us1"},
						Config: monv1.MonitorSpec{HTTP: &monv1.HTTPConfig{Method: "GET", Headers: probeapi.TextHeaders(map[string]string{"Accept": "application/json"}), Keyword: "ok"}}}
				}
				s := &Scheduler{Run: func(context.Context, *probeapi.Assignment, time.Time) {}}
				s.Update(as)
				as = nil
				after := heapInUse()
				b.ReportMetric(float64(after-before)/float64(n), "bytes/monitor")
				runtime.KeepAlive(s)
			}
		})
	}
}

// BenchmarkScheduleLag runs 10k monitors on a 15 s interval compressed to
// 1.5 s of wall time (IntervalUnit 100 ms, so ten times the real dispatch
// rate) with no-op checks and reports the p99 start lag.
func BenchmarkScheduleLag(b *testing.B) {
	const n = 10_000
	for range b.N {
		var mu sync.Mutex
		lags := make([]time.Duration, 0, n*2)
		s := &Scheduler{IntervalUnit: 100 * time.Millisecond, Concurrency: 256,
			Run:        func(context.Context, *probeapi.Assignment, time.Time) {},
			ObserveLag: func(d time.Duration) { mu.Lock(); lags = append(lags, d); mu.Unlock() }}
		s.Update(assignments(n, 15))
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		s.Start(ctx)
		cancel()
		slices.Sort(lags)
		if len(lags) < n {
			b.Fatalf("only %d runs", len(lags))
		}
		b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds())/1000, "p99-lag-ms")
		b.ReportMetric(float64(len(lags)), "runs")
	}
}
