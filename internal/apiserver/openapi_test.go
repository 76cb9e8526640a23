package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
)

// Methods an OpenAPI path item can describe.
var openAPIMethods = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}

// anyMethodDocumented is what the document must describe for a route served
// for every method (router.Handle).
var anyMethodDocumented = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

var paramRE = regexp.MustCompile(`\{[^}]*\}`)

// normalisePath makes chi patterns and OpenAPI paths comparable: every
// parameter ({id}, {id:[0-9]+}) and chi's trailing catch-all * become {}.
func normalisePath(p string) string {
	p = paramRE.ReplaceAllString(p, "{}")
	if strings.HasSuffix(p, "/*") {
		p = strings.TrimSuffix(p, "*") + "{}"
	}
	return p
}

// servedRoutes walks the router: normalised path → methods.
func servedRoutes(t *testing.T, s *Server) map[string][]string {
	t.Helper()
	served := map[string][]string{}
	err := chi.Walk(s.rt.Mux, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		p := normalisePath(route)
		if !slices.Contains(served[p], method) {
			served[p] = append(served[p], method)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk router: %v", err)
	}
	return served
}

// documentedRoutes reads the embedded document: normalised path → methods,
// plus the original OpenAPI path of each normalised one.
func documentedRoutes(t *testing.T, doc *openapi3.T) (map[string][]string, map[string]string) {
	t.Helper()
	documented := map[string][]string{}
	orig := map[string]string{}
	for path, item := range doc.Paths.Map() {
		p := normalisePath(path)
		if o, dup := orig[p]; dup {
			t.Errorf("paths %s and %s are the same route", o, path)
		}
		orig[p] = path
		for m := range item.Operations() {
			documented[p] = append(documented[p], strings.ToUpper(m))
		}
	}
	return documented, orig
}

func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPIDocument())
	if err != nil {
		t.Fatalf("load openapi.json: %v", err)
	}
	return doc
}

func TestOpenAPIDocumentIsValid31(t *testing.T) {
	doc := loadOpenAPI(t)
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") || !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi = %q, want 3.1.x", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableMultiError()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI 3.1 document:\n%v", err)
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		t.Fatal("no paths")
	}
	if doc.Components == nil || len(doc.Components.Schemas) == 0 {
		t.Fatal("no component schemas")
	}
	// The error shapes of the specification.
	for _, name := range []string{"ErrorBody", "FieldError", "ValidationError", "FeatureError", "EntitlementLimitError"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("schema %s missing", name)
		}
	}
	fe := doc.Components.Schemas["FeatureError"].Value
	for _, f := range []string{"error", "code", "details", "plan", "required_plan", "upgradePath"} {
		if fe.Properties[f] == nil {
			t.Errorf("FeatureError lacks %s", f)
		}
	}
	ve := doc.Components.Schemas["ValidationError"].Value
	if !slices.Contains(ve.Required, "errors") {
		t.Errorf("ValidationError does not require errors")
	}
	// Bearer sk_ keys, required by default.
	sec := doc.Components.SecuritySchemes["apiKey"]
	if sec == nil || sec.Value.Type != "http" || sec.Value.Scheme != "bearer" {
		t.Fatalf("security scheme apiKey: %+v", sec)
	}
	if len(doc.Security) != 1 || doc.Security[0]["apiKey"] == nil {
		t.Errorf("document security = %v, want apiKey", doc.Security)
	}
	// Every operation: an id, a success or error response, and a 401 exactly
	// when it needs a key.
	for path, item := range doc.Paths.Map() {
		for m, o := range item.Operations() {
			if o.OperationID == "" {
				t.Errorf("%s %s has no operationId", m, path)
			}
			public := o.Security != nil && len(*o.Security) == 0
			if has401 := o.Responses.Status(401) != nil; has401 == public {
				t.Errorf("%s %s: public=%v but 401 documented=%v", m, path, public, has401)
			}
			if o.Responses.Status(429) == nil {
				t.Errorf("%s %s: no 429", m, path)
			}
		}
	}
}

