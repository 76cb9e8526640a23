package writethrough

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func monitor(ns, name, rv string) *monv1.Monitor {
	return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name), ResourceVersion: rv}}
}

func names(ms []*monv1.Monitor) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name+"@"+m.ResourceVersion)
	}
	return out
}

// clockAt is an Overlay clock the test moves.
type clockAt struct{ t time.Time }

func (c *clockAt) now() time.Time { return c.t }

func TestLaySharedGivesReadYourWrites(t *testing.T) {
	clk := &clockAt{time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)}
	o := &Overlay{Now: clk.now}
	cached := []*monv1.Monitor{monitor("team", "a", "10"), monitor("team", "b", "11"), monitor("team", "gone", "12")}
	if got := LayShared(o, cached, "team"); &got[0] != &cached[0] {
		t.Fatal("without writes the cached slice is returned as it is")
	}

	o.Record(monitor("team", "a", "20"), false)   // updated, cache behind
	o.Record(monitor("team", "new", "21"), false) // created, cache has not seen it
	o.Record(monitor("team", "gone", "12"), true) // deleted
	o.Record(monitor("other", "x", "22"), false)  // another namespace
	o.Record(&monv1.MonitorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "g", UID: "g", ResourceVersion: "23"}}, false)
	if o.Quiet("team") || !o.Quiet("third") {
		t.Fatal("Quiet must report the namespaces with recent writes")
	}

	clk.t = clk.t.Add(time.Second)
	got := names(LayShared(o, cached, "team"))
	want := []string{"a@20", "b@11", "new@21"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("laid list = %v, want %v", got, want)
	}
	if cached[0].ResourceVersion != "10" {
		t.Fatal("the cached objects must not be modified")
	}

	// Once the cache caught up the cache wins; after the TTL writes are forgotten.
	clk.t = clk.t.Add(time.Second)
	caught := []*monv1.Monitor{monitor("team", "a", "25"), monitor("team", "b", "11")}
	if got := names(LayShared(o, caught, "team")); len(got) != 3 || got[0] != "a@25" {
		t.Fatalf("after the cache caught up: %v", got)
	}
	clk.t = clk.t.Add(TTL + time.Second)
	if got := names(LayShared(o, caught, "team")); len(got) != 2 {
		t.Fatalf("after the TTL: %v", got)
	}
}

// fakeReader answers from fixed objects, as an informer that has not seen
// the latest writes would.
type fakeReader struct {
	client.Client // unused methods
	pages         []monv1.StatusPage
	// afterRead, when set, runs once a Get or List copied its answer and
	// before it returns: what happens meanwhile to a read in flight.
	afterRead func()
}

func (f *fakeReader) read() {
	if fn := f.afterRead; fn != nil {
		f.afterRead = nil
		fn()
	}
}

func (f *fakeReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	for i := range f.pages {
		if f.pages[i].Namespace == key.Namespace && f.pages[i].Name == key.Name {
			*obj.(*monv1.StatusPage) = *f.pages[i].DeepCopy()
			f.read()
			return nil
		}
	}
	return apierrors.NewNotFound(monv1.GroupVersion.WithResource("statuspages").GroupResource(), key.Name)
}

func (f *fakeReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	list.(*monv1.StatusPageList).Items = append([]monv1.StatusPage(nil), f.pages...)
	f.read()
	return nil
}

func page(name, slug, rv string, public bool) monv1.StatusPage {
	return monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: types.UID(name), ResourceVersion: rv},
		Spec: monv1.StatusPageSpec{Slug: slug, IsPublic: public}}
}

// TestReadsThroughTheOverlay: Get and List (by an index the cache was told
// about) answer with what was written, not what the cache still holds.
func TestReadsThroughTheOverlay(t *testing.T) {
	o := &Overlay{}
	o.addIndex(&monv1.StatusPage{}, "slug", func(obj client.Object) []string { return []string{obj.(*monv1.StatusPage).Spec.Slug} })
	cache := &fakeReader{pages: []monv1.StatusPage{page("p1", "acme", "5", true), page("p2", "beta", "6", true)}}
	c := o.Client(cache)
	ctx := context.Background()

	hidden := page("p1", "acme", "7", false)
	o.Record(&hidden, false)
	renamed := page("p2", "gamma", "8", true)
	o.Record(&renamed, false)
	created := page("p3", "acme", "9", true)
	o.Record(&created, false)

	var got monv1.StatusPage
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "p1"}, &got); err != nil || got.Spec.IsPublic {
		t.Fatalf("Get after hiding the page: public=%v err=%v", got.Spec.IsPublic, err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "p3"}, &got); err != nil || got.Name != "p3" {
		t.Fatalf("Get of a page the cache has not seen: %v", err)
	}
	var list monv1.StatusPageList
	if err := c.List(ctx, &list, client.InNamespace("team"), client.MatchingFields{"slug": "acme"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 || list.Items[0].Spec.IsPublic || list.Items[1].Name != "p3" {
		t.Fatalf("list by slug acme = %+v", list.Items)
	}
	if err := c.List(ctx, &list, client.MatchingFields{"slug": "beta"}); err != nil || len(list.Items) != 0 {
		t.Fatalf("the renamed page must leave the old slug: %+v %v", list.Items, err)
	}
	if err := c.List(ctx, &list, client.MatchingFields{"unknown": "x"}); err != nil || len(list.Items) != 2 {
		t.Fatalf("a selector the overlay cannot evaluate keeps the cache's answer: %+v %v", list.Items, err)
	}

	deleted := page("p2", "gamma", "8", true)
	o.Record(&deleted, true)
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "p2"}, &got); !apierrors.IsNotFound(err) {
		t.Fatalf("Get of a deleted page: %v, want not found", err)
	}

	// The informer catches up: its object is answered and the entry dropped.
	cache.pages[0] = page("p1", "acme", "7", false)
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "p1"}, &got); err != nil || got.ResourceVersion != "7" {
		t.Fatalf("after the cache caught up: %v", err)
	}
	if o.n.Load() != 2 {
		t.Fatalf("entries left = %d, want 2 (p3 and the deleted p2)", o.n.Load())
	}
}

