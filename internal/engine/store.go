package engine

import (
	"context"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Store is the part of the history store (internal/store) that the Engine
// uses. It holds only the methods the Engine calls, so the dependency is
// visible here and a test can fake or wrap it; every store backend
// satisfies it.
type Store interface {
	// Judging: results are stored, then judged under the monitor's lock;
	// the REST API's resolve and acknowledge go through the engine.
	InsertChecks(ctx context.Context, checks []store.Check) (inserted int, err error)
	Judge(ctx context.Context, monitorID string, fn func(tx store.JudgeTx) error) error
	MonitorView(ctx context.Context, monitorID string, q store.ViewQuery) (store.MonitorView, error)
	UnsettledMonitors(ctx context.Context, monitorIDs []string) (map[string]bool, error)
	AllUnsettledMonitors(ctx context.Context) (map[string]bool, error)
	GetOpenIncident(ctx context.Context, monitorID string) (store.Incident, error)
	GetIncident(ctx context.Context, id string) (store.Incident, error)
	ResolveIncident(ctx context.Context, id string, at time.Time, manual bool, note string, events ...store.OutboxEvent) (store.Incident, error)
	AcknowledgeIncident(ctx context.Context, id, by string, at time.Time, events ...store.OutboxEvent) (store.Incident, error)
	// The live state written to Monitor status: recent incidents, uptime,
	// observed DNS answers.
	ListIncidents(ctx context.Context, q store.IncidentQuery) (store.IncidentList, error)
	Uptime(ctx context.Context, monitorID string, from, to time.Time) (*float64, error)
	RecordDNS(ctx context.Context, r store.DNSRecord) (store.DNSRecord, error)
	// Heartbeat (cron) monitors: pings and the pauses that excuse silence.
	RecordHeartbeat(ctx context.Context, p store.HeartbeatPing) error
	ListHeartbeats(ctx context.Context, monitorID string, limit int) ([]store.HeartbeatPing, error)
	ListPauseWindows(ctx context.Context, monitorID string, since time.Time) ([]store.PauseWindow, error)
	// Probe agents in contact with any replica.
	RecordAgentContact(ctx context.Context, region, agent string, at time.Time) error
	AgentsOnline(ctx context.Context, since time.Time) (map[string]store.AgentPresence, error)
	// What their pushes said about the results they hold back.
	RecordAgentReport(ctx context.Context, r store.AgentReport) error
	RegionReplays(ctx context.Context) (map[string]store.RegionReplays, error)
	// Retention of raw checks and rollups, and of the history of deleted
	// monitors that no re-created one adopted.
	PruneChecks(ctx context.Context, olderThan time.Time, chunkSize int) (int64, error)
	PruneRollups(ctx context.Context, step time.Duration, olderThan time.Time) (int64, error)
	PruneRetiredHistory(ctx context.Context, olderThan time.Time) (int64, error)
	UnretiredGenerations(ctx context.Context) ([]store.MonitorIdentity, error)
	RetireMonitorHistory(ctx context.Context, id store.MonitorIdentity, at time.Time) error
}
