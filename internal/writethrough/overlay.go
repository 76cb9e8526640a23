package writethrough

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TTL bounds how long a write overrides the cache. The informer normally
// catches up within milliseconds; TTL only ends entries of objects nobody
// read since, or whose watch event was lost and is being relisted.
const TTL = 10 * time.Second

// Overlay holds the objects this process wrote recently. The zero value is
// ready to use; an Overlay is safe for concurrent use.
type Overlay struct {
	// Now is the clock; time.Now when nil. Entries age in real time: they
	// stand for the informer's lag, not for any clock a caller simulates.
	Now func() time.Time

	// n is the number of entries, read without the lock so that a cache
	// read pays nothing while nothing was written.
	n       atomic.Int64
	mu      sync.Mutex
	entries map[reflect.Type]map[objKey]*entry
	indexes map[reflect.Type]map[string]client.IndexerFunc
	swept   time.Time
	// reads holds the tokens of the reads under way (Reading), numbered
	// by seq; retired holds the entries the cache caught up with, each
	// dropped once every read that began before is over (reapLocked).
	reads   map[uint64]struct{}
	seq     uint64
	retired []retired
	// versions counts the writes of each namespace (Version).
	versions sync.Map // namespace → *atomic.Uint64
}

type objKey struct{ namespace, name string }

// retired is an entry seen caught up by the cache when the read numbered
// at was the last one begun.
type retired struct {
	typ reflect.Type
	k   objKey
	e   *entry
	at  uint64
}

type entry struct {
	obj     client.Object // as written; nil when deleted
	uid     types.UID
	rv      string
	at      time.Time
	deleted bool
	retired bool
}

func (o *Overlay) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Record notes that obj was written (created, updated or patched; deleted
// when deleted is set) and answered with obj. Objects that are not typed
// (unstructured, partial metadata) are not recorded.
func (o *Overlay) Record(obj client.Object, deleted bool) {
	typ := reflect.TypeOf(obj)
	if !typed(typ) {
		return
	}
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sweepLocked(now)
	if o.entries == nil {
		o.entries = map[reflect.Type]map[objKey]*entry{}
	}
	byKey := o.entries[typ]
	if byKey == nil {
		byKey = map[objKey]*entry{}
		o.entries[typ] = byKey
	}
	e := &entry{uid: obj.GetUID(), rv: obj.GetResourceVersion(), at: now, deleted: deleted}
	if !deleted {
		e.obj = obj.DeepCopyObject().(client.Object)
	}
	k := objKey{obj.GetNamespace(), obj.GetName()}
	old, ok := byKey[k]
	if ok && !deleted && old.uid == e.uid && (old.deleted || newerRV(old.rv, e.rv)) {
		// Two writes of the object answered at about the same time were
		// recorded in the other order: the later answer stays.
		o.Touch(obj.GetNamespace())
		return
	}
	if !ok {
		o.n.Add(1)
	}
	byKey[k] = e
	o.Touch(obj.GetNamespace())
}

// Touch notes a write to namespace ns that is not an object of the cache
// (history in the store: an incident resolved, a note published), so that
// answers kept by Version are built again.
func (o *Overlay) Touch(ns string) {
	v, _ := o.versions.LoadOrStore(ns, new(atomic.Uint64))
	v.(*atomic.Uint64).Add(1)
}

// Version numbers the writes recorded or touched in namespace ns. An
// answer built from the cache (or the store) and kept for reuse, such as a
// status page's data, is keyed by it too, so it is rebuilt after a write
// the API answered instead of outliving it by the reuse period.
func (o *Overlay) Version(ns string) uint64 {
	if v, ok := o.versions.Load(ns); ok {
		return v.(*atomic.Uint64).Load()
	}
	return 0
}

// typed reports whether typ is a pointer to a typed API struct (not
// unstructured or partial metadata, whose content depends on the caller).
func typed(typ reflect.Type) bool {
	if typ == nil || typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return false
	}
	pkg := typ.Elem().PkgPath()
	return !strings.HasSuffix(pkg, "/unstructured") && !(strings.HasSuffix(pkg, "/apis/meta/v1") && strings.HasPrefix(typ.Elem().Name(), "PartialObjectMetadata"))
}

// Reading begins a read of the cache that the overlay will be laid over
// (LayShared, or Get and List of a cache made by NewCache, which call it
// themselves); the returned func ends it, after the overlay was laid.
//
// A read copies the cache's object first and consults the overlay after.
// Between the two the informer may catch up, and another read (typically a
// controller reconciling the write's own watch event) may find the cache
// holding the write: the entry is then no longer needed by reads begun
// later, but still is by this one, which holds the old object. So an entry
// the cache caught up with is only retired, and dropped when every read
// begun before it was retired has ended; dropping it at once answered that
// read with the old object about once in a hundred reads.
func (o *Overlay) Reading() (done func()) {
	t := o.begin()
	return func() { o.end(t) }
}

