package probes

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// flakyManager serves the probe API from a MemoryServer and can be made
// unreachable (503) or lose the answer of a stored batch.
type flakyManager struct {
	mem       *probeapi.MemoryServer
	handler   http.Handler
	down      atomic.Bool
	loseNext  atomic.Int32 // answers to lose after storing
	lostCount atomic.Int32
}

func (f *flakyManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.down.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	if r.Method == http.MethodPost && f.loseNext.Load() > 0 {
		f.loseNext.Add(-1)
		f.lostCount.Add(1)
		f.handler.ServeHTTP(httptest.NewRecorder(), r)
		http.Error(w, "lost", http.StatusBadGateway)
		return
	}
	f.handler.ServeHTTP(w, r)
}

func startManager(t *testing.T) (*flakyManager, string) {
	mem := &probeapi.MemoryServer{Region: "eu1", Token: "tok"}
	f := &flakyManager{mem: mem, handler: probeapi.NewHandler(mem)}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	return f, ts.URL
}

func checksTotal(a *Agent) int {
	mfs, _ := a.metrics.registry.Gather()
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() == "uptime_probe_checks_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return int(n)
}

// metricValue sums the samples of one counter or gauge family of a.
func metricValue(a *Agent, name string) float64 {
	mfs, _ := a.metrics.registry.Gather()
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			n += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return n
}

func newTestAgent(t *testing.T, url string, bufferDir string) *Agent {
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("tok\n"), 0o600)
	a, err := NewAgent(AgentOptions{
		Region: "eu1", ServerURL: url, TokenFile: tokenFile, AllowPrivate: true, BufferDir: bufferDir,
		BatchSize: 5, FlushInterval: 20 * time.Millisecond, PollWait: 200 * time.Millisecond,
		IntervalUnit: 20 * time.Millisecond, MaxBufferedInMemory: 8,
	})
	if err != nil {
		t.Fatal(err)
	}
	a.Client.Backoff = time.Millisecond
	a.Client.MaxRetries = 2
	return a
}

