package store

import (
	"context"
	"time"
)

// Expiry notice kinds.
const (
	ExpiryKindSSL    = "ssl"
	ExpiryKindDomain = "domain"
)

// CertObservation is the leaf certificate one probe region last saw on a
// monitor's target. The store keeps only the newest observation per monitor
// and region, so the table stays as small as the number of TLS monitors.
type CertObservation struct {
	MonitorID  string    `json:"monitor_id"`
	Region     string    `json:"region"`
	ObservedAt time.Time `json:"observed_at"`
	NotAfter   time.Time `json:"not_after"`
	Issuer     string    `json:"issuer"`
	Subject    string    `json:"subject"`
}

// DomainExpiry is the cached result of a registration lookup (RDAP) of one
// registrable domain. ExpiresAt is nil when the registry publishes no
// expiration date or the lookup failed (Error says why).
type DomainExpiry struct {
	Domain    string     `json:"domain"`
	CheckedAt time.Time  `json:"checked_at"`
	ExpiresAt *time.Time `json:"expires_at"`
	Registrar string     `json:"registrar,omitempty"`
	Error     string     `json:"error,omitempty"`
}

// ExpiryNotice records that one stage of one expiry date of a monitor was
// notified, so each stage is sent once per expiry date (a renewed
// certificate has a new date and starts over).
type ExpiryNotice struct {
	MonitorID string `json:"monitor_id"`
	// Kind is ExpiryKindSSL or ExpiryKindDomain.
	Kind      string    `json:"kind"`
	ExpiresAt time.Time `json:"expires_at"`
	// Stage is pre_15d, pre_7d, pre_2d, pre_24h, post_1d, post_2d, post_3d
	// or pre_<N>d.
	Stage  string    `json:"stage"`
	SentAt time.Time `json:"sent_at"`
}

// ExpiryStore keeps what certificate and domain expiry notices need.
type ExpiryStore interface {
	// RecordCertObservation stores o as the observation of its monitor and
	// region, unless a newer one is stored already.
	RecordCertObservation(ctx context.Context, o CertObservation) error
	// ListCertObservations returns a monitor's observations, newest first.
	ListCertObservations(ctx context.Context, monitorID string) ([]CertObservation, error)
	// PutDomainExpiry stores (replaces) the lookup result of d.Domain.
	PutDomainExpiry(ctx context.Context, d DomainExpiry) error
	// GetDomainExpiry returns the cached lookup of domain or ErrNotFound.
	GetDomainExpiry(ctx context.Context, domain string) (DomainExpiry, error)
	// RecordExpiryNotice stores n and enqueues events in one transaction,
	// unless the same monitor, kind, expiry date and stage was recorded
	// before. It reports whether n was new; events are enqueued only then.
	RecordExpiryNotice(ctx context.Context, n ExpiryNotice, events ...OutboxEvent) (bool, error)
	// ListExpiryNotices returns a monitor's recorded notices, newest first.
	ListExpiryNotices(ctx context.Context, monitorID string) ([]ExpiryNotice, error)
}
