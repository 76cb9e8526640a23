package monitors

// Benchmarks of the REST API with 10,000 monitors in one workspace (make
// bench):
//
//	BenchmarkGetMonitor    GET /monitors/{id}   target ratio ≥ 0.5
//	BenchmarkListMonitors  GET /monitors        target ratio ≥ 0.5 unchanged, ≥ 0.25 one changed
//	BenchmarkKeyCheck      API key authentication per request, ns/op
//
// The server reads through a client.Reader that works like
// controller-runtime's informer cache (client-go indexers with the namespace
// index; every object returned is a deep copy), pre-populated with the
// monitors, so no envtest control plane is needed. History comes from a real
// SQLite store. Requests go over a loopback httptest server with a valid
// API key, from parallel clients. The per-key rate limit (1200 per minute)
// is lifted for the benchmarks; the limiter itself still runs.

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

const (
	benchNS       = "bench"
	benchMonitors = 10_000
	// benchHistory monitors get 30 days of checks, so GET /monitors/{id}
	// computes its 24 h and 30 d uptime from real rows.
	benchHistory = 20
	// benchOtherKeys are API keys of other workspaces in the key cache.
	benchOtherKeys = 200
)

// cacheReader serves Get and List like controller-runtime's CacheReader:
// objects sit in client-go indexers (namespace index), reads return deep
// copies, label selectors filter. Everything else (writes) goes to the
// embedded fake client.
type cacheReader struct {
	client.Client
	// scans counts the Lists of Monitors that read a whole namespace (or
	// every namespace) rather than an index: what a by-id read must never
	// do (BenchmarkGetMonitorScaling).
	scans    atomic.Int64
	scheme   *kruntime.Scheme
	indexers map[schema.GroupVersionKind]cache.Indexer
}

func newCacheReader(scheme *kruntime.Scheme, fallback client.Client) *cacheReader {
	return &cacheReader{Client: fallback, scheme: scheme, indexers: map[schema.GroupVersionKind]cache.Indexer{}}
}

// add stores objects in the indexer of their kind.
func (c *cacheReader) add(objs ...client.Object) error {
	for _, o := range objs {
		gvk, err := apiutil.GVKForObject(o, c.scheme)
		if err != nil {
			return err
		}
		ix := c.indexers[gvk]
		if ix == nil {
			ix = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			c.indexers[gvk] = ix
		}
		if err := ix.Add(o); err != nil {
			return err
		}
	}
	return nil
}

// track makes List and Get of kind obj served from the (maybe empty) cache.
func (c *cacheReader) track(objs ...client.Object) {
	for _, o := range objs {
		gvk, _ := apiutil.GVKForObject(o, c.scheme)
		if c.indexers[gvk] == nil {
			idx := cache.Indexers{
				cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
				// The manager's cache indexes metadata.uid the same way.
				monv1.UIDIndex: func(o any) ([]string, error) { return []string{string(o.(client.Object).GetUID())}, nil },
			}
			if _, ok := o.(*corev1.Secret); ok {
				// And API keys by their hash label.
				idx[apikeys.HashIndex] = func(o any) ([]string, error) {
					return []string{o.(client.Object).GetLabels()[apikeys.HashLabel]}, nil
				}
			}
			c.indexers[gvk] = cache.NewIndexer(cache.MetaNamespaceKeyFunc, idx)
		}
	}
}

func (c *cacheReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return err
	}
	ix := c.indexers[gvk]
	if ix == nil {
		return c.Client.Get(ctx, key, obj, opts...)
	}
	k := key.Name
	if key.Namespace != "" {
		k = key.Namespace + "/" + key.Name
	}
	item, ok, err := ix.GetByKey(k)
	if err != nil {
		return err
	}
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}, key.Name)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(item.(kruntime.Object).DeepCopyObject()).Elem())
	return nil
}

