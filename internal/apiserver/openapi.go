package apiserver

import (
	_ "embed"
	"net/http"
	"reflect"

	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/expiry"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig/schema"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/sitehealth"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// openAPIDocument is the OpenAPI 3.1 description of this API, built by
// BuildOpenAPI from the routes as they are declared (go run
// ./hack/gen-openapi writes it) and checked against a fresh build by
// openapi_test.go. It is embedded rather than built at startup because the
// descriptions of the wire types are their doc comments, read from the
// sources.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPIDocument returns the OpenAPI 3.1 document served at /openapi.json.
func OpenAPIDocument() []byte { return openAPIDocument }

// serveOpenAPI answers GET /openapi.json (public, no key).
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openAPIDocument)
}

// BuildOpenAPI builds the OpenAPI document from the route table of a server
// without dependencies: every route registers its documentation with its
// handler, so the document describes what is served. It reads the doc
// comments of the wire types from the module's sources (the working
// directory must be inside the repository).
func BuildOpenAPI() ([]byte, error) {
	s := New(Options{})
	config, err := schema.OpenAPI(restapi.NotificationEmailsSchema())
	if err != nil {
		return nil, err
	}
	return apidoc.Build(apidoc.API{Base: openAPIBase(config), Ops: s.rt.Ops(), Types: openAPITypes, Names: openAPINames, Enums: restapi.Enums, PathParams: openAPIPathParams})
}

// openAPITypes are the wire types that no declaration reaches but
// written schemas (openapi_base.go) refer to by name: the error body
// of the shared error answers. Every other component is a type a route's
// Body or Resp reaches, or the monitor config, derived from the Monitor
// CRD (monitorconfig/schema; the bodies and the answer hold it raw, to
// merge and render it by key, and name it with `ref=MonitorConfig`).
var openAPITypes = []any{restapi.ErrorBody{}}

// openAPINames name the components of Go types whose own names say too
// little in the API's one namespace of schemas.
var openAPINames = map[reflect.Type]string{
	reflect.TypeOf(sitehealth.Report{}):  "SiteReport",
	reflect.TypeOf(sitehealth.Summary{}): "SiteReportSummary",
	reflect.TypeOf(sitehealth.Counts{}):  "SiteIssueCounts",
	reflect.TypeOf(assist.Status{}):      "AssistStatus",
	reflect.TypeOf(assist.Saved{}):       "AssistSaved",
	reflect.TypeOf(store.AIDraft{}):      "StatusUpdateDraft",
	reflect.TypeOf(expiry.Details{}):     "ExpiryDetails",
}
