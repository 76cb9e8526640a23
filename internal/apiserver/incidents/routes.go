package incidents

import (
	"context"
	"net/http"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Routes registers /incidents: incidents with their notes, timelines, postmortems, runbooks, snoozes and escalation, and deploy events.
func (h *Handlers) Routes(rt *core.Router) {
	deploys := core.WithFeature(monv1.FeatureDeployEvents)
	export := core.WithLimit(rt.Limits.Export)
	rt.Handle(http.MethodGet, "/incidents", h.listIncidents)
	rt.Handle(http.MethodPost, "/incidents", h.createIncident)
	rt.Handle(http.MethodGet, "/incidents/export", h.exportIncidents, export)
	rt.Handle(http.MethodGet, "/incidents/runbooks", h.listRunbooks)
	rt.Handle(http.MethodPost, "/incidents/runbooks", h.createRunbook)
	rt.Handle(http.MethodPut, "/incidents/runbooks/{runbookId}", h.replaceRunbook)
	rt.Handle(http.MethodDelete, "/incidents/runbooks/{runbookId}", h.deleteRunbook)
	rt.Handle(http.MethodGet, "/incidents/deploy-events", h.listDeployEvents, deploys)
	rt.Handle(http.MethodPost, "/incidents/deploy-events", h.createDeployEvent, deploys)
	rt.Handle(http.MethodGet, "/incidents/deploy-events/config", h.deployEventsConfig, deploys)
	rt.Handle(http.MethodGet, "/incidents/{id}", h.getIncident)
	rt.Handle(http.MethodGet, "/incidents/{id}/explanation", h.incidentExplanation)
	rt.Handle(http.MethodGet, "/incidents/{id}/replay-timeline", h.replayTimeline)
	rt.Handle(http.MethodPost, "/incidents/{id}/acknowledge", h.acknowledgeIncident)
	rt.Handle(http.MethodPost, "/incidents/{id}/resolve", h.resolveIncident)
	rt.Handle(http.MethodPost, "/incidents/{id}/snooze", h.snoozeIncident, core.WithAccess(core.OwnerOnly))
	rt.Handle(http.MethodDelete, "/incidents/{id}/snooze", h.unsnoozeIncident)
	rt.Handle(http.MethodGet, "/incidents/{id}/escalation", h.escalation)
	rt.Handle(http.MethodPost, "/incidents/{id}/escalation/acknowledge", h.acknowledgeIncident)
	rt.Handle(http.MethodGet, "/incidents/{id}/notes", h.listNotes)
	rt.Handle(http.MethodPost, "/incidents/{id}/notes", h.addNote)
	rt.Handle(http.MethodDelete, "/incidents/{id}/notes/{noteId}", h.deleteNote)
	rt.Handle(http.MethodPut, "/incidents/{id}/postmortem", h.putPostmortem)
	rt.Handle(http.MethodPost, "/incidents/{id}/runbook", h.attachRunbook)
	rt.Handle(http.MethodPatch, "/incidents/{id}/runbook-steps/{stepId}", h.setRunbookStep)
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