func (c *cacheReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk, err := apiutil.GVKForObject(list, c.scheme)
	if err != nil {
		return err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	ix := c.indexers[gvk]
	if ix == nil {
		return c.Client.List(ctx, list, opts...)
	}
	lo := client.ListOptions{}
	lo.ApplyOptions(opts)
	var items []any
	if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
		found := false
		for _, field := range []string{monv1.UIDIndex, apikeys.HashIndex} {
			v, ok := lo.FieldSelector.RequiresExactMatch(field)
			if _, indexed := ix.GetIndexers()[field]; !ok || !indexed {
				continue
			}
			if items, err = ix.ByIndex(field, v); err != nil {
				return err
			}
			found = true
		}
		if !found {
			return fmt.Errorf("bench cache: no index of %s", lo.FieldSelector)
		}
	} else if lo.Namespace != "" {
		if gvk == monitorGVK {
			c.scans.Add(1)
		}
		items, err = ix.ByIndex(cache.NamespaceIndex, lo.Namespace)
		if err != nil {
			return err
		}
	} else {
		if gvk == monitorGVK {
			c.scans.Add(1)
		}
		items = ix.List()
	}
	out := make([]kruntime.Object, 0, len(items))
	for _, it := range items {
		o := it.(client.Object)
		if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labelSet(o.GetLabels())) {
			continue
		}
		if lo.UnsafeDisableDeepCopy != nil && *lo.UnsafeDisableDeepCopy {
			out = append(out, o) // as the manager's cache does
			continue
		}
		out = append(out, o.DeepCopyObject())
	}
	return meta.SetList(list, out)
}

type labelSet map[string]string

func (l labelSet) Has(k string) bool              { _, ok := l[k]; return ok }
func (l labelSet) Get(k string) string            { return l[k] }
func (l labelSet) Lookup(k string) (string, bool) { v, ok := l[k]; return v, ok }

// benchFixture is one server with 10,000 monitors, shared by the benchmarks.
type benchFixture struct {
	srv     *testServer
	http    *httptest.Server
	client  *http.Client
	key     string
	ids     []string // every monitor id
	history []string // ids of monitors with history
	store   store.Store
	reader  *cacheReader
}

var (
	benchOnce sync.Once
	benchFix  *benchFixture
	benchErr  error
	benchDir  string
)

func fixture(b *testing.B) *benchFixture {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := tempDir()
		if err != nil {
			benchErr = err
			return
		}
		benchDir = dir
		benchFix, benchErr = newBenchFixture(dir, benchMonitors, benchHistory)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchFix
}

func tempDir() (string, error) {
	// b.TempDir() is removed when the first benchmark ends; the fixture
	// outlives it, so the directory is made by hand (left in the OS temp
	// directory; small).
	return os.MkdirTemp("", "uptime-apiserver-bench-")
}

