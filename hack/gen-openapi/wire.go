package main

import (
	"fmt"
	"reflect"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidentcomms"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/expiry"
	"github.com/uptime-operator/uptime-operator/internal/reliability"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/sitehealth"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/thirdparty"
)

// domainTypes are answers (or parts of answers) that are records of a
// domain package sent unchanged; schemas.go composes some of them with the
// fields apiserver adds (Site, SiteRun, FollowedProvider, PageServices).
var domainTypes = []any{
	reliability.FlakinessWindow{}, thirdparty.Provider{}, store.ThirdPartySubscription{},
	sitehealth.Report{}, store.HealthSite{},
	assist.Status{}, assist.Saved{}, store.AIDraft{}, store.AIContent{},
	expiry.Details{}, thirdparty.ProviderDetails{}, store.ThirdPartyService{},
}

// componentNames name the components of Go types whose own names say too
// little in the API's one namespace of schemas.
var componentNames = map[reflect.Type]string{
	reflect.TypeOf(sitehealth.Report{}):  "SiteReport",
	reflect.TypeOf(sitehealth.Summary{}): "SiteReportSummary",
	reflect.TypeOf(sitehealth.Counts{}):  "SiteIssueCounts",
	reflect.TypeOf(assist.Status{}):      "AssistStatus",
	reflect.TypeOf(assist.Saved{}):       "AssistSaved",
	reflect.TypeOf(store.AIDraft{}):      "StatusUpdateDraft",
	reflect.TypeOf(expiry.Details{}):     "ExpiryDetails",
}

// wireTypes are the answers whose schemas are derived from their Go types
// (reflect.go); the types they reach (restapi.Check of restapi.CheckPage,
// the store records an answer embeds) become components too.
var wireTypes = []any{
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
}

// namedEnums are the value lists an `openapi:"enum=@name"` tag names.
var namedEnums = map[string][]string{
	"monitorTypes":  monitorTypes,
	"monitorStates": monitorStates,
	"checkStates":   checkStates,
}

// schemas are the document's components.schemas: those derived from the
// wire types and the hand-written ones (handSchemas).
func schemas() (M, error) {
	r := newReflector()
	if err := r.add(append(wireTypes, domainTypes...)...); err != nil {
		return nil, err
	}
	out := r.schemas
	for name, s := range handSchemas() {
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("schema %s is both derived from a Go type and written by hand", name)
		}
		out[name] = s
	}
	return out, nil
}
