package monitors

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// TestListAnswerFollowsChanges: GET /monitors reuses its last answer only
// while no monitor of the workspace changed; an update (new
// resourceVersion), a new monitor, a deleted one and a group created
// for a dangling reference each show at once, and a tag filter has an
// answer of its own. It runs with the informer's change count (the
// indexer changed, then the count, as the informer notifies its handlers
// after updating its indexer) and without.
func TestListAnswerFollowsChanges(t *testing.T) {
	for _, counted := range []bool{true, false} {
		t.Run(fmt.Sprintf("counted=%v", counted), func(t *testing.T) { testListAnswer(t, counted) })
	}
}

func testListAnswer(t *testing.T, counted bool) {
	const ns = "team"
	cr := teamCache(t, ns)
	now := time.Now()
	for i := range 3 {
		if err := cr.add(benchMonitorIn(ns, i, now)); err != nil {
			t.Fatal(err)
		}
	}
	idx := cr.indexers[monitorGVK]
	lister := informerMonitors{indexer: idx}
	if counted {
		lister.versions = &monitorVersions{}
	}
	s := newTestServer(testOptions{Client: cr, Reader: cr, Monitors: lister, Plans: &plans.Resolver{Reader: cr, DefaultPlan: "p"}})
	changed := func(obj *monv1.Monitor, apply func(any) error) {
		t.Helper()
		if err := apply(obj); err != nil {
			t.Fatal(err)
		}
		if counted {
			lister.versions.changed(obj)
		}
	}

	list := func(query string) []restapi.Monitor {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/monitors"+query, nil)
		req = core.WithCaller(req, &core.Caller{Namespace: ns, Level: "read-only"})
		rec := httptest.NewRecorder()
		s.listMonitors(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /monitors%s = %d %s", query, rec.Code, rec.Body)
		}
		var out []restapi.Monitor
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	names := func(ms []restapi.Monitor) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	expect := func(got []restapi.Monitor, want ...string) {
		t.Helper()
		if fmt.Sprint(names(got)) != fmt.Sprint(want) {
			t.Fatalf("names = %v, want %v", names(got), want)
		}
	}

	expect(list(""), "Site 2", "Site 1", "Site 0")
	expect(list(""), "Site 2", "Site 1", "Site 0") // the reused answer

	// An update: same uid, new resourceVersion.
	m1 := benchMonitorIn(ns, 1, now)
	m1.ResourceVersion = "5001"
	m1.Spec.Name = "Site 1 renamed"
	changed(m1, idx.Update)
	expect(list(""), "Site 2", "Site 1 renamed", "Site 0")

	// A new monitor and a deleted one.
	changed(benchMonitorIn(ns, 3, now), idx.Add)
	changed(benchMonitorIn(ns, 0, now), idx.Delete)
	expect(list(""), "Site 3", "Site 2", "Site 1 renamed")

	// A tag filter has its own answer; the unfiltered one stays.
	expect(list("?tag=team-2"), "Site 2")
	expect(list(""), "Site 3", "Site 2", "Site 1 renamed")

	// A reference that resolves later: the group is created after the
	// monitor naming it was listed.
	m2 := benchMonitorIn(ns, 2, now)
	m2.ResourceVersion = "5002"
	m2.Spec.GroupRef = &monv1.LocalObjectReference{Name: "web"}
	changed(m2, idx.Update)
	if got := list(""); got[1].GroupID != nil {
		t.Fatalf("group_id = %q before the group exists", *got[1].GroupID)
	}
	if err := cr.add(&monv1.MonitorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", UID: "group-web", ResourceVersion: "7"}}); err != nil {
		t.Fatal(err)
	}
	if got := list(""); got[1].GroupID == nil || *got[1].GroupID != "group-web" {
		t.Fatalf("group_id = %v, want group-web", got[1].GroupID)
	}
}

// benchMonitorIn is benchMonitor i in namespace ns.
func benchMonitorIn(ns string, i int, now time.Time) *monv1.Monitor {
	m := benchMonitor(i, now)
	m.Namespace = ns
	m.UID = types.UID(fmt.Sprintf("20000000-0000-4000-8000-%012d", i))
	return m
}

// TestGetAnswerFollowsChanges: GET /monitors/:id reuses its bytes only
// while the monitor and both uptimes are unchanged.
func TestGetAnswerFollowsChanges(t *testing.T) {
	const ns = "team"
	cr := teamCache(t, ns)
	now := time.Now()
	m := benchMonitorIn(ns, 0, now)
	if err := cr.add(m); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "history.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s := newTestServer(testOptions{Client: cr, Reader: cr, Monitors: informerMonitors{indexer: cr.indexers[monitorGVK]}, Plans: &plans.Resolver{Reader: cr, DefaultPlan: "p"}, Store: st})

	get := func() restapi.Monitor {
		t.Helper()
		rec := getMonitorAsReader(s, ns, string(m.UID))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != httpjson.ContentType {
			t.Fatalf("GET = %d %s %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		var out restapi.Monitor
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := get(); got.Uptime24h != nil || got.Name != "Site 0" {
		t.Fatalf("no checks yet: uptime_24h %v, name %q", got.Uptime24h, got.Name)
	}
	insert := func(status store.CheckStatus, n int) {
		t.Helper()
		var cs []store.Check
		for i := range n {
			cs = append(cs, store.Check{ID: fmt.Sprintf("%s-%d-%d", status, n, i), MonitorID: string(m.UID), Namespace: ns, Region: "eu-1",
				CheckedAt: now.Add(-time.Duration(i+1) * time.Minute), Status: status, ResponseTimeMs: 10})
		}
		if _, err := st.InsertChecks(ctx, cs); err != nil {
			t.Fatal(err)
		}
	}
	insert(store.StatusUp, 3)
	if got := get(); got.Uptime24h == nil || *got.Uptime24h != 100 {
		t.Fatalf("uptime_24h = %v, want 100", got.Uptime24h)
	}
	insert(store.StatusDown, 1)
	if got := get(); got.Uptime24h == nil || *got.Uptime24h != 75 || got.Uptime30d == nil || *got.Uptime30d != 75 {
		t.Fatalf("uptime_24h, uptime_30d = %v, %v, want 75", got.Uptime24h, got.Uptime30d)
	}
	renamed := m.DeepCopy()
	renamed.ResourceVersion = "9000"
	renamed.Spec.Name = "Renamed"
	if err := cr.indexers[monitorGVK].Update(renamed); err != nil {
		t.Fatal(err)
	}
	if got := get(); got.Name != "Renamed" || *got.Uptime24h != 75 {
		t.Fatalf("after the update: name %q, uptime_24h %v", got.Name, got.Uptime24h)
	}
}

// TestSortNewestFirstMatchesNewestFirst: the keyed sort orders as
// core.NewestFirst does, with equal, zero and sub-second creation times.
func TestSortNewestFirstMatchesNewestFirst(t *testing.T) {
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var ms []*monv1.Monitor
	for i := range 200 {
		m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("m-%03d", (i*37)%200), Namespace: fmt.Sprintf("ns-%d", i%2)}}
		switch i % 4 {
		case 0: // zero
		case 1:
			m.CreationTimestamp = metav1.NewTime(base.Add(time.Duration(i%7) * time.Second))
		default:
			m.CreationTimestamp = metav1.NewTime(base.Add(time.Duration(i%5) * 300 * time.Millisecond))
		}
		ms = append(ms, m)
	}
	want := slices.Clone(ms)
	slices.SortFunc(want, core.NewestFirst)
	sortNewestFirst(ms)
	for i := range ms {
		if ms[i] != want[i] {
			t.Fatalf("position %d: %s/%s, want %s/%s", i, ms[i].Namespace, ms[i].Name, want[i].Namespace, want[i].Name)
		}
	}
}

// teamCache is a cache reader of the kinds a monitor list reads, holding
// namespace ns on a plan with every feature.
func teamCache(t *testing.T, ns string) *cacheReader {
	t.Helper()
	scheme := kruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := monv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cr := newCacheReader(scheme, fake.NewClientBuilder().WithScheme(scheme).Build())
	cr.track(&monv1.Monitor{}, &monv1.MonitorGroup{}, &monv1.EscalationPolicy{}, &monv1.Plan{}, &monv1.ProbeRegion{}, &corev1.Namespace{})
	if err := cr.add(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, UID: "ns-team", Labels: map[string]string{monv1.PlanLabel: "p"}}},
		&monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "plan-p"}, Spec: monv1.PlanSpec{Features: plans.AllFeatures()}},
	); err != nil {
		t.Fatal(err)
	}
	return cr
}

