package aggregated

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/uptime-operator/uptime-operator/internal/httpjson"
)

// object is an item of a resource of the aggregated API: a view of REST
// answers as a Kubernetes object, never stored as one.
type object interface {
	objectMeta() *metav1.ObjectMeta
	// row is the object's cells of the resource's Table columns.
	row() []any
	// fieldSet holds the fields a field selector may name.
	fieldSet() fields.Set
}

// resource is a Kubernetes resource of the aggregated API besides incidents
// (incidents.go), served the way metrics-server serves PodMetrics: each
// request is authorized per resource with a SubjectAccessReview (so the
// built-in view and edit roles, which the chart extends, are enough), then
// answered from the REST handler called in-process at the level the verb
// needs: read-only for reads, standard for a create.
type resource struct {
	name, singular, kind string
	shortNames           []string
	// verbs are the collection's and objects' verbs, for discovery.
	verbs   metav1.Verbs
	columns []metav1.TableColumnDefinition
	// fields are the field labels a field selector may name, besides
	// metadata.name and metadata.namespace.
	fields []string
	// list reads the objects of one namespace (get, list and watch use it
	// unless get is set).
	list func(c *call) ([]object, error)
	// get reads one object; nil finds it in list.
	get func(c *call, name string) (object, error)
	// create makes an object of the request body (POST on the collection).
	create func(c *call, body []byte) (object, error)
	// subresources are read with GET (RBAC verb get on name/sub).
	subresources map[string]func(c *call, name string) (any, error)
	// pollInterval is how often a watch lists again; zero is the server's
	// watch interval.
	pollInterval time.Duration
}

// call is one request's access to the REST handler: who asks, in which
// workspace.
type call struct {
	s      *Server
	r      *http.Request
	caller user.Info
	ns     string
}

// restJSON calls the REST handler at level and decodes a 2xx answer into
// out (unless nil).
func (c *call) restJSON(level, method, path string, body, out any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	answer, err := c.s.rest(c.r, c.caller, c.ns, level, method, path, raw)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("decode %s %s: %w", method, path, err)
	}
	return nil
}

// resources are the resources of resources.go, by name; incidents are
// served by incidents.go.
var resources = map[string]*resource{
	MonitorsResource: monitorsResource,
	ChecksResource:   checksResource,
	RegionsResource:  regionsResource,
	// A gate is read by name only (get).
	RolloutGatesResource: rolloutGatesResource,
}

// apiResources is the discovery of the resources and their subresources.
func apiResources() []metav1.APIResource {
	var out []metav1.APIResource
	for _, name := range []string{MonitorsResource, ChecksResource, RegionsResource, RolloutGatesResource} {
		res := resources[name]
		out = append(out, metav1.APIResource{Name: res.name, SingularName: res.singular, ShortNames: res.shortNames, Namespaced: true,
			Kind: res.kind, Verbs: res.verbs, Categories: []string{"uptime"}})
		for _, sub := range slices.Sorted(maps.Keys(res.subresources)) {
			out = append(out, metav1.APIResource{Name: res.name + "/" + sub, Namespaced: true, Kind: res.kind, Verbs: metav1.Verbs{"get"}})
		}
	}
	return out
}

// resourceRequest is a request one of resources serves.
type resourceRequest struct {
	res *resource
	// namespace is empty for a list or watch of every namespace.
	namespace, name, subresource, verb string
}

// splitResourcePath splits a path under the group prefix into its
// namespace ("" for the cluster-wide form) and the segments after it.
func splitResourcePath(path string) (ns string, parts []string, ok bool) {
	rest, ok := strings.CutPrefix(path, prefix+"/namespaces/")
	if ok {
		ns, rest, _ = strings.Cut(rest, "/")
		if ns == "" {
			return "", nil, false
		}
	} else if rest, ok = strings.CutPrefix(path, prefix+"/"); !ok {
		return "", nil, false
	}
	return ns, strings.Split(rest, "/"), true
}

// parseResourceRequest tells whether method and path address one of
// resources, and with which verb.
func parseResourceRequest(method, path string, q url.Values) (resourceRequest, bool) {
	ns, parts, ok := splitResourcePath(path)
	if !ok {
		return resourceRequest{}, false
	}
	res := resources[parts[0]]
	if res == nil {
		return resourceRequest{}, false
	}
	req := resourceRequest{res: res, namespace: ns}
	switch {
	case len(parts) == 1 && method == http.MethodGet && isTrue(q.Get("watch")):
		req.verb = "watch"
	case len(parts) == 1 && method == http.MethodGet:
		req.verb = "list"
	case ns == "":
		return resourceRequest{}, false
	case len(parts) == 1 && method == http.MethodPost && res.create != nil:
		req.verb = "create"
	case len(parts) == 2 && method == http.MethodGet && parts[1] != "":
		req.name, req.verb = parts[1], "get"
	case len(parts) == 3 && method == http.MethodGet && parts[1] != "" && res.subresources[parts[2]] != nil:
		req.name, req.subresource, req.verb = parts[1], parts[2], "get"
	default:
		return resourceRequest{}, false
	}
	if !slices.Contains(res.verbs, req.verb) {
		return resourceRequest{}, false
	}
	return req, true
}

