package thirdparty

import (
	"context"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Store is the part of the history store (internal/store) that the Service
// uses: subscriptions and status-page links to read, and the poller's
// state per provider, written together with the notices it enqueues. It
// holds only the methods the Service calls, so the dependency is visible
// here and a test can fake or wrap it; every store backend satisfies it.
type Store interface {
	ListThirdPartySubscriptions(ctx context.Context, namespace string) ([]store.ThirdPartySubscription, error)
	GetThirdPartyState(ctx context.Context, providerID string) (store.ThirdPartyState, error)
	PutThirdPartyState(ctx context.Context, st store.ThirdPartyState, events ...store.OutboxEvent) error
	GetThirdPartyPage(ctx context.Context, pageUID string) (store.ThirdPartyPage, error)
	ListThirdPartyPages(ctx context.Context) ([]store.ThirdPartyPage, error)
}
