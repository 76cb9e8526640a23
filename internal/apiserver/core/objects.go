package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	"github.com/go-chi/chi/v5"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// liveWithUID returns the item of list with uid that is not being deleted.
func liveWithUID(list client.ObjectList, uid string) client.Object {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil
	}
	for _, it := range items {
		if obj, ok := it.(client.Object); ok && string(obj.GetUID()) == uid && obj.GetDeletionTimestamp() == nil {
			return obj
		}
	}
	return nil
}

// MonitorByID finds a Monitor of ns by id.
func (d *Deps) MonitorByID(ctx context.Context, ns, id string) (*monv1.Monitor, error) {
	obj, err := d.FindByUID(ctx, &monv1.MonitorList{}, ns, id)
	if err != nil {
		return nil, err
	}
	return obj.(*monv1.Monitor), nil
}

// SharedMonitorByID is MonitorByID for a reader that does not modify the
// monitor (GET /monitors/:id): the indexed read hands out the cache's
// object (a shallow copy) instead of a deep copy. Readers without the
// index take MonitorByID's way.
func (d *Deps) SharedMonitorByID(ctx context.Context, ns, id string) (*monv1.Monitor, error) {
	var list monv1.MonitorList
	if id != "" && d.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{monv1.UIDIndex: id}, client.UnsafeDisableDeepCopy) == nil {
		if obj := liveWithUID(&list, id); obj != nil {
			return obj.(*monv1.Monitor), nil
		}
	}
	return d.MonitorByID(ctx, ns, id)
}

// Fresh re-reads obj (found by id) from the API server, so an update starts
// from the newest version.
func (d *Deps) Fresh(ctx context.Context, obj client.Object) error {
	uid := obj.GetUID()
	if err := d.Reader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return ErrNotFound
		}
		return err
	}
	if obj.GetUID() != uid || obj.GetDeletionTimestamp() != nil {
		return ErrNotFound
	}
	return nil
}

// Mutate applies fn to the newest version of obj and updates it, retrying on
// conflicts. fn may return an *Error to stop without writing.
func (d *Deps) Mutate(ctx context.Context, obj client.Object, fn func() error) error {
	return d.mutate(ctx, obj, false, fn)
}

// MutateCached is Mutate for obj as the cache gave it a moment ago
// (ResolveIDs): the first attempt updates obj as read, and the API
// server's optimistic concurrency (resourceVersion) refuses it when the
// cache was behind; only then is obj read again. A request that changes
// many objects (a bulk action) so writes each once instead of reading it
// first.
func (d *Deps) MutateCached(ctx context.Context, obj client.Object, fn func() error) error {
	return d.mutate(ctx, obj, true, fn)
}

func (d *Deps) mutate(ctx context.Context, obj client.Object, cached bool, fn func() error) error {
	var asRead client.Object
	if cached && obj.GetResourceVersion() != "" {
		asRead = obj.DeepCopyObject().(client.Object)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if asRead == nil {
			if err := d.Fresh(ctx, obj); err != nil {
				return err
			}
		}
		if err := fn(); err != nil {
			return err
		}
		err := d.Client.Update(ctx, obj)
		if apierrors.IsNotFound(err) {
			return ErrNotFound
		}
		if asRead != nil {
			if err != nil {
				// The re-read starts from obj as read, not as fn left it:
				// what the newest version omits must not stay over from
				// this attempt.
				reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(asRead).Elem())
			}
			asRead = nil
		}
		return err
	})
}

// DeleteObject deletes obj; an object already gone is ErrNotFound.
func (d *Deps) DeleteObject(ctx context.Context, obj client.Object) error {
	err := d.Client.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return ErrNotFound
	}
	return err
}

// ObjectUIDs maps object names of one kind in ns to their uids (and back),
// for references that the REST API shows as ids.
type ObjectUIDs struct {
	ByName map[string]string
	ByUID  map[string]string
}

// UIDIndex indexes the live objects of list's kind in ns by name and uid,
// from the cache. It reads names and uids only, so it shares the cache's
// objects instead of copying the namespace. To resolve ids a request sends,
// use ResolveIDs: an index of the namespace is for showing references.
func (d *Deps) UIDIndex(ctx context.Context, list client.ObjectList, ns string) (*ObjectUIDs, error) {
	if err := d.List(ctx, list, ns, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list %T: %w", list, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	idx := &ObjectUIDs{ByName: map[string]string{}, ByUID: map[string]string{}}
	for _, it := range items {
		obj := it.(client.Object)
		if obj.GetDeletionTimestamp() != nil {
			continue
		}
		idx.ByName[obj.GetName()] = string(obj.GetUID())
		idx.ByUID[string(obj.GetUID())] = obj.GetName()
	}
	return idx, nil
}

// UIDOf returns the uid of name, or nil.
func (x *ObjectUIDs) UIDOf(name string) *string {
	if x == nil {
		return nil
	}
	if u, ok := x.ByName[name]; ok {
		return &u
	}
	return nil
}

// PathObject finds the object of list's kind whose id is the path parameter
// param in the caller's workspace. It writes 404 (naming label) or the error
// and returns the zero value when there is none.
func PathObject[T client.Object](d *Deps, w http.ResponseWriter, r *http.Request, list client.ObjectList, param, label string) T {
	var zero T
	obj, err := d.FindByUID(r.Context(), list, CallerFrom(r.Context()).Namespace, chi.URLParam(r, param))
	if errors.Is(err, ErrNotFound) {
		WriteNotFound(w, label)
		return zero
	}
	if err != nil {
		WriteErr(w, r, err)
		return zero
	}
	return obj.(T)
}

// PathMonitor finds the monitor named by the {id} path value; it writes the
// 404 and returns nil when there is none in the caller's workspace.
func (d *Deps) PathMonitor(w http.ResponseWriter, r *http.Request) *monv1.Monitor {
	return d.pathMonitorBy(w, r, d.MonitorByID)
}

// PathSharedMonitor is PathMonitor for a handler that does not modify the
// monitor: it gets the cache's object, not a deep copy (SharedMonitorByID).
func (d *Deps) PathSharedMonitor(w http.ResponseWriter, r *http.Request) *monv1.Monitor {
	return d.pathMonitorBy(w, r, d.SharedMonitorByID)
}

func (d *Deps) pathMonitorBy(w http.ResponseWriter, r *http.Request, lookup func(ctx context.Context, ns, id string) (*monv1.Monitor, error)) *monv1.Monitor {
	m, err := lookup(r.Context(), CallerFrom(r.Context()).Namespace, chi.URLParam(r, "id"))
	if errors.Is(err, ErrNotFound) {
		WriteNotFound(w, "Monitor")
		return nil
	}
	if err != nil {
		WriteErr(w, r, err)
		return nil
	}
	return m
}

// IncidentGetter reads one incident of the store.
type IncidentGetter interface {
	GetIncident(ctx context.Context, id string) (store.Incident, error)
}

// PathIncident finds the incident named by the {id} path value in st; it
// writes the 404 and returns nil when there is none in the caller's
// workspace.
func PathIncident(w http.ResponseWriter, r *http.Request, st IncidentGetter) *store.Incident {
	inc, err := st.GetIncident(r.Context(), chi.URLParam(r, "id"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && inc.Namespace != CallerFrom(r.Context()).Namespace) {
		WriteNotFound(w, "Incident")
		return nil
	}
	if err != nil {
		WriteErr(w, r, err)
		return nil
	}
	return &inc
}
