package statuspage

import (
	"context"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// NotifierStore is the part of the history store (internal/store) that the
// Notifier uses: the subscribers of each page, from subscription through
// confirmation to removal, and the outbox their notifications go to (a
// failed enqueue is checked against the deliveries already stored). It
// holds only the methods the Notifier calls, so the dependency is visible
// here and a test can fake or wrap it; every store backend satisfies it.
type NotifierStore interface {
	AddSubscriber(ctx context.Context, s store.Subscriber) (store.Subscriber, error)
	RenewSubscriberToken(ctx context.Context, id, tokenHash string, sentAt time.Time) error
	ConfirmSubscriber(ctx context.Context, tokenHash string, at time.Time) (store.Subscriber, error)
	GetSubscriber(ctx context.Context, id string) (store.Subscriber, error)
	ListSubscribers(ctx context.Context, pageUID string, confirmedOnly bool) ([]store.Subscriber, error)
	DeleteSubscriber(ctx context.Context, id string) error
	PruneSubscribers(ctx context.Context, olderThan time.Time) (int64, error)
	EnqueueEvents(ctx context.Context, events ...store.OutboxEvent) error
	ListDeliveries(ctx context.Context, q store.DeliveryQuery) ([]store.Delivery, error)
}

// PublicStore is the part of the history store that Public reads to render
// pages and feeds: uptime and response times of the shown monitors, and
// incidents with their public notes. It is read-only; for the reasons it
// is narrow see NotifierStore.
type PublicStore interface {
	StatsMany(ctx context.Context, monitorIDs []string, from, to time.Time) (map[string]store.Stats, error)
	UptimeDailyMany(ctx context.Context, monitorIDs []string, days int, loc *time.Location) (map[string][]store.DailyUptime, error)
	ResponseSeries(ctx context.Context, q store.SeriesQuery) ([]store.SeriesPoint, error)
	GetIncident(ctx context.Context, id string) (store.Incident, error)
	ListIncidents(ctx context.Context, q store.IncidentQuery) (store.IncidentList, error)
	ListNotes(ctx context.Context, incidentID string) ([]store.Note, error)
}