func TestAgentEndToEnd(t *testing.T) {
	target := httptest.NewServer(testMux())
	defer target.Close()
	mgr, url := startManager(t)
	mgr.mem.SetAssignments("eu1", []probeapi.Assignment{
		{ID: "m-http", Type: probeapi.TypeHTTP, URL: target.URL + "/text", IntervalSeconds: 1, Config: monv1.MonitorSpec{HTTP: &monv1.HTTPConfig{Keyword: "World"}}},
		{ID: "m-404", Type: probeapi.TypeHTTP, URL: target.URL + "/code/404", IntervalSeconds: 2},
		{ID: "m-cron", Type: probeapi.TypeCron, IntervalSeconds: 1}, // never run by agents
	})
	a := newTestAgent(t, url, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- a.Run(ctx) }()

	eventually(t, "results", func() bool { return len(mgr.mem.Results()) >= 10 })
	// A lost answer makes the agent retry the batch; it is stored once.
	mgr.loseNext.Store(1)
	eventually(t, "lost answer", func() bool { return mgr.lostCount.Load() == 1 })

	// Manager down: results are buffered, then drained.
	replayedBefore := metricValue(a, "uptime_probe_replayed_results_total")
	mgr.down.Store(true)
	eventually(t, "buffering", func() bool { return a.Buffer.Len() > 10 })
	mgr.down.Store(false)
	eventually(t, "drained", func() bool { return a.Buffer.Len() == 0 })
	// The backlog the outage held back is counted as replayed: at least
	// the 11 results buffered, and no more than were stored since.
	if got := metricValue(a, "uptime_probe_replayed_results_total") - replayedBefore; got < 11 || got > float64(len(mgr.mem.Results())) {
		t.Fatalf("replayed %v results after the outage, want between 11 and %d", got, len(mgr.mem.Results()))
	}
	if metricValue(a, "uptime_probe_last_delivery_timestamp_seconds") < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Fatal("last delivery time not set")
	}

	if a.Scheduler.Len() != 2 {
		t.Fatalf("scheduled %d monitors, want 2 (cron is server-side)", a.Scheduler.Len())
	}
	// Removing a monitor stops it.
	mgr.mem.SetAssignments("eu1", nil)
	eventually(t, "unscheduled", func() bool { return a.Scheduler.Len() == 0 })

	// Metrics and health.
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, m := range []string{"uptime_probe_checks_total", "uptime_probe_schedule_lag_seconds", "uptime_probe_in_flight", "uptime_probe_buffered_results"} {
		if !strings.Contains(string(body), m) {
			t.Fatalf("metric %s missing", m)
		}
	}
	rec = httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 200 {
		t.Fatalf("readyz %d", rec.Code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	results := mgr.mem.Results()
	if len(results) != checksTotal(a) {
		t.Fatalf("stored %d results, agent ran %d checks", len(results), checksTotal(a))
	}
	seen := map[string]bool{}
	for _, r := range results {
		if seen[r.ID] {
			t.Fatalf("result %s stored twice", r.ID)
		}
		seen[r.ID] = true
		want := map[string]probeapi.Status{"m-http": probeapi.StatusUp, "m-404": probeapi.StatusDown}[r.MonitorID]
		if r.Status != want || r.Region != "eu1" {
			t.Fatalf("result %+v", r)
		}
	}
}

func TestAgentDiskBuffer(t *testing.T) {
	target := httptest.NewServer(testMux())
	defer target.Close()
	mgr, url := startManager(t)
	mgr.down.Store(true)
	mgr.mem.SetAssignments("eu1", []probeapi.Assignment{
		{ID: "m1", Type: probeapi.TypeHTTP, URL: target.URL + "/text", IntervalSeconds: 1},
	})
	dir := t.TempDir()
	a := newTestAgent(t, url, dir)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- a.Run(ctx) }()
	// While down, assignments cannot even be fetched; let the poller in
	// first, then cut the results path.
	mgr.down.Store(false)
	eventually(t, "ready", func() bool { return a.ready.Load() })
	mgr.down.Store(true)
	segments := func() int { m, _ := filepath.Glob(filepath.Join(dir, "*.jsonl")); return len(m) }
	eventually(t, "segments on disk", func() bool { return segments() >= 2 })
	cancel()
	<-done
	left := a.Buffer.Len()
	if left == 0 || segments() == 0 {
		t.Fatalf("nothing buffered at shutdown")
	}

	// A new agent (restart) drains the segments left on disk.
	mgr.down.Store(false)
	b := newTestAgent(t, url, dir)
	if b.Buffer.Len() != left {
		t.Fatalf("restarted agent sees %d buffered, want %d", b.Buffer.Len(), left)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { done <- b.Run(ctx2) }()
	eventually(t, "drained from disk", func() bool { return segments() == 0 && b.Buffer.Len() < 5 })
	cancel2()
	<-done
	if got := len(mgr.mem.Results()); got < checksTotal(a) {
		t.Fatalf("stored %d of %d results", got, checksTotal(a))
	}
}

func TestRunOnce(t *testing.T) {
	target := httptest.NewServer(testMux())
	defer target.Close()
	a := &probeapi.Assignment{Type: probeapi.TypeHTTP, URL: target.URL + "/text"}
	if r := RunOnce(context.Background(), a, "eu1", netguard.Guard{AllowPrivate: true}); r.Status != probeapi.StatusUp || r.MonitorID == "" {
		t.Fatalf("%+v", r)
	}
	if r := RunOnce(context.Background(), a, "eu1", netguard.Guard{}); r.Status != probeapi.StatusBlocked {
		t.Fatalf("%+v", r)
	}
	if r := RunOnce(context.Background(), &probeapi.Assignment{Type: "cron"}, "eu1", netguard.Guard{}); r.Status != probeapi.StatusUnknown {
		t.Fatalf("%+v", r)
	}
}
