package alerting

import (
	"context"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// WorkerStore is the part of the history store (internal/store) that the
// Worker uses: the outbox's deliveries, leased, finished, retried or given
// back, and the code-host issues of incidents (issueStore). It holds only
// the methods the Worker calls, so the dependency is visible here and a
// test can fake or wrap it; every store backend satisfies it.
type WorkerStore interface {
	issueStore
	LeaseDeliveries(ctx context.Context, owner string, n int, leaseFor time.Duration) ([]store.Delivery, error)
	CompleteDelivery(ctx context.Context, owner string, a store.DeliveryAttempt) error
	RetryDelivery(ctx context.Context, owner string, a store.DeliveryAttempt, next time.Time) error
	FailDelivery(ctx context.Context, owner string, a store.DeliveryAttempt) error
	ReleaseDeliveries(ctx context.Context, owner string, ids ...string) error
	PruneOutbox(ctx context.Context, olderThan time.Time) (int64, error)
}

// EscalationStore is the part of the history store that the Escalator
// uses: the monitor's open incident, the escalation records on its
// timeline, and the outbox its notifications go to (a failed enqueue is
// checked against the deliveries already stored). It holds only the
// methods the Escalator calls, for the same reasons as WorkerStore.
type EscalationStore interface {
	timelineStore
	GetOpenIncident(ctx context.Context, monitorID string) (store.Incident, error)
	EnqueueEvents(ctx context.Context, events ...store.OutboxEvent) error
	ListDeliveries(ctx context.Context, q store.DeliveryQuery) ([]store.Delivery, error)
}

// issueStore is what a code-host channel reads and writes: the issue it
// opened for an incident is found on the incident's timeline, and recorded
// there and as the incident's issue URL.
type issueStore interface {
	timelineStore
	GetIncident(ctx context.Context, id string) (store.Incident, error)
	UpdateIncident(ctx context.Context, id string, u store.IncidentUpdate, events ...store.OutboxEvent) (store.Incident, error)
}

// timelineStore reads and extends incident timelines, where escalation
// records and code-host issues are kept.
type timelineStore interface {
	ListTimeline(ctx context.Context, q store.TimelineQuery) (items []store.TimelineEvent, nextCursor string, err error)
	AppendTimeline(ctx context.Context, events ...store.TimelineEvent) ([]store.TimelineEvent, error)
}
