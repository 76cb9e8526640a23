package aggregated

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// IncidentsResource is the one Kubernetes resource of the aggregated API.
// It is not named incidents: {base_url}/incidents… through the aggregated
// API is the REST API of the specification (spec/README.md) and keeps its
// answers; kubectl finds the resource by its short names (incident,
// incidents, inc), so `kubectl get incidents` works all the same.
const IncidentsResource = "uptimeincidents"

// incidentShortNames are what kubectl users type.
var incidentShortNames = []string{"incident", "incidents", "inc"}

// Subresources of incidents that change an incident: each takes a POST
// (RBAC verb create) with the REST endpoint's body and answers the updated
// Incident.
var incidentActions = map[string]int{
	"acknowledge": http.StatusOK,      // POST /incidents/:id/acknowledge, no body
	"resolve":     http.StatusOK,      // POST /incidents/:id/resolve, body {note}
	"notes":       http.StatusCreated, // POST /incidents/:id/notes, body {body, public}
}

// resourceList is the discovery document: incidents and their action
// subresources, then the resources of resources.go. Nothing of the REST
// API is advertised; a REST collection named like a CRD (monitors) would
// shadow it for kubectl.
func (s *Server) resourceList() *metav1.APIResourceList {
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: Group + "/" + Version,
		APIResources: []metav1.APIResource{{
			Name: IncidentsResource, SingularName: "uptimeincident", ShortNames: incidentShortNames, Namespaced: true, Kind: "Incident",
			Verbs: metav1.Verbs{"get", "list", "watch"}, Categories: []string{"uptime"},
		}}}
	for _, sub := range []string{"acknowledge", "notes", "resolve"} {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: IncidentsResource + "/" + sub, Namespaced: true, Kind: "Incident", Verbs: metav1.Verbs{"create"},
		})
	}
	list.APIResources = append(list.APIResources, apiResources()...)
	return list
}

// incidentRequest is a request the incidents resource serves rather than
// the REST handler.
type incidentRequest struct {
	// namespace is empty for the list or watch of every namespace.
	namespace, name, subresource string
	verb                         string
}

// parseIncidentRequest tells whether path (under the group prefix) and
// method address the incidents resource: list or watch of the collection,
// get of one incident, POST of an action subresource.
func parseIncidentRequest(method, path string, q url.Values) (incidentRequest, bool) {
	ns, parts, ok := splitResourcePath(path)
	if !ok || parts[0] != IncidentsResource {
		return incidentRequest{}, false
	}
	watch := isTrue(q.Get("watch"))
	switch {
	case len(parts) == 1 && method == http.MethodGet && watch:
		return incidentRequest{namespace: ns, verb: "watch"}, true
	case len(parts) == 1 && method == http.MethodGet:
		return incidentRequest{namespace: ns, verb: "list"}, true
	case ns == "":
		return incidentRequest{}, false
	case len(parts) == 2 && method == http.MethodGet && parts[1] != "":
		return incidentRequest{namespace: ns, name: parts[1], verb: "get"}, true
	case len(parts) == 3 && method == http.MethodPost && incidentActions[parts[2]] != 0 && parts[1] != "":
		return incidentRequest{namespace: ns, name: parts[1], subresource: parts[2], verb: "create"}, true
	}
	return incidentRequest{}, false
}

func isTrue(v string) bool { return v == "true" || v == "1" }

// serveIncidents serves a request of the incidents resource. It is
// authorized like kube-apiserver authorizes it (a SubjectAccessReview of
// the verb on incidents or its subresource), not by access level, so the
// built-in view and edit roles, which the chart extends with incidents, are
// enough; the REST handler then serves the read as read-only and the action
// as standard.
func (s *Server) serveIncidents(w http.ResponseWriter, r *http.Request, caller user.Info, req incidentRequest) {
	if !s.allowed(w, r, caller, req.verb, req.namespace, IncidentsResource, req.subresource, req.name) {
		return
	}
	q := r.URL.Query()
	out := tableOptions(r)
	switch req.verb {
	case "list", "watch":
		sel, err := parseFieldSelector(q.Get("fieldSelector"))
		if err != nil {
			writeStatus(w, http.StatusBadRequest, "BadRequest", err.Error())
			return
		}
		lsel, err := labels.Parse(q.Get("labelSelector"))
		if err != nil {
			writeStatus(w, http.StatusBadRequest, "BadRequest", err.Error())
			return
		}
		l := &lister{s: s, r: r, caller: caller, fields: sel, labels: lsel}
		if l.namespaces, err = s.namespaces(r.Context(), req.namespace); err != nil {
			writeStatus(w, http.StatusInternalServerError, "InternalError", err.Error())
			return
		}
		if req.verb == "watch" {
			s.watchIncidents(w, r, l, q.Get("resourceVersion"), out)
			return
		}
		s.listIncidents(w, l, q, out)
	case "get":
		inc, err := s.getIncident(r, caller, req.namespace, req.name)
		if err != nil {
			writeRESTError(w, err)
			return
		}
		out.write(w, http.StatusOK, "", "", []Incident{inc}, false)
	default:
		path := "/incidents/" + url.PathEscape(req.name) + "/" + req.subresource
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if _, err := s.rest(r, caller, req.namespace, "standard", http.MethodPost, path, body); err != nil {
			writeRESTError(w, err)
			return
		}
		inc, err := s.getIncident(r, caller, req.namespace, req.name)
		if err != nil {
			writeRESTError(w, err)
			return
		}
		httpjson.Write(w, incidentActions[req.subresource], &inc)
	}
}

