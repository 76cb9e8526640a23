package apiserver

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// overlayTTL bounds how long a write of this replica overrides the cache;
// the informer normally catches up within milliseconds.
const overlayTTL = 10 * time.Second

// writeOverlay gives the API read-your-writes on top of the informer cache:
// objects this replica created, updated or deleted in the last seconds are
// laid over cached lists until the cache shows the same resourceVersion. A
// client that creates a monitor and lists monitors at once sees it, and one
// that deletes it twice gets 404 the second time.
type writeOverlay struct {
	mu      sync.Mutex
	entries map[types.UID]*overlayEntry
}

type overlayEntry struct {
	obj     client.Object // the object as written; nil when deleted
	typ     reflect.Type
	ns      string
	rv      string
	at      time.Time
	deleted bool
}

// record notes a write of obj at now.
func (o *writeOverlay) record(obj client.Object, deleted bool, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.entries == nil {
		o.entries = map[types.UID]*overlayEntry{}
	}
	for uid, e := range o.entries {
		if now.Sub(e.at) > overlayTTL {
			delete(o.entries, uid)
		}
	}
	e := &overlayEntry{typ: reflect.TypeOf(obj), ns: obj.GetNamespace(), rv: obj.GetResourceVersion(), at: now, deleted: deleted}
	if !deleted {
		e.obj = obj.DeepCopyObject().(client.Object)
	}
	o.entries[obj.GetUID()] = e
}

// apply lays the recent writes of namespace ns over a cached list.
func (o *writeOverlay) apply(list client.ObjectList, ns string, now time.Time) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.entries) == 0 {
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	itemsField := reflect.ValueOf(list).Elem().FieldByName("Items")
	if !itemsField.IsValid() {
		return fmt.Errorf("list %T has no Items", list)
	}
	typ := reflect.PointerTo(itemsField.Type().Elem())
	objs := make([]client.Object, len(items))
	for i, it := range items {
		objs[i] = it.(client.Object)
	}
	out, changed := o.lay(objs, typ, ns, now)
	if !changed {
		return nil
	}
	rt := make([]runtime.Object, len(out))
	for i, obj := range out {
		rt[i] = obj
	}
	return meta.SetList(list, rt)
}

// lay lays the recent writes of type typ in namespace ns over the cached
// objects items. The caller holds o.mu. Objects of the overlay are copies,
// so callers may treat every returned object as read-only shared state.
func (o *writeOverlay) lay(items []client.Object, typ reflect.Type, ns string, now time.Time) ([]client.Object, bool) {
	seen := map[types.UID]bool{}
	out := make([]client.Object, 0, len(items))
	changed := false
	for _, obj := range items {
		e := o.entries[obj.GetUID()]
		if e == nil || now.Sub(e.at) > overlayTTL {
			out = append(out, obj)
			continue
		}
		seen[obj.GetUID()] = true
		switch {
		case e.deleted:
			changed = true
		case e.rv == obj.GetResourceVersion() || newerRV(obj.GetResourceVersion(), e.rv):
			// The cache caught up with the write, or holds a later version
			// written by someone else (kubectl apply): the cache wins.
			delete(o.entries, obj.GetUID())
			out = append(out, obj)
		default:
			changed = true
			out = append(out, e.obj.DeepCopyObject().(client.Object))
		}
	}
	for uid, e := range o.entries {
		if seen[uid] || e.deleted || e.typ != typ || e.ns != ns || now.Sub(e.at) > overlayTTL {
			continue
		}
		changed = true
		out = append(out, e.obj.DeepCopyObject().(client.Object))
	}
	return out, changed
}

// quiet reports that no recent write of this replica in namespace ns is
// laid over cached objects.
func (o *writeOverlay) quiet(ns string, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range o.entries {
		if e.ns == ns && now.Sub(e.at) <= overlayTTL {
			return false
		}
	}
	return true
}

// layShared is apply for a slice of shared objects (a MonitorLister's): the
// slice itself when no recent write of this replica concerns it.
func layShared[T client.Object](o *writeOverlay, items []T, ns string, now time.Time) []T {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.entries) == 0 {
		return items
	}
	objs := make([]client.Object, len(items))
	for i, it := range items {
		objs[i] = it
	}
	out, changed := o.lay(objs, reflect.TypeFor[T](), ns, now)
	if !changed {
		return items
	}
	res := make([]T, 0, len(out))
	for _, obj := range out {
		if t, ok := obj.(T); ok {
			res = append(res, t)
		}
	}
	return res
}

// newerRV reports whether resourceVersion a is known to be later than b.
// Resource versions are opaque; the API server (etcd) issues them as
// increasing integers, and anything else is treated as not newer, so the
// overlay then keeps its write until the TTL.
func newerRV(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}

// list lists objects of ns from the cache with this replica's recent writes
// laid over it.
func (s *Server) list(ctx context.Context, list client.ObjectList, ns string, opts ...client.ListOption) error {
	if err := s.opts.Client.List(ctx, list, append([]client.ListOption{client.InNamespace(ns)}, opts...)...); err != nil {
		return fmt.Errorf("list %T: %w", list, err)
	}
	return s.overlay.apply(list, ns, s.clock.Now())
}

// wrote records a successful create or update of obj.
func (s *Server) wrote(obj client.Object) { s.overlay.record(obj, false, s.clock.Now()) }
