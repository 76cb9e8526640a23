package recipients

import (
	"context"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Store is the part of the history store (internal/store) that the
// Confirmer uses: each recipient's confirmation state, and the
// confirmation emails enqueued with it. It holds only the methods the
// Confirmer calls, so the dependency is visible here and a test can fake
// or wrap it; every store backend satisfies it.
type Store interface {
	ListAlertRecipients(ctx context.Context, namespace string) ([]store.AlertRecipient, error)
	RecordRecipientConfirmation(ctx context.Context, namespace, email, tokenHash string, sentAt time.Time, events ...store.OutboxEvent) (store.AlertRecipient, error)
	ConfirmAlertRecipient(ctx context.Context, tokenHash string, sentAfter, at time.Time) (store.AlertRecipient, error)
}