// allowed asks a SubjectAccessReview of the request's own verb, resource,
// subresource, name and namespace, as kube-apiserver did before proxying
// (the manager trusts no proxy's decision), and writes a Forbidden Status
// like kube-apiserver's when it is denied.
func (s *Server) allowed(w http.ResponseWriter, r *http.Request, caller user.Info, verb, ns, res, sub, name string) bool {
	d, reason, err := s.authz.Authorize(r.Context(), authorizer.AttributesRecord{
		User: caller, Verb: verb, Namespace: ns, APIGroup: Group, APIVersion: Version,
		Resource: res, Subresource: sub, Name: name, ResourceRequest: true,
	})
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, "InternalError", "subject access review: "+err.Error())
		return false
	}
	if d == authorizer.DecisionAllow {
		return true
	}
	full := res
	if sub != "" {
		full += "/" + sub
	}
	msg := fmt.Sprintf("%s.%s %q is forbidden: User %q cannot %s resource %q in API group %q", res, Group, name, caller.GetName(), verb, full, Group)
	if ns != "" {
		msg += fmt.Sprintf(" in the namespace %q", ns)
	}
	if reason != "" {
		msg += ": " + reason
	}
	writeStatus(w, http.StatusForbidden, "Forbidden", msg)
	return false
}

// serveResource serves a request of one of resources.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, caller user.Info, req resourceRequest) {
	res := req.res
	if !s.allowed(w, r, caller, req.verb, req.namespace, res.name, req.subresource, req.name) {
		return
	}
	out := tableOptions(r)
	c := &call{s: s, r: r, caller: caller, ns: req.namespace}
	switch {
	case req.verb == "list" || req.verb == "watch":
		q := r.URL.Query()
		sel, err := res.parseFieldSelector(q.Get("fieldSelector"))
		if err != nil {
			writeStatus(w, http.StatusBadRequest, "BadRequest", err.Error())
			return
		}
		lsel, err := labels.Parse(q.Get("labelSelector"))
		if err != nil {
			writeStatus(w, http.StatusBadRequest, "BadRequest", err.Error())
			return
		}
		namespaces, err := s.namespaces(r.Context(), req.namespace)
		if err != nil {
			writeStatus(w, http.StatusInternalServerError, "InternalError", err.Error())
			return
		}
		list := func() ([]object, error) {
			var items []object
			for _, ns := range namespaces {
				all, err := res.list(&call{s: s, r: r, caller: caller, ns: ns})
				if err != nil {
					return nil, err
				}
				for _, o := range all {
					if sel.Matches(o.fieldSet()) && lsel.Matches(labels.Set(o.objectMeta().Labels)) {
						items = append(items, o)
					}
				}
			}
			return items, nil
		}
		if req.verb == "watch" {
			s.watchResource(w, r, res, list, q.Get("resourceVersion"), out)
			return
		}
		version := listVersion(time.Now())
		items, err := list()
		if err != nil {
			writeRESTError(w, err)
			return
		}
		out.writeObjects(w, http.StatusOK, res, version, items, true)
	case req.verb == "create":
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		o, err := res.create(c, body)
		if err != nil {
			writeRESTError(w, err)
			return
		}
		out.writeObjects(w, http.StatusCreated, res, "", []object{o}, false)
	case req.subresource != "":
		v, err := res.subresources[req.subresource](c, req.name)
		if err != nil {
			writeRESTError(w, res.notFound(err, req.name))
			return
		}
		httpjson.Write(w, http.StatusOK, v)
	default:
		o, err := res.read(c, req.name)
		if err != nil {
			writeRESTError(w, res.notFound(err, req.name))
			return
		}
		out.writeObjects(w, http.StatusOK, res, "", []object{o}, false)
	}
}

// read gets one object by name.
func (res *resource) read(c *call, name string) (object, error) {
	if res.get != nil {
		return res.get(c, name)
	}
	all, err := res.list(c)
	if err != nil {
		return nil, err
	}
	for _, o := range all {
		if o.objectMeta().Name == name {
			return o, nil
		}
	}
	return nil, &restError{code: http.StatusNotFound}
}

// notFound words a REST 404 as kube-apiserver does.
func (res *resource) notFound(err error, name string) error {
	if re, ok := err.(*restError); ok && re.code == http.StatusNotFound {
		re.message = fmt.Sprintf("%s.%s %q not found", res.name, Group, name)
	}
	return err
}

// parseFieldSelector parses a fieldSelector and refuses fields the
// resource does not have, as kube-apiserver does.
func (res *resource) parseFieldSelector(s string) (fields.Selector, error) {
	sel, err := fields.ParseSelector(s)
	if err != nil {
		return nil, err
	}
	for _, req := range sel.Requirements() {
		if req.Field != "metadata.name" && req.Field != "metadata.namespace" && !slices.Contains(res.fields, req.Field) {
			return nil, fmt.Errorf("field label not supported: %s", req.Field)
		}
	}
	return sel, nil
}