// newBenchFixture builds a server with monitors monitors in one workspace,
// the first history of them with 30 days of checks.
func newBenchFixture(dir string, monitors, history int) (*benchFixture, error) {
	ctx := context.Background()
	scheme := kruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := monv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	fc := fake.NewClientBuilder().WithScheme(scheme).Build()
	cr := newCacheReader(scheme, fc)
	cr.track(&monv1.Monitor{}, &monv1.MonitorGroup{}, &monv1.EscalationPolicy{}, &monv1.Plan{}, &monv1.ProbeRegion{},
		&corev1.Namespace{}, &corev1.Secret{}, &corev1.ConfigMap{})

	if err := cr.add(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNS, UID: "ns-bench", Labels: map[string]string{monv1.PlanLabel: "bench"}}},
		&monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "bench", UID: "plan-bench"}, Spec: monv1.PlanSpec{Features: plans.AllFeatures()}},
	); err != nil {
		return nil, err
	}
	regions := []string{"eu-1", "us-1", "us-2"}
	for _, r := range regions {
		if err := cr.add(&monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: r, UID: types.UID("region-" + r)}}); err != nil {
			return nil, err
		}
	}

	// API keys: the benchmark's and others in other workspaces, created
	// through apikeys.Create on the fake client and then put in the cache.
	var keySecrets []client.Object
	full, _, err := apikeys.Create(ctx, fc, benchNS, "bench", apikeys.Standard)
	if err != nil {
		return nil, err
	}
	for i := range benchOtherKeys {
		if _, _, err := apikeys.Create(ctx, fc, fmt.Sprintf("ws-%d", i%20), fmt.Sprintf("key %d", i), apikeys.ReadOnly); err != nil {
			return nil, err
		}
	}
	var secrets corev1.SecretList
	if err := fc.List(ctx, &secrets); err != nil {
		return nil, err
	}
	for i := range secrets.Items {
		s := &secrets.Items[i]
		s.UID = types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
		s.CreationTimestamp = metav1.Now()
		keySecrets = append(keySecrets, s)
	}
	if err := cr.add(keySecrets...); err != nil {
		return nil, err
	}

	now := time.Now()
	f := &benchFixture{key: full, reader: cr}
	for i := range monitors {
		m := benchMonitor(i, now)
		f.ids = append(f.ids, string(m.UID))
		if err := cr.add(m); err != nil {
			return nil, err
		}
	}

	st, err := sqlite.Open(ctx, filepath.Join(dir, "history.db"), sqlite.Options{})
	if err != nil {
		return nil, err
	}
	f.store = st
	// 30 days of checks every 10 minutes from one region for benchHistory
	// monitors (4,320 rows each).
	f.history = f.ids[:history]
	for _, id := range f.history {
		var checks []store.Check
		for t := now.Add(-30 * 24 * time.Hour); t.Before(now); t = t.Add(10 * time.Minute) {
			code := 200
			status := store.StatusUp
			if t.Minute() == 0 && t.Hour() == 3 {
				status, code = store.StatusDown, 503
			}
			checks = append(checks, store.Check{
				ID: fmt.Sprintf("%s-%d", id, t.Unix()), MonitorID: id, Namespace: benchNS, Region: "eu-1",
				CheckedAt: t, Status: status, StatusCode: &code, ResponseTimeMs: int64(80 + t.Unix()%50),
			})
		}
		if _, err := st.InsertChecks(ctx, checks); err != nil {
			return nil, err
		}
	}

	f.srv = newTestServer(testOptions{
		Client:    cr,
		Reader:    cr,
		Monitors:  informerMonitors{indexer: cr.indexers[monitorGVK], versions: &monitorVersions{}},
		Plans:     &plans.Resolver{Reader: cr, DefaultPlan: "bench"},
		Keys:      cr,
		Store:     st,
		PublicURL: "https://uptime.example.com",
	})
	// Lift the per-key limit (1200 per minute); the limiter still counts.
	f.srv.rt.Limits.PerKey.Limiter = ratelimit.New(math.MaxInt, time.Minute)
	f.http = httptest.NewServer(f.srv.Handler())
	f.client = &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}}
	return f, nil
}

var monitorGVK = monv1.GroupVersion.WithKind("Monitor")

// benchMonitor is monitor i of the workspace: an http monitor with tags,
// config and a status as the controllers leave it.
func benchMonitor(i int, now time.Time) *monv1.Monitor {
	rt := int64(90 + i%40)
	checked := metav1.NewTime(now.Add(-time.Duration(i%120) * time.Second))
	return &monv1.Monitor{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: benchNS, Name: fmt.Sprintf("site-%05d", i),
			UID:               types.UID(fmt.Sprintf("10000000-0000-4000-8000-%012d", i)),
			ResourceVersion:   fmt.Sprint(1000 + i),
			Generation:        1,
			CreationTimestamp: metav1.NewTime(now.Add(-time.Duration(benchMonitors-i) * time.Minute)),
			Labels:            map[string]string{"app.kubernetes.io/managed-by": "uptime-operator"},
		},
		Spec: monv1.MonitorSpec{
			Name:            fmt.Sprintf("Site %d", i),
			Type:            monv1.MonitorHTTP,
			URL:             fmt.Sprintf("https://site-%d.example.com/health", i),
			IntervalSeconds: 60,
			Tags:            []string{"bench", fmt.Sprintf("team-%d", i%10)},
			HTTP:            &monv1.HTTPConfig{Method: "GET", ExpectedStatusCodes: []int32{200, 204}},
		},
		Status: monv1.MonitorStatus{
			CurrentStatus: monv1.StatusUp, LastStatus: "up", LastCheckedAt: &checked, LastResponseTimeMs: &rt,
			Uptime24h: "99.95%", Uptime30d: "99.9%", EffectiveRegions: []string{"eu-1", "us-1"}, EffectiveTimeoutMs: 30000,
			EffectiveIntervalSeconds: 60,
		},
	}
}