// getMonitorAsReader calls the GET /monitors/{id} handler directly, as a
// read-only key of namespace ns.
func getMonitorAsReader(s *testServer, ns, id string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/monitors/"+id, nil)
	rctx := chi.NewRouteContext()
	rctx.URLParams.Add("id", id)
	req = core.WithCaller(req.WithContext(context.WithValue(req.Context(), chi.RouteCtxKey, rctx)), &core.Caller{Namespace: ns, Level: "read-only"})
	rec := httptest.NewRecorder()
	s.getMonitor(rec, req)
	return rec
}

// TestListAfterWriteWhileHandlersLag: the informer's store holds a write
// the API answered, a read (a controller reconciling the write's watch
// event) saw it there so the overlay let it go, but the informer has not
// yet run its event handlers, so its version of the workspace's monitors
// is still that of the answer kept before the write. The next list shows
// the write all the same.
func TestListAfterWriteWhileHandlersLag(t *testing.T) {
	const ns = "team"
	cr := teamCache(t, ns)
	now := time.Now()
	if err := cr.add(benchMonitorIn(ns, 0, now)); err != nil {
		t.Fatal(err)
	}
	idx := cr.indexers[monitorGVK]
	lister := informerMonitors{indexer: idx, versions: &monitorVersions{}}
	s := newTestServer(testOptions{Client: cr, Reader: cr, Monitors: lister, Plans: &plans.Resolver{Reader: cr, DefaultPlan: "p"}})
	list := func() string {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/monitors", nil)
		req = core.WithCaller(req, &core.Caller{Namespace: ns, Level: "read-only"})
		rec := httptest.NewRecorder()
		s.listMonitors(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /monitors = %d %s", rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	if got := list(); !strings.Contains(got, `"Site 0"`) {
		t.Fatalf("first list: %s", got)
	}
	list() // kept by the informer's version

	renamed := benchMonitorIn(ns, 0, now)
	renamed.ResourceVersion = "5001"
	renamed.Spec.Name = "Site 0 renamed"
	// The API's Update answered; the watch event reaches the store, and a
	// controller reads the monitor there.
	s.d.Overlay.Record(renamed, false)
	if err := idx.Update(renamed); err != nil {
		t.Fatal(err)
	}
	var seen monv1.Monitor
	if err := s.d.Client.Get(context.Background(), client.ObjectKeyFromObject(renamed), &seen); err != nil || seen.ResourceVersion != "5001" {
		t.Fatalf("controller read: %s %v", seen.ResourceVersion, err)
	}
	if !s.d.Overlay.Quiet(ns) {
		t.Fatal("the overlay keeps a write the cache holds and no read needs")
	}
	// The handlers have not run: lister.versions still says "unchanged".
	if got := list(); !strings.Contains(got, `"Site 0 renamed"`) {
		t.Fatalf("list after the rename, before the informer's handlers ran: %s", got)
	}
}