// namespaces returns ns, or every namespace when ns is empty (the list of
// `kubectl get incidents -A`, which kube-apiserver and the review above
// allowed cluster-wide).
func (s *Server) namespaces(ctx context.Context, ns string) ([]string, error) {
	if ns != "" {
		return []string{ns}, nil
	}
	list, err := s.opts.Kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	out := make([]string, 0, len(list.Items))
	for _, n := range list.Items {
		out = append(out, n.Name)
	}
	return out, nil
}

// restError is a non-2xx answer of the REST handler.
type restError struct {
	code int
	// restCode is the specification's error code (INCIDENT_RESOLVED, …).
	restCode, message string
}

func (e *restError) Error() string { return e.message }

// rest calls the REST handler in-process as caller in workspace ns with the
// given access level and returns the body of a 2xx answer.
func (s *Server) rest(r *http.Request, caller user.Info, ns, level, method, path string, body []byte) ([]byte, error) {
	req := httptest.NewRequestWithContext(r.Context(), method, path, bytes.NewReader(body))
	req.RemoteAddr = r.RemoteAddr
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.opts.Inject != nil {
		req = s.opts.Inject(req, Identity{Namespace: ns, User: caller.GetName(), Groups: caller.GetGroups(), Level: level})
	}
	rec := httptest.NewRecorder()
	s.opts.API.ServeHTTP(rec, req)
	if rec.Code/100 == 2 {
		return rec.Body.Bytes(), nil
	}
	var e struct{ Error, Code string }
	if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error == "" {
		e.Error = strings.TrimSpace(rec.Body.String())
	}
	msg := e.Error
	if e.Code != "" {
		msg = e.Code + ": " + e.Error
	}
	return nil, &restError{code: rec.Code, restCode: e.Code, message: msg}
}

