package statuspage

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/clientip"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// benchMonitors is the size of the benchmark page: the specification's
// largest.
const benchMonitors = 500

// memReader is a client.Reader over fixed objects that deep-copies what it
// returns unless told not to, as the manager's informer cache does.
type memReader struct {
	page     *monv1.StatusPage
	monitors map[string]*monv1.Monitor
}

func (m *memReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if mon, ok := obj.(*monv1.Monitor); ok {
		if src := m.monitors[key.Name]; src != nil {
			src.DeepCopyInto(mon)
			return nil
		}
	}
	return fmt.Errorf("memReader: %T %s not found", obj, key)
}

func (m *memReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	switch l := list.(type) {
	case *monv1.StatusPageList:
		l.Items = nil
		if o.FieldSelector != nil {
			for _, r := range o.FieldSelector.Requirements() {
				if !matches(m.page, r.Field, r.Value) {
					return nil
				}
			}
		}
		if o.UnsafeDisableDeepCopy != nil && *o.UnsafeDisableDeepCopy {
			l.Items = []monv1.StatusPage{*m.page} // shares nested fields, as the cache does
		} else {
			l.Items = []monv1.StatusPage{*m.page.DeepCopy()}
		}
	case *monv1.MaintenanceWindowList:
		l.Items = nil
	case *monv1.MonitorList:
		l.Items = nil
		for _, mon := range m.monitors {
			l.Items = append(l.Items, *mon.DeepCopy())
		}
	default:
		return fmt.Errorf("memReader: cannot list %T", list)
	}
	return nil
}

var _ client.Reader = (*memReader)(nil)

// benchFixture is a published 500-monitor page with 90 days of history.
type benchFixture struct {
	reader *memReader
	store  *sqlite.Store
	ids    []string
}

var (
	fixtureOnce sync.Once
	fixture     *benchFixture
	fixtureErr  error
)

func benchSetup(b *testing.B) *benchFixture {
	b.Helper()
	fixtureOnce.Do(func() {
		// Shared by the benchmarks of the run; left in the temp directory.
		dir, err := os.MkdirTemp("", "statuspage-bench-")
		if err != nil {
			fixtureErr = err
			return
		}
		st, err := sqlite.Open(context.Background(), filepath.Join(dir, "bench.db"), sqlite.Options{})
		if err != nil {
			fixtureErr = err
			return
		}
		now := time.Now().UTC()
		page := &monv1.StatusPage{}
		page.Name, page.Namespace, page.UID, page.Generation = "bench", "bench", "page-uid", 1
		page.Spec = monv1.StatusPageSpec{Title: "Bench", IsPublic: true, ShowResponseTimes: true}
		r := &memReader{page: page, monitors: map[string]*monv1.Monitor{}}
		var rollups []store.Rollup
		var checks []store.Check
		f := &benchFixture{reader: r, store: st}
		for i := range benchMonitors {
			name := fmt.Sprintf("m%03d", i)
			uid := fmt.Sprintf("00000000-0000-0000-0000-%012d", i)
			f.ids = append(f.ids, uid)
			mon := &monv1.Monitor{}
			mon.Name, mon.Namespace, mon.UID = name, "bench", types.UID(uid)
			mon.Spec.Name = "Service " + name
			mon.Status.CurrentStatus = monv1.StatusUp
			if i%50 == 0 {
				mon.Status.CurrentStatus = monv1.StatusDown
			}
			r.monitors[name] = mon
			page.Spec.Monitors = append(page.Spec.Monitors, monv1.StatusPageMonitor{
				MonitorRef: monv1.LocalObjectReference{Name: name}, Section: fmt.Sprintf("Section %d", i/50),
			})
			for d := 1; d < 90; d++ {
				rollups = append(rollups, store.Rollup{
					RollupKey: store.RollupKey{MonitorID: uid, Region: "eu", Step: store.StepDay, Bucket: store.Bucket(now.AddDate(0, 0, -d), store.StepDay)},
					Stats:     store.Stats{Up: 1430, Down: int64((i + d) % 11), ResponseSumMs: 1430 * 120},
				})
			}
			for h := 0; h < 24; h++ {
				checks = append(checks, store.Check{ID: fmt.Sprintf("%s-%d", uid, h), MonitorID: uid, Namespace: "bench",
					Region: "eu", CheckedAt: now.Add(-time.Duration(h)*time.Hour - time.Minute), Status: store.StatusUp, ResponseTimeMs: int64(100 + h)})
			}
		}
		ctx := context.Background()
		if fixtureErr = st.LoadRollups(ctx, rollups); fixtureErr != nil {
			return
		}
		_, fixtureErr = st.InsertChecks(ctx, checks)
		fixture = f
	})
	if fixtureErr != nil {
		b.Fatal(fixtureErr)
	}
	return fixture
}

