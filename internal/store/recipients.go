package store

import (
	"context"
	"time"
)

// AlertRecipient is the confirmation state of one alert email address of a
// namespace. A row exists once a confirmation was sent to the address; an
// address the workspace's resources name without a row was never asked.
type AlertRecipient struct {
	Namespace string
	// Email is the address, lower-case: recipients are matched
	// case-insensitively.
	Email string
	// ConfirmTokenHash is the SHA-256 (hex) of the pending confirmation
	// token; empty once confirmed.
	ConfirmTokenHash   string
	ConfirmationSentAt *time.Time
	// ConfirmationsSent counts the confirmation emails sent.
	ConfirmationsSent int
	ConfirmedAt       *time.Time
}

// Confirmed reports whether the recipient confirmed the address.
func (r *AlertRecipient) Confirmed() bool { return r.ConfirmedAt != nil }

// AlertRecipientStore keeps the confirmation state of alert email recipients.
type AlertRecipientStore interface {
	// ListAlertRecipients returns the recipients of namespace (every
	// namespace's when empty), ordered by namespace and email.
	ListAlertRecipients(ctx context.Context, namespace string) ([]AlertRecipient, error)
	// RecordRecipientConfirmation records that a confirmation with a token
	// hashing to tokenHash was sent to email at sentAt, replacing any pending
	// token, and enqueues events (the confirmation email itself) in the same
	// transaction, so a recorded confirmation is always delivered. A
	// confirmed recipient is left as it is and nothing is enqueued. It
	// returns the row.
	RecordRecipientConfirmation(ctx context.Context, namespace, email, tokenHash string, sentAt time.Time, events ...OutboxEvent) (AlertRecipient, error)
	// ConfirmAlertRecipient confirms the pending recipient whose token hashes
	// to tokenHash when its confirmation was sent at or after sentAfter (so
	// old links expire) and forgets the hash; ErrNotFound otherwise.
	ConfirmAlertRecipient(ctx context.Context, tokenHash string, sentAfter, at time.Time) (AlertRecipient, error)
}