// begin registers a read and returns its token; 0 when nothing is
// recorded (a write recorded later is concurrent with the read, which
// need not see it).
func (o *Overlay) begin() uint64 {
	if o.n.Load() == 0 {
		return 0
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.reads == nil {
		o.reads = map[uint64]struct{}{}
	}
	o.seq++
	o.reads[o.seq] = struct{}{}
	return o.seq
}

// end ends the read of token t and drops the entries it no longer holds.
func (o *Overlay) end(t uint64) {
	if t == 0 && o.n.Load() == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.reads, t)
	o.reapLocked()
}

// retireLocked notes that a read found the cache holding entry e of key k
// (or a later version): reads begun from now on do not need e.
func (o *Overlay) retireLocked(typ reflect.Type, k objKey, e *entry) {
	if e.retired {
		return
	}
	e.retired = true
	o.retired = append(o.retired, retired{typ: typ, k: k, e: e, at: o.seq})
}

// reapLocked drops the retired entries no read under way began before.
func (o *Overlay) reapLocked() {
	if len(o.retired) == 0 {
		return
	}
	oldest := uint64(math.MaxUint64)
	for t := range o.reads {
		oldest = min(oldest, t)
	}
	keep := o.retired[:0]
	for _, r := range o.retired {
		switch {
		case r.at >= oldest:
			keep = append(keep, r)
		case o.entries[r.typ][r.k] == r.e: // not written again since
			o.dropLocked(r.typ, r.k)
		}
	}
	clear(o.retired[len(keep):])
	o.retired = keep
}

// sweepLocked drops expired entries at most once a second.
func (o *Overlay) sweepLocked(now time.Time) {
	o.reapLocked()
	if now.Sub(o.swept) < time.Second {
		return
	}
	o.swept = now
	for typ, byKey := range o.entries {
		for k, e := range byKey {
			if now.Sub(e.at) > TTL {
				o.dropLocked(typ, k)
			}
		}
	}
}

func (o *Overlay) dropLocked(typ reflect.Type, k objKey) {
	byKey := o.entries[typ]
	if _, ok := byKey[k]; !ok {
		return
	}
	delete(byKey, k)
	o.n.Add(-1)
	if len(byKey) == 0 {
		delete(o.entries, typ)
	}
}

// addIndex remembers the index function of field for objects of obj's type,
// so that lists selecting by that field can be answered with written
// objects too.
func (o *Overlay) addIndex(obj client.Object, field string, fn client.IndexerFunc) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.indexes == nil {
		o.indexes = map[reflect.Type]map[string]client.IndexerFunc{}
	}
	typ := reflect.TypeOf(obj)
	if o.indexes[typ] == nil {
		o.indexes[typ] = map[string]client.IndexerFunc{}
	}
	o.indexes[typ][field] = fn
}

// Quiet reports that no recent write of this process in namespace ns is
// laid over the cache (callers keep answers by the informer's version only
// then).
func (o *Overlay) Quiet(ns string) bool {
	if o.n.Load() == 0 {
		return true
	}
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, byKey := range o.entries {
		for k, e := range byKey {
			if k.namespace == ns && now.Sub(e.at) <= TTL {
				return false
			}
		}
	}
	return true
}

// current is the decision for one cached object (nil when the cache does
// not hold it) against entry e of the same key: the object to answer with
// (nil for none) and whether e is done (the cache caught up).
func (e *entry) current(cached client.Object) (client.Object, bool) {
	switch {
	case e.deleted:
		if cached != nil && e.uid != "" && cached.GetUID() != e.uid {
			return cached, false // a different object of the same name
		}
		if cached != nil && cached.GetDeletionTimestamp() != nil {
			// The cache has the deletion: the object waits for its
			// finalizers, which the controllers reading this cache must
			// see to run (hiding it would leave it terminating for good).
			return cached, true
		}
		return nil, false
	case cached != nil && cached.GetUID() == e.uid &&
		(cached.GetResourceVersion() == e.rv || newerRV(cached.GetResourceVersion(), e.rv)):
		// The cache holds the write, or a later version written by
		// someone else (kubectl apply): the cache wins.
		return cached, true
	case cached != nil && cached.GetUID() != e.uid && newerRV(cached.GetResourceVersion(), e.rv):
		return cached, true // deleted and created again since
	}
	return e.obj.DeepCopyObject().(client.Object), false
}

// layGet lays the overlay over the answer of a cached Get of key into obj
// (err is that Get's error).
func (o *Overlay) layGet(key client.ObjectKey, obj client.Object, err error) error {
	if o.n.Load() == 0 || (err != nil && !apierrors.IsNotFound(err)) {
		return err
	}
	typ := reflect.TypeOf(obj)
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	k := objKey{key.Namespace, key.Name}
	e := o.entries[typ][k]
	if e == nil || now.Sub(e.at) > TTL {
		return err
	}
	var cached client.Object
	if err == nil {
		cached = obj
	}
	out, done := e.current(cached)
	if done {
		o.retireLocked(typ, k, e)
	}
	switch {
	case out == nil:
		return apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(typ.Elem().Name())}, key.Name)
	case out != cached:
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(out).Elem())
	}
	return nil
}

