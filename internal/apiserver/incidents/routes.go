package incidents

import (
	"context"
	"net/http"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Routes registers /incidents: incidents with their notes, timelines, postmortems, runbooks, snoozes and escalation, and deploy events.
func (h *Handlers) Routes(rt *core.Router) {
	deploys := core.WithFeature(monv1.FeatureDeployEvents)
	export := core.WithLimit(rt.Limits.Export)
	rt.Handle(http.MethodGet, "/incidents", h.listIncidents, core.Doc(apidoc.Op{
		Tag:     "Incidents",
		Summary: "Incidents (page pagination)",
		Query:   incidentFilters(true),
		Resp:    restapi.IncidentPage{},
	}))
	rt.Handle(http.MethodPost, "/incidents", h.createIncident, core.Doc(apidoc.Op{
		Tag:     "Incidents",
		Summary: "Open a manual incident",
		Desc:    "409 when the monitor already has an open incident.",
		Body:    restapi.IncidentBody{},
		Status:  201,
		Resp:    restapi.IncidentDetail{},
		Extra:   []int{409},
	}))
	rt.Handle(http.MethodGet, "/incidents/export", h.exportIncidents, export, core.Doc(apidoc.Op{
		Tag:         "Incidents",
		Summary:     "Incidents as CSV, or JSON with format=json",
		Query:       append(incidentFilters(false), apidoc.Q("format", apidoc.Enum("", "csv", "json"), "Default csv.")),
		Resp:        apidoc.Str("CSV: one row per incident, a header row first."),
		RespType:    "text/csv",
		RespHeaders: apidoc.M{"X-Export-Truncated": apidoc.M{"description": "true when the 50,000-row cap cut the export (the newest rows are returned).", "schema": apidoc.Enum("", "true")}},
		JSONResp:    restapi.IncidentList{},
	}))
	rt.Handle(http.MethodGet, "/incidents/runbooks", h.listRunbooks, core.Doc(apidoc.Op{Tag: "Runbooks", Summary: "Runbooks", Resp: []restapi.Runbook{}}))
	rt.Handle(http.MethodPost, "/incidents/runbooks", h.createRunbook, core.Doc(apidoc.Op{
		Tag:     "Runbooks",
		Summary: "Create a runbook",
		Body:    restapi.RunbookBody{},
		Status:  201,
		Resp:    restapi.Runbook{},
	}))
	rt.Handle(http.MethodPut, "/incidents/runbooks/{runbookId}", h.replaceRunbook, core.Doc(apidoc.Op{
		Tag:     "Runbooks",
		Summary: "Replace a runbook",
		Body:    restapi.RunbookBody{},
		Resp:    restapi.Runbook{},
	}))
	rt.Handle(http.MethodDelete, "/incidents/runbooks/{runbookId}", h.deleteRunbook, core.Doc(apidoc.Op{Tag: "Runbooks", Summary: "Delete a runbook", Status: 204}))
	rt.Handle(http.MethodGet, "/incidents/deploy-events", h.listDeployEvents, deploys, core.Doc(apidoc.Op{
		Tag:     "Deploy events",
		Summary: "Recent deploy events",
		Query:   []apidoc.Param{apidoc.IntQ("limit", 1, 100, 20, "")},
		Resp:    restapi.DeployEvents{},
	}))
	rt.Handle(http.MethodPost, "/incidents/deploy-events", h.createDeployEvent, deploys, core.Doc(apidoc.Op{
		Tag:     "Deploy events",
		Summary: "Record a deploy",
		Desc:    "A code-hosting deploy payload (source naming a code-hosting service) is 400 USE_SIGNED_DEPLOY_HOOK.",
		Body:    restapi.DeployEventBody{},
		Status:  201,
		Resp:    restapi.DeployEvent{},
	}))
	rt.Handle(http.MethodGet, "/incidents/deploy-events/config", h.deployEventsConfig, deploys, core.Doc(apidoc.Op{
		Tag:     "Deploy events",
		Summary: "Signed deploy webhook settings",
		Resp:    restapi.DeployHookConfig{},
	}))
	rt.Handle(http.MethodGet, "/incidents/{id}", h.getIncident, core.Doc(apidoc.Op{Tag: "Incidents", Summary: "Incident details", Resp: restapi.IncidentDetail{}}))
	rt.Handle(http.MethodGet, "/incidents/{id}/explanation", h.incidentExplanation, core.Doc(apidoc.Op{
		Tag:     "Incidents",
		Summary: "Region votes, quorum rule, failure class, alert decision, fault verdict, findings",
		Resp:    restapi.Explanation{},
	}))
	rt.Handle(http.MethodGet, "/incidents/{id}/replay-timeline", h.replayTimeline, core.Doc(apidoc.Op{
		Tag:     "Incidents",
		Summary: "Timeline of checks, alerts and notes",
		Query:   []apidoc.Param{apidoc.IntQ("limit", 1, 1000, 200, ""), apidoc.Q("cursor", apidoc.Str(""), "next_cursor of the previous page.")},
		Resp:    restapi.TimelinePage{},
	}))
	rt.Handle(http.MethodPost, "/incidents/{id}/acknowledge", h.acknowledgeIncident, core.Doc(apidoc.Op{Tag: "Incidents", Summary: "Acknowledge (stops escalation)", Resp: restapi.Incident{}}))
	rt.Handle(http.MethodPost, "/incidents/{id}/resolve", h.resolveIncident, core.Doc(apidoc.Op{
		Tag:          "Incidents",
		Summary:      "Resolve manually",
		Desc:         "409 INCIDENT_RESOLVED when already resolved.",
		Body:         restapi.ResolveBody{},
		BodyOptional: true,
		Resp:         restapi.Incident{},
		Extra:        []int{409},
	}))
	rt.Handle(http.MethodPost, "/incidents/{id}/snooze", h.snoozeIncident, core.WithAccess(core.OwnerOnly), core.Doc(apidoc.Op{
		Tag:     "Incidents",
		Summary: "Snooze alerts of an incident",
		Body:    restapi.SnoozeBody{},
		Resp:    restapi.Incident{},
		Extra:   []int{409},
	}))
	rt.Handle(http.MethodDelete, "/incidents/{id}/snooze", h.unsnoozeIncident, core.Doc(apidoc.Op{Tag: "Incidents", Summary: "Unsnooze", Resp: restapi.Incident{}}))
	rt.Handle(http.MethodGet, "/incidents/{id}/escalation", h.escalation, core.Doc(apidoc.Op{Tag: "Incidents", Summary: "Escalation status", Resp: restapi.Escalation{}}))
	rt.Handle(http.MethodPost, "/incidents/{id}/escalation/acknowledge", h.acknowledgeIncident, core.Doc(apidoc.Op{Tag: "Incidents", Summary: "Acknowledge (stops escalation)", Resp: restapi.Incident{}}))
	rt.Handle(http.MethodGet, "/incidents/{id}/notes", h.listNotes, core.Doc(apidoc.Op{Tag: "Incidents", Summary: "Notes of an incident", Resp: []restapi.Note{}}))
	rt.Handle(http.MethodPost, "/incidents/{id}/notes", h.addNote, core.Doc(apidoc.Op{
		Tag:     "Incidents",
		Summary: "Add a note",
		Body:    restapi.NoteBody{},
		Status:  201,
		Resp:    restapi.Note{},
	}))
	rt.Handle(http.MethodDelete, "/incidents/{id}/notes/{noteId}", h.deleteNote, core.Doc(apidoc.Op{Tag: "Incidents", Summary: "Delete a note", Status: 204}))
	rt.Handle(http.MethodPut, "/incidents/{id}/postmortem", h.putPostmortem, core.Doc(apidoc.Op{
		Tag:     "Incidents",
		Summary: "Set the postmortem",
		Body:    restapi.Postmortem{},
		Resp:    restapi.IncidentPostmortem{},
	}))
	rt.Handle(http.MethodPost, "/incidents/{id}/runbook", h.attachRunbook, core.Doc(apidoc.Op{
		Tag:          "Runbooks",
		Summary:      "Attach a runbook to an incident",
		Body:         restapi.RunbookAttach{},
		BodyOptional: true,
		Resp:         restapi.AttachedRunbook{},
	}))
	rt.Handle(http.MethodPatch, "/incidents/{id}/runbook-steps/{stepId}", h.setRunbookStep, core.Doc(apidoc.Op{
		Tag:     "Runbooks",
		Summary: "Complete or reopen a runbook step",
		Body:    restapi.RunbookStepState{},
		Resp:    restapi.AttachedRunbook{},
	}))
}

// Store is what the incident endpoints read and write in the history store.
type Store interface {
	core.IncidentGetter
	ListIncidents(ctx context.Context, q store.IncidentQuery) (store.IncidentList, error)
	SnoozeIncident(ctx context.Context, id string, until *time.Time) (store.Incident, error)
	AttachRunbook(ctx context.Context, id string, rb store.IncidentRunbook) (store.Incident, error)
	SetRunbookStep(ctx context.Context, id, stepID string, completed bool, at time.Time) (store.Incident, error)
	SetPostmortem(ctx context.Context, id, postmortem string) error
	ListTimeline(ctx context.Context, q store.TimelineQuery) (items []store.TimelineEvent, nextCursor string, err error)
	AddNote(ctx context.Context, n store.Note) (store.Note, error)
	ListNotes(ctx context.Context, incidentID string) ([]store.Note, error)
	DeleteNote(ctx context.Context, incidentID, noteID string) error
	InsertDeployEvent(ctx context.Context, e store.DeployEvent) (store.DeployEvent, error)
	ListDeployEvents(ctx context.Context, q store.DeployEventQuery) ([]store.DeployEvent, error)
}

// Engine changes incident state: the operations write alert events with
// the change.
type Engine interface {
	// OpenManualIncident opens an incident for m now; store.ErrIncidentOpen
	// when one is open.
	OpenManualIncident(ctx context.Context, m *monv1.Monitor) (store.Incident, error)
	// ResolveIncident resolves an incident manually (event
	// incident.resolved); store.ErrIncidentResolved when already resolved.
	ResolveIncident(ctx context.Context, id, note, by string) (store.Incident, error)
	// AcknowledgeIncident acknowledges an incident, stopping escalation.
	AcknowledgeIncident(ctx context.Context, id, by string) (store.Incident, error)
	// ExplainIncident explains one incident.
	ExplainIncident(ctx context.Context, inc store.Incident) (engine.Explanation, error)
}

// EscalationReporter reports an incident's escalation state from what
// actually fired.
type EscalationReporter interface {
	EscalationStatus(ctx context.Context, inc store.Incident) (alerting.EscalationState, error)
}

// PublicUpdater tells the status page subscribers about a public note.
type PublicUpdater interface {
	PublicUpdate(ctx context.Context, ns, monitorUID, incidentID, text string) error
}

// Handlers serve /incidents.
type Handlers struct {
	d  *core.Deps
	st Store
	// engine changes incident state; nil answers 503.
	engine Engine
	// escalations reports escalation; nil computes it from the policy alone.
	escalations EscalationReporter
	// subscribers hears about public notes; nil tells nobody.
	subscribers PublicUpdater
}

// New returns the handlers; engine, escalations and subscribers may be nil.
func New(d *core.Deps, st Store, engine Engine, escalations EscalationReporter, subscribers PublicUpdater) *Handlers {
	return &Handlers{d: d, st: st, engine: engine, escalations: escalations, subscribers: subscribers}
}

// incidentFilters are the query parameters of GET /incidents (paged) and
// its export.
func incidentFilters(paged bool) []apidoc.Param {
	ps := []apidoc.Param{
		apidoc.Q("status", apidoc.Enum("Omit for all.", restapi.IncidentStates...), ""),
		apidoc.Q("monitor_id", apidoc.UUID(""), ""),
		apidoc.Q("from", apidoc.DateTime(""), "Lower bound on the start time."),
		apidoc.Q("to", apidoc.DateTime(""), "Upper bound on the start time."),
		apidoc.Q("q", apidoc.Bounds(apidoc.Str(""), nil, 200), "Search in monitor names and URLs."),
	}
	if paged {
		ps = append(ps, apidoc.IntQ("page", 1, 1<<30, 1, ""), apidoc.IntQ("page_size", 1, 100, 25, ""))
	}
	return ps
}
