package monitors

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// TestListAdvanceMatchesRebuild: a list answer brought up to date by
// placing the changed monitors (advance) is byte for byte the answer built
// from scratch, through random updates, deletions, deletions in progress,
// re-creations under the same name, new monitors (some created in the same
// second as others, so names break ties) and a tag filter; and it is taken
// instead of a rebuild. The answer written again unchanged is the same
// too. With segments of 2 KiB (a few items each) the answers keep the
// segments no change touched and stay cut in segments of about that size.
func TestListAdvanceMatchesRebuild(t *testing.T) {
	for _, size := range []int{segmentBytes, 2 << 10} {
		t.Run(fmt.Sprintf("segment=%d", size), func(t *testing.T) {
			defer func(old int) { segmentBytes = old }(segmentBytes)
			segmentBytes = size
			testListAdvance(t)
		})
	}
}

func testListAdvance(t *testing.T) {
	const ns = "team"
	cr := teamCache(t, ns)
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	idx := cr.indexers[monitorGVK]
	versions := &monitorVersions{}
	journal := informerMonitors{indexer: idx, versions: versions}
	rebuilt := informerMonitors{indexer: idx} // no versions: every answer is built
	opts := testOptions{Client: cr, Reader: cr, Plans: &plans.Resolver{Reader: cr, DefaultPlan: "p"}}
	opts.Monitors = journal
	s := newTestServer(opts)
	opts.Monitors = rebuilt
	fresh := newTestServer(opts)

	rng := rand.New(rand.NewPCG(1, 2))
	uid, rv := 0, 100
	monitor := func(name string) *monv1.Monitor {
		uid++
		rv++
		m := benchMonitorIn(ns, uid, base)
		m.Name = name
		m.UID = types.UID(fmt.Sprintf("30000000-0000-4000-8000-%012d", uid))
		m.ResourceVersion = fmt.Sprint(rv)
		m.CreationTimestamp = metav1.NewTime(base.Add(time.Duration(rng.IntN(40)) * time.Second))
		return m
	}
	var names []string
	for i := range 200 {
		name := fmt.Sprintf("m-%03d", i)
		names = append(names, name)
		m := monitor(name)
		if err := idx.Add(m); err != nil {
			t.Fatal(err)
		}
		versions.changed(m)
	}
	get := func(srv *testServer, query string) string {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/monitors"+query, nil)
		req = core.WithCaller(req, &core.Caller{Namespace: ns, Level: "read-only"})
		rec := httptest.NewRecorder()
		srv.listMonitors(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /monitors%s = %d %s", query, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	current := func(name string) *monv1.Monitor {
		m, err := journal.MonitorByKey(ns + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for step := range 300 {
		for range 1 + rng.IntN(4) {
			name := names[rng.IntN(len(names))]
			old := current(name)
			switch op := rng.IntN(10); {
			case old == nil || op == 0: // (re-)created under the name
				m := monitor(name)
				if err := idx.Add(m); err != nil {
					t.Fatal(err)
				}
				versions.changed(old, m)
			case op == 1:
				if err := idx.Delete(old); err != nil {
					t.Fatal(err)
				}
				versions.changed(old)
			default: // a status or spec write, now and then a deletion in progress or new tags
				m := old.DeepCopy()
				rv++
				m.ResourceVersion = fmt.Sprint(rv)
				ms := int64(rng.IntN(500))
				m.Status.LastResponseTimeMs = &ms
				switch op {
				case 2:
					now := metav1.NewTime(base)
					m.DeletionTimestamp = &now
				case 3:
					m.Spec.Tags = []string{fmt.Sprintf("team-%d", rng.IntN(3))}
				}
				if err := idx.Update(m); err != nil {
					t.Fatal(err)
				}
				versions.changed(old, m)
			}
		}
		before := s.items.latestAnswer([2]string{ns, ""})
		for _, query := range []string{"", "?tag=team-1"} {
			want := get(fresh, query)
			if got := get(s, query); got != want {
				t.Fatalf("step %d, GET /monitors%s: the advanced answer differs from the rebuilt one", step, query)
			}
			if got := get(s, query); got != want {
				t.Fatalf("step %d, GET /monitors%s: the answer written again differs from the rebuilt one", step, query)
			}
		}
		after := s.items.latestAnswer([2]string{ns, ""})
		checkSegments(t, after)
		if before != nil && before != after {
			kept := 0
			for _, seg := range after.segs {
				for _, old := range before.segs {
					if &seg.b[0] == &old.b[0] {
						kept++
					}
				}
			}
			if len(after.segs) > 3 && kept == 0 {
				t.Fatalf("step %d: no segment of %d kept", step, len(after.segs))
			}
		}
	}
	if a := s.items.latestAnswer([2]string{ns, ""}); a == nil || a.key.version != versions.get(ns) {
		t.Fatal("no answer of the last version kept")
	}
}

// checkSegments: the items of a are its segments' bytes, in order, and
// the segments are not cut much finer than segmentBytes.
func checkSegments(t *testing.T, a *sortedAnswer) {
	t.Helper()
	i, size := 0, 0
	for _, seg := range a.segs {
		b := seg.b
		for range seg.n {
			raw := a.raws[i]
			if len(b) < 1+len(raw) || b[0] != ',' || &b[1] != &raw[0] {
				t.Fatalf("item %d is not at its place in segment", i)
			}
			b = b[1+len(raw):]
			i++
		}
		if len(b) != 0 {
			t.Fatalf("segment of %d items has %d bytes more", seg.n, len(b))
		}
		size += len(seg.b)
	}
	if i != len(a.raws) || len(a.raws) != len(a.ms) {
		t.Fatalf("%d items in the segments, %d raws, %d monitors", i, len(a.raws), len(a.ms))
	}
	if most := 2*size/segmentBytes + 2; len(a.segs) > most {
		t.Fatalf("%d bytes in %d segments (more than %d)", size, len(a.segs), most)
	}
}

// TestMonitorVersionsSince: the changes after a version are known until
// they leave the log or an event names no object.
func TestMonitorVersionsSince(t *testing.T) {
	v := &monitorVersions{}
	m := func(name string) *monv1.Monitor {
		return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: name}}
	}
	v.changed(m("x"))
	v.changed(m("x"), m("x")) // an update that did not move it: one change
	v.changed(m("y"))
	if cs, ok := v.since("a", 1, 3); !ok || len(cs) != 2 || cs[0].name != "x" || cs[1].name != "y" {
		t.Fatalf("since 1 = %v %v", cs, ok)
	}
	if _, ok := v.since("a", 1, 4); ok {
		t.Fatal("a version not reached yet is known")
	}
	for i := range maxMonitorChanges {
		v.changed(m(fmt.Sprint(i)))
	}
	if _, ok := v.since("a", 1, v.get("a")); ok {
		t.Fatal("changes that left the log are known")
	}
	if cs, ok := v.since("a", v.get("a")-10, v.get("a")); !ok || len(cs) != 10 {
		t.Fatalf("the last 10: %d %v", len(cs), ok)
	}
	v.changed(cacheTombstone("a/gone"))
	if _, ok := v.since("a", v.get("a")-2, v.get("a")); ok {
		t.Fatal("a change without an object is known")
	}
}

// cacheTombstone is the informer's event of a deletion it missed, without
// the object.
func cacheTombstone(key string) any { return toolscache.DeletedFinalStateUnknown{Key: key} }