// layList lays the overlay over a cached list answered for opts.
func (o *Overlay) layList(list client.ObjectList, opts []client.ListOption) error {
	if o.n.Load() == 0 {
		return nil
	}
	itemsField := reflect.ValueOf(list).Elem().FieldByName("Items")
	if !itemsField.IsValid() || itemsField.Kind() != reflect.Slice {
		return nil
	}
	elem := itemsField.Type().Elem()
	typ := elem
	if elem.Kind() != reflect.Pointer {
		typ = reflect.PointerTo(elem)
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	byKey := o.entries[typ]
	if len(byKey) == 0 {
		return nil
	}
	match, ok := o.matcherLocked(typ, lo)
	if !ok {
		return nil // a selector the overlay cannot evaluate: the cache's answer stands
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return fmt.Errorf("lay recent writes over %T: %w", list, err)
	}
	out := make([]runtime.Object, 0, len(items))
	seen := map[objKey]bool{}
	changed := false
	for _, it := range items {
		obj, isObj := it.(client.Object)
		if !isObj {
			out = append(out, it)
			continue
		}
		k := objKey{obj.GetNamespace(), obj.GetName()}
		e := byKey[k]
		if e == nil || now.Sub(e.at) > TTL {
			out = append(out, it)
			continue
		}
		seen[k] = true
		cur, done := e.current(obj)
		if done {
			o.retireLocked(typ, k, e)
		}
		if cur == obj {
			out = append(out, it)
			continue
		}
		changed = true
		if cur != nil && match(cur) {
			out = append(out, cur)
		}
	}
	for k, e := range byKey {
		if seen[k] || e.deleted || now.Sub(e.at) > TTL || (lo.Namespace != "" && k.namespace != lo.Namespace) || !match(e.obj) {
			continue
		}
		changed = true
		out = append(out, e.obj.DeepCopyObject())
	}
	if !changed {
		return nil
	}
	return meta.SetList(list, out)
}

// matcherLocked returns whether an object of typ matches the label and
// field selectors of lo; false when a field selector names a field without
// a known index function.
func (o *Overlay) matcherLocked(typ reflect.Type, lo *client.ListOptions) (func(client.Object) bool, bool) {
	type req struct {
		fn    client.IndexerFunc
		value string
		equal bool
	}
	var reqs []req
	if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
		for _, r := range lo.FieldSelector.Requirements() {
			fn := o.indexes[typ][r.Field]
			if fn == nil {
				fn = metadataField(r.Field)
			}
			if fn == nil || (r.Operator != selection.Equals && r.Operator != selection.DoubleEquals && r.Operator != selection.NotEquals) {
				return nil, false
			}
			reqs = append(reqs, req{fn: fn, value: r.Value, equal: r.Operator != selection.NotEquals})
		}
	}
	sel := lo.LabelSelector
	return func(obj client.Object) bool {
		if sel != nil && !sel.Matches(labels.Set(obj.GetLabels())) {
			return false
		}
		for _, r := range reqs {
			if slices.Contains(r.fn(obj), r.value) != r.equal {
				return false
			}
		}
		return true
	}, true
}

// metadataField evaluates the field selectors every object supports.
func metadataField(field string) client.IndexerFunc {
	switch field {
	case "metadata.name":
		return func(o client.Object) []string { return []string{o.GetName()} }
	case "metadata.namespace":
		return func(o client.Object) []string { return []string{o.GetNamespace()} }
	}
	return nil
}

// LayShared lays the overlay over a slice of objects of namespace ns that
// the caller shares with the informer (read in place, never modified): the
// slice itself when no recent write concerns it. The caller reads items
// within o.Reading.
func LayShared[T client.Object](o *Overlay, items []T, ns string) []T {
	if o.n.Load() == 0 {
		return items
	}
	typ := reflect.TypeFor[T]()
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	byKey := o.entries[typ]
	if len(byKey) == 0 {
		return items
	}
	var out []T
	seen := map[objKey]bool{}
	for i, obj := range items {
		k := objKey{obj.GetNamespace(), obj.GetName()}
		e := byKey[k]
		if e == nil || now.Sub(e.at) > TTL {
			if out != nil {
				out = append(out, obj)
			}
			continue
		}
		seen[k] = true
		cur, done := e.current(obj)
		if done {
			o.retireLocked(typ, k, e)
		}
		if client.Object(obj) == cur {
			if out != nil {
				out = append(out, obj)
			}
			continue
		}
		if out == nil {
			out = append(make([]T, 0, len(items)+1), items[:i]...)
		}
		if cur != nil {
			out = append(out, cur.(T))
		}
	}
	for k, e := range byKey {
		if seen[k] || e.deleted || now.Sub(e.at) > TTL || k.namespace != ns {
			continue
		}
		if out == nil {
			out = append(make([]T, 0, len(items)+1), items...)
		}
		out = append(out, e.obj.DeepCopyObject().(T))
	}
	if out == nil {
		return items
	}
	return out
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
