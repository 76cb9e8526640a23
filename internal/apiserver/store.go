package apiserver

import (
	"context"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidentcomms"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/telemetry"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/thirdpartystatus"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/websitehealth"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Store is the part of the history store (internal/store) that the REST API
// uses: the store interface each resource package declares for itself,
// what the recipient confirmer needs when none is configured, and the calls
// of the handlers not yet split into packages, grouped by the routes that
// call them. The handlers' own calls are listed even where an embedded
// interface has them too, so that each group stays true when a service's
// needs change. It holds only these methods, so the dependency is visible
// here and a test can fake or wrap it; every store backend satisfies it.
type Store interface {
	incidentcomms.Store
	recipients.Store
	websitehealth.Store
	telemetry.Store
	thirdpartystatus.Store

	// Monitors: pause windows, statistics reset, deletion, uptime and the
	// history of DNS answers.
	PauseMonitor(ctx context.Context, monitorID string, at time.Time) error
	ResumeMonitor(ctx context.Context, monitorID string, at time.Time) error
	ListPauseWindows(ctx context.Context, monitorID string, since time.Time) ([]store.PauseWindow, error)
	ResetStats(ctx context.Context, monitorID string) error
	DeleteMonitorHistory(ctx context.Context, monitorID string) error
	Uptime(ctx context.Context, monitorID string, from, to time.Time) (*float64, error)
	UptimeWindows(ctx context.Context, monitorID string, to time.Time, windows ...time.Duration) ([]*float64, error)
	ListDNSRecords(ctx context.Context, monitorID string, changedOnly bool, limit int) ([]store.DNSRecord, error)
	// Check history, statistics, flakiness and step runs.
	ListChecks(ctx context.Context, q store.ChecksQuery) (items []store.Check, nextBefore *time.Time, err error)
	LatestChecks(ctx context.Context, monitorID string) ([]store.Check, error)
	Stats(ctx context.Context, q store.StatsQuery) (store.Stats, error)
	UptimeDaily(ctx context.Context, monitorID string, days int, loc *time.Location) ([]store.DailyUptime, error)
	ResponseSeries(ctx context.Context, q store.SeriesQuery) ([]store.SeriesPoint, error)
	// Incidents with their timelines, notes, runbooks and deploy events.
	GetIncident(ctx context.Context, id string) (store.Incident, error)
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
	// Alert deliveries (notification history).
	ListDeliveries(ctx context.Context, q store.DeliveryQuery) ([]store.Delivery, error)
	// API keys' last use.
	TouchAPIKey(ctx context.Context, keyID string, at time.Time) error
	// Alert email recipients' confirmation state.
	ListAlertRecipients(ctx context.Context, namespace string) ([]store.AlertRecipient, error)
}
