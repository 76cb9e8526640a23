package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
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

// findByUID returns the live (not deleting) object of list's kind in ns whose
// metadata.uid is uid. It looks in the cache first and asks the API server
// when the cache has not seen the object yet, so an object created a moment
// ago is found. It returns errNotFound for ids of other namespaces.
func (s *Server) findByUID(ctx context.Context, list client.ObjectList, ns, uid string) (client.Object, error) {
	if uid == "" {
		return nil, errNotFound
	}
	// The manager's cache indexes every kind looked up by id on metadata.uid:
	// one indexed read instead of copying the whole namespace. Readers
	// without the index (tests' fakes) fall through to the scan below.
	if err := s.opts.Client.List(ctx, list, client.InNamespace(ns), client.MatchingFields{monv1.UIDIndex: uid}); err == nil {
		if obj := liveWithUID(list, uid); obj != nil {
			return obj, nil
		}
	}
	for i, r := range []client.Reader{s.opts.Client, s.opts.Reader} {
		if i == 1 && s.opts.Reader == s.opts.Client {
			break
		}
		var err error
		if i == 0 {
			err = s.list(ctx, list, ns)
		} else {
			err = r.List(ctx, list, client.InNamespace(ns))
		}
		if err != nil {
			return nil, fmt.Errorf("list %T: %w", list, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			obj, ok := it.(client.Object)
			if ok && string(obj.GetUID()) == uid && obj.GetDeletionTimestamp() == nil {
				return obj, nil
			}
		}
	}
	return nil, errNotFound
}

// monitorByID finds a Monitor of ns by id.
func (s *Server) monitorByID(ctx context.Context, ns, id string) (*monv1.Monitor, error) {
	obj, err := s.findByUID(ctx, &monv1.MonitorList{}, ns, id)
	if err != nil {
		return nil, err
	}
	return obj.(*monv1.Monitor), nil
}

// sharedMonitorByID is monitorByID for a reader that does not modify the
// monitor (GET /monitors/:id): the indexed read hands out the cache's
// object (a shallow copy) instead of a deep copy. Readers without the
// index take monitorByID's way.
func (s *Server) sharedMonitorByID(ctx context.Context, ns, id string) (*monv1.Monitor, error) {
	var list monv1.MonitorList
	if id != "" && s.opts.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{monv1.UIDIndex: id}, client.UnsafeDisableDeepCopy) == nil {
		if obj := liveWithUID(&list, id); obj != nil {
			return obj.(*monv1.Monitor), nil
		}
	}
	return s.monitorByID(ctx, ns, id)
}

// fresh re-reads obj (found by id) from the API server, so an update starts
// from the newest version.
func (s *Server) fresh(ctx context.Context, obj client.Object) error {
	uid := obj.GetUID()
	if err := s.opts.Reader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return errNotFound
		}
		return err
	}
	if obj.GetUID() != uid || obj.GetDeletionTimestamp() != nil {
		return errNotFound
	}
	return nil
}

// mutate applies fn to the newest version of obj and updates it, retrying on
// conflicts. fn may return an *apiError to stop without writing.
func (s *Server) mutate(ctx context.Context, obj client.Object, fn func() error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := s.fresh(ctx, obj); err != nil {
			return err
		}
		if err := fn(); err != nil {
			return err
		}
		if err := s.opts.Client.Update(ctx, obj); err != nil {
			return err
		}
		return nil
	})
}

// deleteObject deletes obj; an object already gone is errNotFound.
func (s *Server) deleteObject(ctx context.Context, obj client.Object) error {
	err := s.opts.Client.Delete(ctx, obj, client.Preconditions{UID: ptrTo(obj.GetUID())})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return errNotFound
	}
	return err
}

func ptrTo[T any](v T) *T { return &v }

// decodeJSON reads a JSON request body into v. An empty body decodes as {}.
// Bodies over the route's limit are 413 PAYLOAD_TOO_LARGE, malformed JSON 400
// BAD_REQUEST, values of the wrong type 400 VALIDATION_ERROR, and with strict
// unknown fields are VALIDATION_ERROR too.
func decodeJSON(r *http.Request, v any, strict bool) error {
	var raw []byte
	if r.Body != nil {
		var err error
		raw, err = io.ReadAll(r.Body)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return newAPIError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, fmt.Sprintf("request body is larger than %d KB", mbe.Limit>>10))
			}
			return newAPIError(http.StatusBadRequest, CodeBadRequest, "could not read the request body")
		}
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = []byte("{}")
	}
	return decodeBytes(raw, v, strict, "")
}

