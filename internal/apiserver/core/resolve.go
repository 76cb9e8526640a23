package core

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// Bounded work per request. A request that names objects by id (a bulk
// action's ids, a page's monitors, a connection's routing, a maintenance
// window's monitors, the group of each monitoring-as-code spec) costs the
// API server a constant number of requests, whatever the number of ids and
// however many of them name nothing:
//
//   - a list longer than its limit is refused before any id is looked at
//     (TooManyIDs), with the field of the list;
//   - each id is one indexed read of the manager's cache (monv1.UIDIndex),
//     which this process's own writes are laid over (package writethrough);
//   - ids the cache does not know are looked for in one uncached list of
//     the kind in the namespace, read at most once per request and kind
//     (an object another replica or kubectl created a moment ago is found;
//     a thousand unknown ids cost one read, not a thousand).
//
// ResolveIDs is that rule; FindByUID is ResolveIDs for one id.

// TooManyIDs is the validation error of a list of n ids in field that is
// longer than max, nil when it is not. Handlers check it before resolving
// any id, so an over-limit list costs no read.
func TooManyIDs(field string, n, max int, what string) *Error {
	if n <= max {
		return nil
	}
	return ValidationError(FieldErr(field, "must have at most %d %s (got %d)", max, what, n))
}

// ResolveIDs finds the live (not deleting) objects of list's kind in ns
// whose metadata.uid is one of ids, keyed by id; ids that name nothing in
// ns (ids of other namespaces included) are absent from the answer. It
// reads the cache's uid index once per id and, for the ids the cache does
// not know, the API server once per request (see the rule above). list is
// only a prototype of the kind; it is not filled.
func (d *Deps) ResolveIDs(ctx context.Context, list client.ObjectList, ns string, ids []string) (map[string]client.Object, error) {
	found := make(map[string]client.Object, len(ids))
	var missing []string
	seen := make(map[string]bool, len(ids))
	indexed := true
	for _, id := range ids {
		if seen[id] || id == "" {
			continue
		}
		seen[id] = true
		if indexed {
			l := emptyList(list)
			err := d.Client.List(ctx, l, client.InNamespace(ns), client.MatchingFields{monv1.UIDIndex: id})
			if err == nil {
				if obj := liveWithUID(l, id); obj != nil {
					found[id] = obj
					continue
				}
			} else {
				// A reader without the index (a test's fake client): one
				// scan of the cached namespace below instead.
				indexed = false
			}
		}
		missing = append(missing, id)
	}
	if len(missing) == 0 {
		return found, nil
	}
	if !indexed {
		l := emptyList(list)
		if err := d.List(ctx, l, ns); err != nil {
			return nil, err
		}
		missing = takeLive(l, missing, found)
		if len(missing) == 0 {
			return found, nil
		}
	}
	if d.Reader == nil || d.Reader == client.Reader(d.Client) {
		return found, nil
	}
	l, err := d.ListOnce(ctx, list, ns)
	if err != nil {
		return nil, err
	}
	takeLive(l, missing, found)
	return found, nil
}

// FindByUID returns the live (not deleting) object of list's kind in ns
// whose metadata.uid is uid, by the rule of ResolveIDs. It returns
// ErrNotFound for ids of other namespaces.
func (d *Deps) FindByUID(ctx context.Context, list client.ObjectList, ns, uid string) (client.Object, error) {
	found, err := d.ResolveIDs(ctx, list, ns, []string{uid})
	if err != nil {
		return nil, err
	}
	if obj, ok := found[uid]; ok {
		return obj, nil
	}
	return nil, ErrNotFound
}

// takeLive moves the ids of missing that name a live item of l into found
// and returns the ids still missing.
func takeLive(l client.ObjectList, missing []string, found map[string]client.Object) []string {
	items, err := meta.ExtractList(l)
	if err != nil {
		return missing
	}
	want := make(map[string]bool, len(missing))
	for _, id := range missing {
		want[id] = true
	}
	for _, it := range items {
		obj, ok := it.(client.Object)
		if !ok || obj.GetDeletionTimestamp() != nil || !want[string(obj.GetUID())] {
			continue
		}
		found[string(obj.GetUID())] = obj
		delete(want, string(obj.GetUID()))
	}
	var rest []string
	for _, id := range missing {
		if want[id] {
			rest = append(rest, id)
		}
	}
	return rest
}

// ListOnce lists list's kind in ns from the API server (selected by opts),
// once per request (WithRequestReads): a second call with the same kind,
// namespace and options in the same request answers from the first one's
// result, which callers only read. It is the one uncached read of
// ResolveIDs, and of callers that would otherwise read one object per item
// of a request.
func (d *Deps) ListOnce(ctx context.Context, list client.ObjectList, ns string, opts ...client.ListOption) (client.ObjectList, error) {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	key := readKey{typ: reflect.TypeOf(list), ns: ns}
	if lo.LabelSelector != nil {
		key.labels = lo.LabelSelector.String()
	}
	if lo.FieldSelector != nil {
		key.fields = lo.FieldSelector.String()
	}
	reads, _ := ctx.Value(requestReadsKey{}).(*requestReads)
	if reads != nil {
		reads.mu.Lock()
		defer reads.mu.Unlock()
		if l, ok := reads.lists[key]; ok {
			return l, nil
		}
	}
	l := emptyList(list)
	if err := d.Reader.List(ctx, l, append([]client.ListOption{client.InNamespace(ns)}, opts...)...); err != nil {
		return nil, fmt.Errorf("list %T: %w", list, err)
	}
	if reads != nil {
		reads.lists[key] = l
	}
	return l, nil
}

// requestReads are the uncached lists one request made, so that it makes
// each at most once.
type requestReads struct {
	mu    sync.Mutex
	lists map[readKey]client.ObjectList
}

type readKey struct {
	typ            reflect.Type
	ns             string
	labels, fields string
}

type requestReadsKey struct{}

// WithRequestReads returns ctx for serving one request: the uncached reads
// that resolve ids (ResolveIDs) are made at most once within it. The
// router wraps every authenticated request with it.
func WithRequestReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, requestReadsKey{}, &requestReads{lists: map[readKey]client.ObjectList{}})
}

// emptyList is a new, empty list of list's kind.
func emptyList(list client.ObjectList) client.ObjectList {
	return reflect.New(reflect.TypeOf(list).Elem()).Interface().(client.ObjectList)
}

// RefsByID resolves ids of list's kind in ns (ResolveIDs) to references,
// in the order given and without repeats; an id that names nothing is the
// field error "<field>[i]: <what> not found". err is a failed read.
func (d *Deps) RefsByID(ctx context.Context, list client.ObjectList, ns string, ids []string, field, what string) (refs []monv1.LocalObjectReference, errs []FieldError, err error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	found, err := d.ResolveIDs(ctx, list, ns, ids)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for i, id := range ids {
		obj, ok := found[id]
		if !ok {
			errs = append(errs, FieldErr(fmt.Sprintf("%s[%d]", field, i), "%s not found", what))
			continue
		}
		if !seen[obj.GetName()] {
			seen[obj.GetName()] = true
			refs = append(refs, monv1.LocalObjectReference{Name: obj.GetName()})
		}
	}
	return refs, errs, nil
}