// A deleted object with finalizers stays until its controller runs them:
// once the cache has its deletion timestamp, the cache wins, or the
// controller reading through the overlay would never see it terminating.
func TestDeletedObjectWithFinalizersReachesItsController(t *testing.T) {
	o := &Overlay{}
	live := monitor("team", "web", "30")
	o.Record(live, true)

	// Before the cache has the deletion, the object is gone for readers.
	if err := o.layGet(client.ObjectKeyFromObject(live), live.DeepCopy(), nil); !apierrors.IsNotFound(err) {
		t.Fatalf("a deleted object read before the cache caught up: %v, want not found", err)
	}

	terminating := monitor("team", "web", "31")
	now := metav1.Now()
	terminating.DeletionTimestamp = &now
	terminating.Finalizers = []string{"monitoring.uptime-operator.io/history"}
	got := terminating.DeepCopy()
	done := o.Reading()
	err := o.layGet(client.ObjectKeyFromObject(terminating), got, nil)
	done()
	if err != nil {
		t.Fatalf("the terminating object in the cache was hidden: %v", err)
	}
	if got.DeletionTimestamp == nil {
		t.Fatal("the controller must see the deletion timestamp")
	}
	if o.n.Load() != 0 {
		t.Fatal("the entry must be dropped once the cache has the deletion and no read holds it")
	}
}

// TestReadInFlightWhenTheCacheCatchesUp: a read that copied the cache's old
// object still answers the write when, before it looks at the overlay, the
// informer catches up and another read (a controller reconciling the
// write's own watch event) sees the cache holding the write. The entry
// stays until every read that began before that moment has ended.
func TestReadInFlightWhenTheCacheCatchesUp(t *testing.T) {
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "team", Name: "p1"}
	reads := map[string]func(c client.Client) (monv1.StatusPage, error){
		"get": func(c client.Client) (monv1.StatusPage, error) {
			var p monv1.StatusPage
			err := c.Get(ctx, key, &p)
			return p, err
		},
		"list": func(c client.Client) (monv1.StatusPage, error) {
			var l monv1.StatusPageList
			if err := c.List(ctx, &l, client.InNamespace("team")); err != nil || len(l.Items) != 1 {
				return monv1.StatusPage{}, fmt.Errorf("list = %d items, %v", len(l.Items), err)
			}
			return l.Items[0], nil
		},
	}
	for slow, slowRead := range reads {
		for other, otherRead := range reads {
			t.Run(slow+" while a "+other+" sees the catch-up", func(t *testing.T) {
				o := &Overlay{}
				cache := &fakeReader{pages: []monv1.StatusPage{page("p1", "acme", "5", true)}}
				c := o.Client(cache)
				hidden := page("p1", "acme", "7", false)
				o.Record(&hidden, false)
				cache.afterRead = func() {
					cache.pages[0] = page("p1", "acme", "7", false) // the watch event arrives
					if p, err := otherRead(c); err != nil || p.ResourceVersion != "7" {
						t.Errorf("the read after the catch-up: %s %v", p.ResourceVersion, err)
					}
				}
				p, err := slowRead(c)
				if err != nil || p.Spec.IsPublic || p.ResourceVersion != "7" {
					t.Fatalf("the read in flight answered public=%v at %s (%v): the write it followed was lost", p.Spec.IsPublic, p.ResourceVersion, err)
				}
				if n := o.n.Load(); n != 0 {
					t.Fatalf("entries left after both reads ended: %d, want 0", n)
				}
			})
		}
	}
}

// TestConcurrentWritesRecordedOutOfOrder: of two writes of one object
// answered at about the same time, the later answer is laid over the cache
// even when the earlier one was recorded after it.
func TestConcurrentWritesRecordedOutOfOrder(t *testing.T) {
	o := &Overlay{}
	cache := &fakeReader{pages: []monv1.StatusPage{page("p1", "acme", "5", true)}}
	c := o.Client(cache)
	later, earlier := page("p1", "acme", "9", false), page("p1", "acme", "7", true)
	o.Record(&later, false)
	o.Record(&earlier, false)
	var got monv1.StatusPage
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "p1"}, &got); err != nil || got.ResourceVersion != "9" {
		t.Fatalf("Get = %s (%v), want the later write 9", got.ResourceVersion, err)
	}
}