// BenchmarkPublicJSON serves GET /status/:slug of a 500-monitor page from
// the cache through the handler on a loopback server, with parallel clients.
func BenchmarkPublicJSON(b *testing.B) { benchServe(b, "") }

// BenchmarkBadge serves GET /status/:slug/badge.svg likewise.
func BenchmarkBadge(b *testing.B) { benchServe(b, "badge.svg") }

func benchServe(b *testing.B, rest string) {
	f := benchSetup(b)
	// The default cache time: a run of a few seconds includes rebuilds
	// (in the background, started by requests near the end of an entry's
	// life).
	p := &Public{Reader: f.reader, Store: f.store}
	// Every request comes from its own address (X-Forwarded-For from a
	// trusted loopback proxy), so the per-IP limit is exercised without
	// refusing the load.
	proxy := clientip.Resolver{Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	srv := httptest.NewServer(proxy.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.ServeStatus(w, r, "bench", strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/status/bench"), "/"))
	})))
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 256, DialContext: (&net.Dialer{}).DialContext}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	target := srv.URL + "/status/bench"
	if rest != "" {
		target += "/" + rest
	}
	var seq atomic.Uint32
	get := func() (int, int64, error) {
		req, _ := http.NewRequest(http.MethodGet, target, nil)
		n := seq.Add(1)
		req.Header.Set(clientip.HeaderXForwardedFor, fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255))
		// As browsers do; set explicitly, the transport leaves the body
		// compressed, so the client does not spend the shared CPUs on
		// inflating it.
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, 0, err
		}
		size, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, size, nil
	}
	if code, size, err := get(); err != nil || code != http.StatusOK {
		b.Fatalf("warm-up: %d %v", code, err)
	} else {
		b.SetBytes(size)
	}

	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		for pb.Next() {
			t0 := time.Now()
			code, _, err := get()
			if err != nil || code != http.StatusOK {
				b.Errorf("GET %s: %d %v", target, code, err)
				return
			}
			local = append(local, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		p99 := lat[min(len(lat)-1, len(lat)*99/100)]
		b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
		b.ReportMetric(float64(p99)/float64(time.Millisecond), "p99-ms")
	}
}

// BenchmarkSnapshotBuild is the cost of one cache rebuild of the 500-monitor
// page (history read with the batched store methods).
func BenchmarkSnapshotBuild(b *testing.B) {
	f := benchSetup(b)
	p := &Public{Reader: f.reader, Store: f.store}
	ctx := context.Background()
	for b.Loop() {
		if _, err := p.build(ctx, f.reader.page); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHistoryPerMonitor reads the same uptime and daily history one
// monitor at a time, as the page did before the batched store methods: the
// comparison for BenchmarkSnapshotBuild.
func BenchmarkHistoryPerMonitor(b *testing.B) {
	f := benchSetup(b)
	ctx := context.Background()
	for b.Loop() {
		now := time.Now()
		for _, id := range f.ids {
			for _, d := range []time.Duration{24 * time.Hour, 30 * 24 * time.Hour, 90 * 24 * time.Hour} {
				if _, err := f.store.Uptime(ctx, id, now.Add(-d), now); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := f.store.UptimeDaily(ctx, id, MaxHistoryDays, time.UTC); err != nil {
				b.Fatal(err)
			}
		}
	}
}