// writeRESTError writes err, a restError or not, as a Kubernetes Status.
func writeRESTError(w http.ResponseWriter, err error) {
	re, ok := err.(*restError)
	if !ok {
		writeStatus(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	reason := map[int]string{
		http.StatusBadRequest: "BadRequest", http.StatusForbidden: "Forbidden", http.StatusNotFound: "NotFound",
		http.StatusConflict: "Conflict", http.StatusTooManyRequests: "TooManyRequests", http.StatusUnauthorized: "Unauthorized",
		http.StatusUnprocessableEntity: "Invalid",
	}[re.code]
	if reason == "" {
		reason = "InternalError"
	}
	writeStatus(w, re.code, reason, re.message)
}

// getIncident reads one incident with its notes.
func (s *Server) getIncident(r *http.Request, caller user.Info, ns, name string) (Incident, error) {
	raw, err := s.rest(r, caller, ns, "read-only", http.MethodGet, "/incidents/"+url.PathEscape(name), nil)
	if err != nil {
		if re, ok := err.(*restError); ok && re.code == http.StatusNotFound {
			re.message = fmt.Sprintf("%s.%s %q not found", IncidentsResource, Group, name)
		}
		return Incident{}, err
	}
	var d restapi.IncidentDetail
	if err := json.Unmarshal(raw, &d); err != nil {
		return Incident{}, fmt.Errorf("decode incident: %w", err)
	}
	return incidentFrom(ns, d), nil
}

// lister reads incidents of some namespaces through the REST list, newest
// first, and keeps those the selectors match.
type lister struct {
	s          *Server
	r          *http.Request
	caller     user.Info
	namespaces []string
	fields     fields.Selector
	labels     labels.Selector
}

// everything selects every incident.
func everything() (fields.Selector, labels.Selector) { return fields.Everything(), labels.Everything() }

// restPageSize is the REST list's largest page.
const restPageSize = 100

// matches tells whether inc is selected.
func (l *lister) matches(inc *Incident) bool {
	return l.fields.Matches(incidentFields(inc)) && l.labels.Matches(labels.Set(inc.Labels))
}

// status is the REST list's status filter the field selector allows, so
// `status.state=open` reads only open incidents.
func (l *lister) status() string {
	switch v, _ := l.fields.RequiresExactMatch("status.state"); v {
	case StateOpen:
		return "ongoing"
	case StateResolved:
		return "resolved"
	}
	return ""
}

// position is where a list continues: the index of the namespace and the
// offset in its REST list. It travels as the opaque continue token.
type position struct {
	NS     int `json:"n"`
	Offset int `json:"o"`
}

// scan returns up to limit selected incidents from pos on (every one when
// limit is 0) and the position after the last one read, nil at the end.
// status narrows the REST list ("" for all).
func (l *lister) scan(pos position, limit int, status string) ([]Incident, *position, error) {
	var out []Incident
	for ; pos.NS < len(l.namespaces); pos = (position{NS: pos.NS + 1}) {
		ns := l.namespaces[pos.NS]
		for {
			q := url.Values{"page": {strconv.Itoa(pos.Offset/restPageSize + 1)}, "page_size": {strconv.Itoa(restPageSize)}}
			if status != "" {
				q.Set("status", status)
			}
			raw, err := l.s.rest(l.r, l.caller, ns, "read-only", http.MethodGet, "/incidents?"+q.Encode(), nil)
			if err != nil {
				return nil, nil, err
			}
			var page restapi.IncidentPage
			if err := json.Unmarshal(raw, &page); err != nil {
				return nil, nil, fmt.Errorf("decode incidents: %w", err)
			}
			items := page.Items
			if skip := pos.Offset % restPageSize; skip < len(items) {
				items = items[skip:]
			} else {
				items = nil
			}
			for _, it := range items {
				pos.Offset++
				inc := incidentFrom(ns, restapi.IncidentDetail{Incident: it})
				if !l.matches(&inc) {
					continue
				}
				out = append(out, inc)
				if limit > 0 && len(out) == limit {
					if pos.Offset >= page.Total && pos.NS == len(l.namespaces)-1 {
						return out, nil, nil
					}
					return out, &pos, nil
				}
			}
			if len(page.Items) < restPageSize || pos.Offset >= page.Total {
				break
			}
		}
	}
	return out, nil, nil
}

// listIncidents answers a list: an IncidentList or a Table, paged with
// limit and continue.
func (s *Server) listIncidents(w http.ResponseWriter, l *lister, q url.Values, out output) {
	var pos position
	if c := q.Get("continue"); c != "" {
		raw, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || json.Unmarshal(raw, &pos) != nil || pos.NS < 0 || pos.Offset < 0 {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "invalid continue token")
			return
		}
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit < 0 {
		limit = 0
	}
	version := listVersion(time.Now())
	items, next, err := l.scan(pos, limit, l.status())
	if err != nil {
		writeRESTError(w, err)
		return
	}
	cont := ""
	if next != nil {
		raw, _ := json.Marshal(next)
		cont = base64.RawURLEncoding.EncodeToString(raw)
	}
	out.write(w, http.StatusOK, version, cont, items, true)
}

// listVersion is the resourceVersion of a list read at now: a watch from it
// reports the incidents whose own version (the time of their latest change)
// is later.
func listVersion(now time.Time) string { return strconv.FormatInt(now.UnixMicro(), 10) }

// output is how the client asked for objects: as a Table (what kubectl
// prints) or as objects.
type output struct {
	table bool
	// include is the Table rows' object: None, Metadata (default) or Object.
	include string
}

// tableOptions reads the Accept header and includeObject parameter.
func tableOptions(r *http.Request) output {
	o := output{include: r.URL.Query().Get("includeObject")}
	if o.include == "" {
		o.include = "Metadata"
	}
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && mt == "application/json" && params["as"] == "Table" && params["g"] == "meta.k8s.io" && params["v"] == "v1" {
			o.table = true
			return o
		}
	}
	return o
}

// write answers items: a Table, an IncidentList (list) or one Incident.
func (o output) write(w http.ResponseWriter, code int, version, cont string, items []Incident, list bool) {
	switch {
	case o.table:
		httpjson.Write(w, code, o.table1(items, version, cont, true))
	case list:
		if items == nil {
			items = []Incident{}
		}
		httpjson.Write(w, code, &IncidentList{TypeMeta: metav1.TypeMeta{Kind: "IncidentList", APIVersion: Group + "/" + Version},
			ListMeta: metav1.ListMeta{ResourceVersion: version, Continue: cont}, Items: items})
	default:
		httpjson.Write(w, code, &items[0])
	}
}

// table1 renders items as a Table; headers carries the column definitions
// (the first table of a watch only).
func (o output) table1(items []Incident, version, cont string, headers bool) *metav1.Table {
	objs := make([]object, len(items))
	for i := range items {
		objs[i] = &items[i]
	}
	return o.tableOf(incidentColumns, objs, version, cont, headers)
}