// metaFields are the metadata fields every object has for field selectors.
func metaFields(m *metav1.ObjectMeta, set fields.Set) fields.Set {
	set["metadata.name"], set["metadata.namespace"] = m.Name, m.Namespace
	return set
}

// objectList is the list kind of a resource (UptimeMonitorList, …).
type objectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []object `json:"items"`
}

// writeObjects answers items: a Table, a list or one object.
func (o output) writeObjects(w http.ResponseWriter, code int, res *resource, version string, items []object, list bool) {
	switch {
	case o.table:
		httpjson.Write(w, code, o.tableOf(res.columns, items, version, "", true))
	case list:
		if items == nil {
			items = []object{}
		}
		httpjson.Write(w, code, &objectList{TypeMeta: metav1.TypeMeta{Kind: res.kind + "List", APIVersion: Group + "/" + Version},
			ListMeta: metav1.ListMeta{ResourceVersion: version}, Items: items})
	default:
		httpjson.Write(w, code, items[0])
	}
}

// tableOf renders items as a Table of columns; headers carries the column
// definitions (the first table of a watch only).
func (o output) tableOf(columns []metav1.TableColumnDefinition, items []object, version, cont string, headers bool) *metav1.Table {
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"},
		ListMeta: metav1.ListMeta{ResourceVersion: version, Continue: cont}, Rows: []metav1.TableRow{}}
	if headers {
		t.ColumnDefinitions = columns
	}
	for _, item := range items {
		row := metav1.TableRow{Cells: item.row()}
		switch o.include {
		case "Object":
			raw, _ := json.Marshal(item)
			row.Object = runtime.RawExtension{Raw: raw}
		case "Metadata":
			raw, _ := json.Marshal(&metav1.PartialObjectMetadata{
				TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"},
				ObjectMeta: *item.objectMeta(),
			})
			row.Object = runtime.RawExtension{Raw: raw}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// setContentVersion sets an object's resourceVersion to a hash of its content
// without the version, the same on every replica of the manager, so a
// client can tell a change. These resources keep no history, so a watch
// cannot resume from it (see watchResource).
func setContentVersion(o object) {
	m := o.objectMeta()
	m.ResourceVersion = ""
	raw, _ := json.Marshal(o)
	h := fnv.New64a()
	_, _ = h.Write(raw)
	m.ResourceVersion = strconv.FormatUint(h.Sum64(), 10)
}

// watchResource streams watch events of the objects list returns: from
// resourceVersion "" or "0" an ADDED event per object first; from a list's
// version nothing until a change (these resources keep no history, so the
// changes between the list and the watch are not replayed). Then, every
// poll interval, an object that appears is ADDED, one whose content
// changed MODIFIED, one that is gone DELETED.
func (s *Server) watchResource(w http.ResponseWriter, r *http.Request, res *resource, list func() ([]object, error), resourceVersion string, out output) {
	// Any other version, a list's or an object's (`kubectl get X NAME -w`),
	// means "changes from now on".
	fromNow := resourceVersion != "" && resourceVersion != "0"
	timeout := maxWatch
	if t, err := strconv.Atoi(r.URL.Query().Get("timeoutSeconds")); err == nil && t > 0 && time.Duration(t)*time.Second < timeout {
		timeout = time.Duration(t) * time.Second
	}
	items, err := list()
	if err != nil {
		writeRESTError(w, err)
		return
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	headers := true
	send := func(typ watch.EventType, o object) {
		var obj any = o
		if out.table {
			obj = out.tableOf(res.columns, []object{o}, o.objectMeta().ResourceVersion, "", headers)
			headers = false
		}
		raw, _ := json.Marshal(obj)
		_ = json.NewEncoder(w).Encode(&metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: raw}})
	}
	key := func(o object) string { return o.objectMeta().Namespace + "/" + o.objectMeta().Name }
	last := map[string]object{}
	for _, o := range items {
		last[key(o)] = o
		if !fromNow {
			send(watch.Added, o)
		}
	}
	if flusher != nil {
		flusher.Flush()
	}
	interval := res.pollInterval
	if interval == 0 || s.opts.WatchInterval > 0 {
		interval = s.watchInterval()
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	end := time.NewTimer(timeout)
	defer end.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-end.C:
			return
		case <-tick.C:
		}
		items, err := list()
		if err != nil {
			writeErrorEvent(w, err)
			if flusher != nil {
				flusher.Flush()
			}
			return
		}
		now := map[string]object{}
		for _, o := range items {
			k := key(o)
			now[k] = o
			switch was, ok := last[k]; {
			case !ok:
				send(watch.Added, o)
			case was.objectMeta().ResourceVersion != o.objectMeta().ResourceVersion:
				send(watch.Modified, o)
			}
		}
		for k, o := range last {
			if _, ok := now[k]; !ok {
				send(watch.Deleted, o)
			}
		}
		last = now
		if flusher != nil {
			flusher.Flush()
		}
	}
}
