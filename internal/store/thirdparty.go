package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ErrSubscriptionExists means the workspace already follows the provider; the
// method returns that subscription.
var ErrSubscriptionExists = errors.New("store: provider already followed")

// ThirdPartySubscription is a workspace following one third-party provider.
type ThirdPartySubscription struct {
	ID         string `json:"id"`
	Namespace  string `json:"namespace"`
	ProviderID string `json:"provider_id"`
	// ComponentIDs limits notices to these components of the provider;
	// empty follows every component.
	ComponentIDs []string `json:"component_ids"`
	// Keywords limits notices to those whose text contains one of them
	// (case-insensitively); empty keeps every notice.
	Keywords []string `json:"keywords"`
	// Notify sends incident and component notices.
	Notify bool `json:"notify"`
	// NotifyMaintenance sends maintenance notices.
	NotifyMaintenance bool `json:"notify_maintenance"`
	// MinSeverity is minor, major or critical.
	MinSeverity string    `json:"min_severity"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// ThirdPartyState is what the poller last saw of one provider: the
// conditional-request validators and the parsed snapshot it diffs against.
type ThirdPartyState struct {
	ProviderID   string `json:"provider_id"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	// Snapshot is the provider's parsed state (owned by the thirdparty
	// package); nil before the first successful poll.
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	PolledAt time.Time       `json:"polled_at"`
	// ChangedAt is when the snapshot last changed.
	ChangedAt *time.Time `json:"changed_at"`
	// Error is why the last poll failed, empty when it succeeded.
	Error string `json:"error,omitempty"`
}

// ThirdPartyService is one provider (optionally some of its components)
// shown on a status page.
type ThirdPartyService struct {
	ProviderID   string   `json:"provider_id"`
	ComponentIDs []string `json:"component_ids"`
	// DisplayName replaces the provider's name on the page when set.
	DisplayName string `json:"display_name,omitempty"`
}

// ThirdPartyPage is the list of third-party services shown on one status
// page.
type ThirdPartyPage struct {
	// PageUID is the StatusPage's UID.
	PageUID   string              `json:"page_uid"`
	Namespace string              `json:"namespace"`
	Services  []ThirdPartyService `json:"services"`
	UpdatedAt time.Time           `json:"updated_at"`
}

// ThirdPartyStore keeps third-party status subscriptions, the poller's
// per-provider state and the services shown on status pages.
type ThirdPartyStore interface {
	// InsertThirdPartySubscription stores a new subscription (ID and
	// timestamps filled when empty). When the workspace already follows the
	// provider it returns that subscription with ErrSubscriptionExists.
	InsertThirdPartySubscription(ctx context.Context, s ThirdPartySubscription) (ThirdPartySubscription, error)
	// GetThirdPartySubscription returns one subscription or ErrNotFound.
	GetThirdPartySubscription(ctx context.Context, id string) (ThirdPartySubscription, error)
	// ListThirdPartySubscriptions returns a workspace's subscriptions, oldest
	// first; an empty namespace lists every workspace's.
	ListThirdPartySubscriptions(ctx context.Context, namespace string) ([]ThirdPartySubscription, error)
	// UpdateThirdPartySubscription replaces the filters of s.ID (UpdatedAt
	// set to now when zero); ErrNotFound when missing.
	UpdateThirdPartySubscription(ctx context.Context, s ThirdPartySubscription) (ThirdPartySubscription, error)
	// DeleteThirdPartySubscription deletes a subscription or returns
	// ErrNotFound.
	DeleteThirdPartySubscription(ctx context.Context, id string) error
	// GetThirdPartyState returns the poller's state of a provider or
	// ErrNotFound.
	GetThirdPartyState(ctx context.Context, providerID string) (ThirdPartyState, error)
	// PutThirdPartyState replaces the state of st.ProviderID and enqueues
	// events, in one transaction, so a notice is enqueued exactly when the
	// state it was computed from is stored.
	PutThirdPartyState(ctx context.Context, st ThirdPartyState, events ...OutboxEvent) error
	// GetThirdPartyPage returns the services shown on a status page; a page
	// without any gives an empty list, not ErrNotFound.
	GetThirdPartyPage(ctx context.Context, pageUID string) (ThirdPartyPage, error)
	// ListThirdPartyPages returns every page that shows services, by page
	// UID; the poller follows the providers they show.
	ListThirdPartyPages(ctx context.Context) ([]ThirdPartyPage, error)
	// PutThirdPartyPage replaces the services shown on p.PageUID; an empty
	// list removes them.
	PutThirdPartyPage(ctx context.Context, p ThirdPartyPage) (ThirdPartyPage, error)
}
