package apiserver

import (
	"context"
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
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// TestListAdvanceMatchesRebuild: a list answer brought up to date by
// placing the changed monitors (advance) is byte for byte the answer built
// from scratch, through random updates, deletions, deletions in progress,
// re-creations under the same name, new monitors (some created in the same
// second as others, so names break ties) and a tag filter; and it is taken
// instead of a rebuild.
func TestListAdvanceMatchesRebuild(t *testing.T) {
	const ns = "team"
	cr := teamCache(t, ns)
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	idx := cr.indexers[monitorGVK]
	versions := &monitorVersions{}
	journal := informerMonitors{indexer: idx, versions: versions}
	rebuilt := informerMonitors{indexer: idx} // no versions: every answer is built
	opts := Options{Client: cr, Reader: cr, Plans: &plans.Resolver{Reader: cr, DefaultPlan: "p"}}
	opts.Monitors = journal
	s := New(opts)
	opts.Monitors = rebuilt
	fresh := New(opts)

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
	get := func(srv *Server, query string) string {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/monitors"+query, nil)
		req = req.WithContext(context.WithValue(req.Context(), callerKey{}, &Caller{Namespace: ns, Level: "read-only"}))
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
		for _, query := range []string{"", "?tag=team-1"} {
			if got, want := get(s, query), get(fresh, query); got != want {
				t.Fatalf("step %d, GET /monitors%s: the advanced answer differs from the rebuilt one", step, query)
			}
		}
	}
	if a := s.items.latestAnswer([2]string{ns, ""}); a == nil || a.key.version != versions.get(ns) {
		t.Fatal("no answer of the last version kept")
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
