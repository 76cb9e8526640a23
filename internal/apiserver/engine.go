package apiserver

import (
	"context"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Engine is what the API asks of the incident engine: the operations that
// change incident state (they write alert events with the change) and those
// that need the engine's in-memory view. Reads of history go to the store.
type Engine interface {
	// OpenManualIncident opens an incident for m now; store.ErrIncidentOpen
	// when one is open.
	OpenManualIncident(ctx context.Context, m *monv1.Monitor) (store.Incident, error)
	// ResolveIncident resolves an incident manually (event
	// incident.resolved); store.ErrIncidentResolved when already resolved.
	ResolveIncident(ctx context.Context, id, note, by string) (store.Incident, error)
	// AcknowledgeIncident acknowledges an incident, stopping escalation.
	AcknowledgeIncident(ctx context.Context, id, by string) (store.Incident, error)
	// HeartbeatByToken records a ping for the cron monitor owning token;
	// engine.ErrUnknownToken when none does. Pings of paused monitors are ignored
	// without error.
	HeartbeatByToken(ctx context.Context, token string, p engine.Ping) error
	// Heartbeat records a ping for m (the API-key variant).
	Heartbeat(ctx context.Context, m *monv1.Monitor, p engine.Ping) error
	// ExplainMonitor explains the open incident or the current votes.
	ExplainMonitor(ctx context.Context, m *monv1.Monitor) (engine.Explanation, error)
	// ExplainIncident explains one incident.
	ExplainIncident(ctx context.Context, inc store.Incident) (engine.Explanation, error)
	// RunCheck runs one check of m (saved or not) from region ("" = any
	// region the monitor uses) and returns the result without storing it
	// unless store is true.
	RunCheck(ctx context.Context, m *monv1.Monitor, region string, store bool) (probeapi.Result, error)
}
