package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

const recipientCols = "namespace, email, confirm_token_hash, confirmation_sent_at, confirmations_sent, confirmed_at"

func (s *outboxStore) scanRecipient(r interface{ Scan(...any) error }) (store.AlertRecipient, error) {
	var rec store.AlertRecipient
	var token *string
	err := r.Scan(&rec.Namespace, &rec.Email, &token, s.D.ScanNullTime(&rec.ConfirmationSentAt),
		&rec.ConfirmationsSent, s.D.ScanNullTime(&rec.ConfirmedAt))
	if token != nil {
		rec.ConfirmTokenHash = *token
	}
	return rec, err
}

// ListAlertRecipients implements store.Store.
func (s *outboxStore) ListAlertRecipients(ctx context.Context, namespace string) ([]store.AlertRecipient, error) {
	q, args := "SELECT "+recipientCols+" FROM alert_recipients", []any{}
	if namespace != "" {
		q, args = q+" WHERE namespace = ?", append(args, namespace)
	}
	rows, err := s.B.Reader().Query(ctx, q+" ORDER BY namespace, email", args...)
	if err != nil {
		return nil, fmt.Errorf("list alert recipients: %w", err)
	}
	defer rows.Close()
	out := []store.AlertRecipient{}
	for rows.Next() {
		rec, err := s.scanRecipient(rows)
		if err != nil {
			return nil, fmt.Errorf("scan alert recipient: %w", err)
		}
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list alert recipients: %w", err)
	}
	return out, nil
}

// RecordRecipientConfirmation implements store.Store.
func (s *outboxStore) RecordRecipientConfirmation(ctx context.Context, namespace, email, tokenHash string, sentAt time.Time, events ...store.OutboxEvent) (store.AlertRecipient, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if namespace == "" || email == "" || tokenHash == "" {
		return store.AlertRecipient{}, fmt.Errorf("%w: an alert recipient needs a namespace, an email and a token", store.ErrInvalid)
	}
	var rec store.AlertRecipient
	err := s.B.Write(ctx, func(q Querier) error {
		// The conditional upsert leaves a confirmed recipient untouched.
		_, err := q.Exec(ctx, "INSERT INTO alert_recipients ("+recipientCols+") VALUES (?, ?, ?, ?, 1, NULL)"+
			" ON CONFLICT (namespace, email) DO UPDATE SET confirm_token_hash = excluded.confirm_token_hash,"+
			" confirmation_sent_at = excluded.confirmation_sent_at,"+
			" confirmations_sent = alert_recipients.confirmations_sent + 1"+
			" WHERE alert_recipients.confirmed_at IS NULL",
			namespace, email, tokenHash, s.D.Time(store.UTC(sentAt)))
		if err != nil {
			return fmt.Errorf("record recipient confirmation: %w", err)
		}
		rec, err = s.scanRecipient(q.QueryRow(ctx, "SELECT "+recipientCols+" FROM alert_recipients WHERE namespace = ? AND email = ?", namespace, email))
		if err != nil {
			return fmt.Errorf("read alert recipient: %w", err)
		}
		if rec.Confirmed() {
			return nil
		}
		return s.enqueue(ctx, q, events)
	})
	return rec, err
}

// ConfirmAlertRecipient implements store.Store.
func (s *outboxStore) ConfirmAlertRecipient(ctx context.Context, tokenHash string, sentAfter, at time.Time) (store.AlertRecipient, error) {
	var rec store.AlertRecipient
	if tokenHash == "" {
		return rec, fmt.Errorf("confirm alert recipient: %w", store.ErrNotFound)
	}
	at = store.UTC(at)
	err := s.B.Write(ctx, func(q Querier) error {
		var err error
		rec, err = s.scanRecipient(q.QueryRow(ctx, "SELECT "+recipientCols+" FROM alert_recipients"+
			" WHERE confirm_token_hash = ? AND confirmed_at IS NULL AND confirmation_sent_at >= ?",
			tokenHash, s.D.Time(store.UTC(sentAfter))))
		if isNotFound(err) {
			return fmt.Errorf("confirm alert recipient: %w", store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("confirm alert recipient: %w", err)
		}
		if _, err := q.Exec(ctx, "UPDATE alert_recipients SET confirmed_at = ?, confirm_token_hash = NULL WHERE namespace = ? AND email = ?",
			s.D.Time(at), rec.Namespace, rec.Email); err != nil {
			return fmt.Errorf("confirm alert recipient: %w", err)
		}
		rec.ConfirmedAt, rec.ConfirmTokenHash = &at, ""
		return nil
	})
	return rec, err
}