// TestOpenAPICoversRouter checks that every served route is documented and
// every documented route is served.
func TestOpenAPICoversRouter(t *testing.T) {
	doc := loadOpenAPI(t)
	s := New(Options{})
	served := servedRoutes(t, s)
	documented, orig := documentedRoutes(t, doc)

	var missing, extra []string
	for p, methods := range served {
		if isAnyMethod(methods) {
			for _, m := range anyMethodDocumented {
				if !slices.Contains(documented[p], m) {
					missing = append(missing, m+" "+p+" (served for every method)")
				}
			}
			continue
		}
		for _, m := range methods {
			if !slices.Contains(documented[p], m) {
				missing = append(missing, m+" "+p)
			}
		}
	}
	for p, methods := range documented {
		for _, m := range methods {
			if !slices.Contains(served[p], m) {
				extra = append(extra, m+" "+orig[p])
			}
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("served but not in openapi.json (register them with rt.Handle or rt.Public and a core.Doc, then go run ./hack/gen-openapi):\n  %s", strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("in openapi.json but not served:\n  %s", strings.Join(extra, "\n  "))
	}
}

// isAnyMethod reports whether a route is served for every method.
func isAnyMethod(methods []string) bool {
	for _, m := range openAPIMethods {
		if !slices.Contains(methods, m) {
			return false
		}
	}
	return true
}

// TestOpenAPISecurityMatchesRouter sends every documented operation without
// a key: operations marked public must not answer 401, all others must
// answer 401 `No token provided`.
func TestOpenAPISecurityMatchesRouter(t *testing.T) {
	doc := loadOpenAPI(t)
	s := New(Options{})
	h := s.Handler()
	for path, item := range doc.Paths.Map() {
		url := paramRE.ReplaceAllStringFunc(path, func(p string) string {
			if p == "{rest}" {
				return "history"
			}
			return "x"
		})
		for m, o := range item.Operations() {
			public := o.Security != nil && len(*o.Security) == 0
			code, body := serveNoKey(h, m, url)
			switch {
			case public && code == http.StatusUnauthorized:
				t.Errorf("%s %s is documented public but answered 401", m, path)
			case !public && (code != http.StatusUnauthorized || !strings.Contains(body, "No token provided")):
				t.Errorf("%s %s needs a key in the document but answered %d %s without one", m, path, code, body)
			}
		}
	}
}

// serveNoKey serves one request without a key. The server has no
// dependencies here, so a public handler may panic past authentication: that
// counts as "not 401".
func serveNoKey(h http.Handler, method, url string) (code int, body string) {
	rec := httptest.NewRecorder()
	defer func() {
		if recover() != nil {
			code, body = -1, "(handler panicked without dependencies)"
		}
	}()
	req := httptest.NewRequest(method, url, nil)
	req.RemoteAddr = "192.0.2.1:1234"
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// TestOpenAPIDocumentIsCurrent builds the document from the route table
// and compares it with the embedded one: a route, its documentation or a
// wire type changed without go run ./hack/gen-openapi fails here.
func TestOpenAPIDocumentIsCurrent(t *testing.T) {
	if u := New(Options{}).rt.Undocumented(); len(u) > 0 {
		t.Errorf("routes without documentation (add core.Doc where they are registered):\n  %s", strings.Join(u, "\n  "))
	}
	built, err := BuildOpenAPI()
	if err != nil {
		t.Fatalf("build the document: %v", err)
	}
	if !bytes.Equal(built, OpenAPIDocument()) {
		t.Errorf("internal/apiserver/openapi.json is stale: run go run ./hack/gen-openapi")
	}
}

// TestOpenAPIServed checks GET /openapi.json answers the embedded document
// without a key, and that docs/openapi.json is the same document.
func TestOpenAPIServed(t *testing.T) {
	s := New(Options{})
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi.json = %d %s", rec.Code, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q", ct)
	}
	var v map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil || !strings.HasPrefix(fmt.Sprint(v["openapi"]), "3.1") {
		t.Fatalf("body is not an OpenAPI 3.1 document: %v", err)
	}
	docs, err := os.ReadFile("../../docs/openapi.json")
	if err != nil {
		t.Fatalf("read docs/openapi.json: %v", err)
	}
	if !bytes.Equal(docs, OpenAPIDocument()) {
		t.Errorf("docs/openapi.json differs from internal/apiserver/openapi.json; run go run ./hack/gen-openapi")
	}
}