// runHTTP drives path(i) with parallel clients and reports req/s and latency
// percentiles.
func runHTTP(b *testing.B, f *benchFixture, parallelism int, path func(i int) string) {
	b.Helper()
	// Check one request first.
	if code, body := f.get(path(0)); code != http.StatusOK {
		b.Fatalf("GET %s = %d %s", path(0), code, body)
	}
	var mu sync.Mutex
	var lat []time.Duration
	var seq sync.Mutex
	n := 0
	b.SetParallelism(parallelism)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		for pb.Next() {
			seq.Lock()
			i := n
			n++
			seq.Unlock()
			t0 := time.Now()
			code, body := f.get(path(i))
			local = append(local, time.Since(t0))
			if code != http.StatusOK {
				b.Errorf("GET %s = %d %s", path(i), code, body)
				return
			}
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(math.Ceil(p*float64(len(lat))))-1)]) / float64(time.Millisecond)
	}
	rate := float64(len(lat)) / elapsed.Seconds()
	b.ReportMetric(rate, "req/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	base := f.bareBaseline(b, parallelism*runtime.GOMAXPROCS(0), path(1))
	b.ReportMetric(base.PerSecond, "baseline-req/s")
	b.ReportMetric(rate/base.PerSecond, "ratio")
	b.ReportMetric(base.Percentile(0.99), "baseline-p99-ms")
}

// bareBaseline serves the bytes of one answer of path from a bare net/http
// handler and drives it like the benchmark drove the API (same client, same
// number of workers): what this machine allows for answers of that size.
func (f *benchFixture) bareBaseline(b *testing.B, workers int, path string) testutil.Baseline {
	b.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.http.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+f.key)
	resp, err := f.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	contentType := resp.Header.Get("Content-Type")
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}))
	defer bare.Close()
	base, err := testutil.MeasureBaseline(2*time.Second, workers, func() error {
		req, _ := http.NewRequest(http.MethodGet, bare.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+f.key)
		resp, err := f.client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	})
	if err != nil {
		b.Fatal(err)
	}
	return base
}

func (f *benchFixture) get(path string) (int, string) {
	req, _ := http.NewRequest(http.MethodGet, f.http.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+f.key)
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, ""
}

// BenchmarkGetMonitor: GET /monitors/{id} with 10,000 monitors in the
// workspace (target: ratio ≥ 0.5 to the bare handler serving the same
// bytes). Ids cycle through every monitor; every 500th request is one of
// the monitors with 30 days of history. "uptime=cached" is the server as
// it runs (the 24 h and 30 d uptime are reused while the monitor's
// rollups and the minute are the same); "uptime=store" computes them from
// the store on every request, as it does with PostgreSQL.
func BenchmarkGetMonitor(b *testing.B) {
	for _, tc := range []struct {
		name string
		off  bool
	}{{"uptime=cached", false}, {"uptime=store", true}} {
		b.Run(tc.name, func(b *testing.B) {
			f := fixture(b)
			f.srv.uptimes.off = tc.off
			defer func() { f.srv.uptimes.off = false }()
			path := func(i int) string {
				if i%500 == 0 {
					return "/monitors/" + f.history[(i/500)%len(f.history)]
				}
				return "/monitors/" + f.ids[(i*7919)%len(f.ids)]
			}
			// Every monitor asked for once, as a server does that answers
			// for each monitor more often than once a minute (each is asked
			// every few seconds here).
			for i := range len(f.ids) {
				if code, body := f.get(path(i)); code != http.StatusOK {
					b.Fatalf("GET %s = %d %s", path(i), code, body)
				}
			}
			runHTTP(b, f, 4, path)
		})
	}
}

