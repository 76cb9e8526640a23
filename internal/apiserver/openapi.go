package apiserver

import (
	_ "embed"
	"net/http"
	"reflect"

	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidentcomms"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/expiry"
	"github.com/uptime-operator/uptime-operator/internal/reliability"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/sitehealth"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/thirdparty"
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
	return apidoc.Build(apidoc.API{Ops: s.rt.Ops(), Types: openAPITypes, Names: openAPINames})
}

// openAPITypes are the wire types whose schemas are components, in the
// order that decides which of two types of the same name keeps the bare
// name: the answers first (also those only hand-written schemas refer to),
// then the domain records some answers send unchanged.
var openAPITypes = []any{
	restapi.ErrorBody{},
	restapi.Monitor{}, restapi.MonitorSummary{}, restapi.MonitorGroup{}, restapi.GroupSummary{}, restapi.Success{}, restapi.BulkResult{}, restapi.HeartbeatURL{}, restapi.HeartbeatRecorded{},
	restapi.CheckPage{}, restapi.CheckResult{}, restapi.CheckList{}, restapi.Stats{}, restapi.DNSRecords{}, restapi.DNSAccepted{},
	restapi.ResponseTimeChart{}, restapi.ResponseSeries{}, restapi.Days{}, restapi.RegionStatuses{}, restapi.PauseWindows{},
	restapi.IncidentPage{}, restapi.IncidentDetail{}, restapi.AttachedRunbook{}, restapi.Explanation{}, incidentcomms.PublishedDraft{},
	restapi.IncidentList{}, restapi.IncidentPostmortem{}, restapi.TimelinePage{},
	restapi.StatusPage{},
	restapi.SLOTarget{}, restapi.MonitorReliability{}, restapi.ReliabilityOverview{},
	restapi.Whoami{}, restapi.ProbeRegion{}, restapi.MaintenanceWindow{},
	restapi.TestResult{}, restapi.OTelExport{}, restapi.PageAccessState{},
	restapi.OnCallSchedule{}, restapi.OnCallNow{}, restapi.EscalationPolicy{}, restapi.Escalation{},

	reliability.FlakinessWindow{}, thirdparty.Provider{}, store.ThirdPartySubscription{},
	sitehealth.Report{}, store.HealthSite{},
	assist.Status{}, assist.Saved{}, store.AIDraft{}, store.AIContent{},
	expiry.Details{}, thirdparty.ProviderDetails{}, store.ThirdPartyService{},
}

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
