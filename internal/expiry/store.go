package expiry

import (
	"context"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Store is the part of the history store (internal/store) that the Checker
// uses: certificate observations, domain registration lookups and the
// notices already sent (recorded together with the alerts they enqueue).
// It holds only the methods the Checker calls, so the dependency is
// visible here and a test can fake or wrap it; every store backend
// satisfies it.
type Store interface {
	RecordCertObservation(ctx context.Context, o store.CertObservation) error
	ListCertObservations(ctx context.Context, monitorID string) ([]store.CertObservation, error)
	PutDomainExpiry(ctx context.Context, d store.DomainExpiry) error
	GetDomainExpiry(ctx context.Context, domain string) (store.DomainExpiry, error)
	RecordExpiryNotice(ctx context.Context, n store.ExpiryNotice, events ...store.OutboxEvent) (bool, error)
	ListExpiryNotices(ctx context.Context, monitorID string) ([]store.ExpiryNotice, error)
}