// BenchmarkGetMonitorWithHistory: GET /monitors/{id} of monitors with 30
// days of checks (uptime from the store on every request).
func BenchmarkGetMonitorWithHistory(b *testing.B) {
	f := fixture(b)
	runHTTP(b, f, 4, func(i int) string { return "/monitors/" + f.history[i%len(f.history)] })
}

// BenchmarkListMonitors: GET /monitors returning all 10,000 monitors
// (target: ratio ≥ 0.5 to the bare handler serving the same bytes).
// "unchanged" lists a workspace where nothing changes between requests (the
// answer is reused); "one-changed" changes one monitor's status before every
// request, as status writes do (the list is read, fingerprinted, sorted and
// its one changed item encoded again; target ratio ≥ 0.25).
func BenchmarkListMonitors(b *testing.B) {
	f := fixture(b)
	b.Run("unchanged", func(b *testing.B) {
		runHTTP(b, f, 1, func(int) string { return "/monitors" })
	})
	b.Run("one-changed", func(b *testing.B) {
		lister := f.srv.opts.Monitors.(informerMonitors)
		var mu sync.Mutex
		rv := 1_000_000
		runHTTP(b, f, 1, func(i int) string {
			mu.Lock()
			rv++
			next := rv
			mu.Unlock()
			obj, ok, err := lister.indexer.GetByKey(benchNS + "/" + fmt.Sprintf("site-%05d", i%benchMonitors))
			if err != nil || !ok {
				b.Fatalf("monitor %d: %v", i, err)
			}
			m := obj.(*monv1.Monitor).DeepCopy()
			m.ResourceVersion = fmt.Sprint(next)
			rt := int64(next % 500)
			m.Status.LastResponseTimeMs = &rt
			if err := lister.indexer.Update(m); err != nil {
				b.Fatal(err)
			}
			lister.versions.changed(m)
			return "/monitors"
		})
	})
}

// BenchmarkKeyCheck is the cost of API key authentication per request.
// "middleware" is the whole authenticated wrapper: Bearer parsing, SHA-256,
// the hash-label lookup in the key cache (200 other keys present) with a
// constant-time compare, the per-key rate limiter, the RateLimit headers and
// the last-use write to SQLite. "lookup" is apikeys.Authenticate alone.
// "invalid" is an unknown key (lookup + the invalid-key IP counter).
func BenchmarkKeyCheck(b *testing.B) {
	f := fixture(b)
	h := f.srv.rt.Authenticated(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	serve := func(b *testing.B, key string, want int) {
		b.RunParallel(func(pb *testing.PB) {
			req := httptest.NewRequest(http.MethodGet, "/monitors", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			for pb.Next() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != want {
					b.Errorf("status %d, want %d: %s", rec.Code, want, rec.Body.String())
					return
				}
			}
		})
	}
	b.Run("middleware", func(b *testing.B) { serve(b, f.key, http.StatusNoContent) })
	b.Run("lookup", func(b *testing.B) {
		ctx := context.Background()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := apikeys.Authenticate(ctx, f.reader, f.key); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("invalid", func(b *testing.B) {
		// Lift the invalid-key block so every request does the lookup.
		old := f.srv.rt.Limits.InvalidKey.Limiter
		f.srv.rt.Limits.InvalidKey.Limiter = ratelimit.New(math.MaxInt, 15*time.Minute)
		defer func() { f.srv.rt.Limits.InvalidKey.Limiter = old }()
		serve(b, "sk_"+strings.Repeat("x", 43), http.StatusUnauthorized)
	})
}