// decodeBytes decodes raw into v, mapping errors as decodeJSON does; field
// names in errors are prefixed with prefix.
func decodeBytes(raw []byte, v any, strict bool, prefix string) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if strict {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(v)
	if err == nil {
		if dec.More() {
			return newAPIError(http.StatusBadRequest, CodeBadRequest, "Invalid JSON: trailing data after the body")
		}
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return newAPIError(http.StatusBadRequest, CodeBadRequest, "Invalid JSON in the request body")
	case errors.As(err, &typ):
		f := typ.Field
		if f == "" {
			if prefix == "" {
				return newAPIError(http.StatusBadRequest, CodeBadRequest, "the request body must be a JSON object")
			}
			return validationError(fieldErr(strings.TrimSuffix(prefix, "."), "must be a JSON %s", jsonKind(typ.Type.Kind().String())))
		}
		return validationError(fieldErr(prefix+f, "must be a %s", jsonKind(typ.Type.Kind().String())))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return validationError(fieldErr(prefix+name, "unknown field"))
	}
	var fe *fieldDecodeError
	if errors.As(err, &fe) {
		return validationError(fieldErr(prefix+fe.field, "%s", fe.msg))
	}
	var ke *probeapi.KeyError
	if errors.As(err, &ke) {
		return validationError(fieldErr(prefix+ke.Key, "%s", ke.Msg))
	}
	return validationError(fieldErr(strings.TrimSuffix(prefix, "."), "%s", strings.TrimPrefix(err.Error(), "json: ")))
}

// fieldDecodeError is returned by custom decoders for a bad value.
type fieldDecodeError struct{ field, msg string }

func (e *fieldDecodeError) Error() string { return e.field + ": " + e.msg }

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	}
	return "number in range"
}

// nullable is a JSON field that tells absent, null and a value apart.
type nullable[T any] struct {
	Set  bool
	Null bool
	V    T
}

// UnmarshalJSON records that the field was sent.
func (n *nullable[T]) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		n.Null = true
		return nil
	}
	return json.Unmarshal(b, &n.V)
}

// value returns the sent value, or the zero value for null.
func (n nullable[T]) value() T { return n.V }

// objectUIDs maps object names of one kind in ns to their uids (and back),
// for references that the REST API shows as ids.
type objectUIDs struct {
	byName map[string]string
	byUID  map[string]string
}

func (s *Server) uidIndex(ctx context.Context, list client.ObjectList, ns string) (*objectUIDs, error) {
	if err := s.list(ctx, list, ns); err != nil {
		return nil, fmt.Errorf("list %T: %w", list, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	idx := &objectUIDs{byName: map[string]string{}, byUID: map[string]string{}}
	for _, it := range items {
		obj := it.(client.Object)
		if obj.GetDeletionTimestamp() != nil {
			continue
		}
		idx.byName[obj.GetName()] = string(obj.GetUID())
		idx.byUID[string(obj.GetUID())] = obj.GetName()
	}
	return idx, nil
}

// uidOf returns the uid of name, or nil.
func (x *objectUIDs) uidOf(name string) *string {
	if x == nil {
		return nil
	}
	if u, ok := x.byName[name]; ok {
		return &u
	}
	return nil
}

// pathObject finds the object of list's kind whose id is the path parameter
// param in the caller's workspace. It writes 404 (naming label) or the error
// and returns the zero value when there is none.
func pathObject[T client.Object](s *Server, w http.ResponseWriter, r *http.Request, list client.ObjectList, param, label string) T {
	var zero T
	obj, err := s.findByUID(r.Context(), list, CallerFrom(r.Context()).Namespace, chi.URLParam(r, param))
	if errors.Is(err, errNotFound) {
		writeNotFound(w, label)
		return zero
	}
	if err != nil {
		s.writeErr(w, r, err)
		return zero
	}
	return obj.(T)
}
