package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

const subscriberCols = "id, page_uid, namespace, channel, address, confirm_token_hash, confirmation_sent_at, confirmed_at, created_at"

func (s *subscriberStore) scanSubscriber(r interface{ Scan(...any) error }) (store.Subscriber, error) {
	var sub store.Subscriber
	var channel string
	var token *string
	err := r.Scan(&sub.ID, &sub.PageUID, &sub.Namespace, &channel, &sub.Address, &token,
		s.D.ScanNullTime(&sub.ConfirmationSentAt), s.D.ScanNullTime(&sub.ConfirmedAt), s.D.ScanTime(&sub.CreatedAt))
	if err != nil {
		return sub, err
	}
	sub.Channel = store.SubscriberChannel(channel)
	if token != nil {
		sub.ConfirmTokenHash = *token
	}
	return sub, nil
}

func (s *subscriberStore) getSubscriber(ctx context.Context, q Querier, where string, args ...any) (store.Subscriber, error) {
	sub, err := s.scanSubscriber(q.QueryRow(ctx, "SELECT "+subscriberCols+" FROM status_page_subscribers WHERE "+where, args...))
	if err != nil && !isNotFound(err) {
		return sub, fmt.Errorf("get subscriber: %w", err)
	}
	return sub, err
}

// AddSubscriber implements store.Store.
func (s *subscriberStore) AddSubscriber(ctx context.Context, sub store.Subscriber) (store.Subscriber, error) {
	switch {
	case sub.PageUID == "" || sub.Address == "":
		return sub, fmt.Errorf("%w: subscriber needs page_uid and address", store.ErrInvalid)
	case sub.Channel != store.SubscriberEmail && sub.Channel != store.SubscriberChat && sub.Channel != store.SubscriberWebhook:
		return sub, fmt.Errorf("%w: subscriber channel %q", store.ErrInvalid, sub.Channel)
	}
	if sub.ID == "" {
		sub.ID = uuid.NewString()
	}
	if sub.CreatedAt.IsZero() {
		sub.CreatedAt = s.now()
	}
	sub.CreatedAt = store.UTC(sub.CreatedAt)
	var existing store.Subscriber
	err := s.B.Write(ctx, func(q Querier) error {
		// ON CONFLICT keeps a PostgreSQL transaction usable; the unique
		// index on (page_uid, channel, address) decides.
		n, err := q.Exec(ctx, "INSERT INTO status_page_subscribers ("+subscriberCols+") VALUES "+placeholders(9)+
			" ON CONFLICT (page_uid, channel, address) DO NOTHING",
			sub.ID, sub.PageUID, sub.Namespace, string(sub.Channel), sub.Address, nullStr(sub.ConfirmTokenHash),
			s.nullTime(sub.ConfirmationSentAt), s.nullTime(sub.ConfirmedAt), s.D.Time(sub.CreatedAt))
		if err != nil {
			return fmt.Errorf("insert subscriber: %w", err)
		}
		if n == 0 {
			existing, err = s.getSubscriber(ctx, q, "page_uid = ? AND channel = ? AND address = ?",
				sub.PageUID, string(sub.Channel), sub.Address)
			if err != nil {
				return err
			}
			return store.ErrSubscriberExists
		}
		return nil
	})
	if errors.Is(err, store.ErrSubscriberExists) {
		return existing, err
	}
	return sub, err
}

// RenewSubscriberToken implements store.Store.
func (s *subscriberStore) RenewSubscriberToken(ctx context.Context, id, tokenHash string, sentAt time.Time) error {
	return s.B.Write(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, "UPDATE status_page_subscribers SET confirm_token_hash = ?, confirmation_sent_at = ? WHERE id = ? AND confirmed_at IS NULL",
			nullStr(tokenHash), s.D.Time(store.UTC(sentAt)), id)
		if err != nil {
			return fmt.Errorf("renew subscriber token: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("renew subscriber token %s: %w", id, store.ErrNotFound)
		}
		return nil
	})
}

// ConfirmSubscriber implements store.Store.
func (s *subscriberStore) ConfirmSubscriber(ctx context.Context, tokenHash string, at time.Time) (store.Subscriber, error) {
	var sub store.Subscriber
	if tokenHash == "" {
		return sub, fmt.Errorf("confirm subscriber: %w", store.ErrNotFound)
	}
	at = store.UTC(at)
	err := s.B.Write(ctx, func(q Querier) error {
		var err error
		sub, err = s.getSubscriber(ctx, q, "confirm_token_hash = ? AND confirmed_at IS NULL", tokenHash)
		if err != nil {
			return err
		}
		if _, err := q.Exec(ctx, "UPDATE status_page_subscribers SET confirmed_at = ?, confirm_token_hash = NULL WHERE id = ?",
			s.D.Time(at), sub.ID); err != nil {
			return fmt.Errorf("confirm subscriber: %w", err)
		}
		sub.ConfirmedAt, sub.ConfirmTokenHash = &at, ""
		return nil
	})
	return sub, err
}

// GetSubscriber implements store.Store.
func (s *subscriberStore) GetSubscriber(ctx context.Context, id string) (store.Subscriber, error) {
	return s.getSubscriber(ctx, s.B.Reader(), "id = ?", id)
}

// ListSubscribers implements store.Store.
func (s *subscriberStore) ListSubscribers(ctx context.Context, pageUID string, confirmedOnly bool) ([]store.Subscriber, error) {
	where := "page_uid = ?"
	if confirmedOnly {
		where += " AND confirmed_at IS NOT NULL"
	}
	rows, err := s.B.Reader().Query(ctx, "SELECT "+subscriberCols+" FROM status_page_subscribers WHERE "+where+" ORDER BY created_at, id", pageUID)
	if err != nil {
		return nil, fmt.Errorf("list subscribers: %w", err)
	}
	defer rows.Close()
	out := []store.Subscriber{}
	for rows.Next() {
		sub, err := s.scanSubscriber(rows)
		if err != nil {
			return nil, fmt.Errorf("scan subscriber: %w", err)
		}
		out = append(out, sub)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list subscribers: %w", err)
	}
	return out, nil
}

// DeleteSubscriber implements store.Store.
func (s *subscriberStore) DeleteSubscriber(ctx context.Context, id string) error {
	return s.B.Write(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, "DELETE FROM status_page_subscribers WHERE id = ?", id)
		if err != nil {
			return fmt.Errorf("delete subscriber: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("delete subscriber %s: %w", id, store.ErrNotFound)
		}
		return nil
	})
}

// PruneSubscribers implements store.Store.
func (s *subscriberStore) PruneSubscribers(ctx context.Context, olderThan time.Time) (int64, error) {
	var n int64
	err := s.B.Write(ctx, func(q Querier) error {
		var err error
		n, err = q.Exec(ctx, "DELETE FROM status_page_subscribers WHERE confirmed_at IS NULL AND coalesce(confirmation_sent_at, created_at) < ?", s.D.Time(store.UTC(olderThan)))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune subscribers: %w", err)
	}
	return n, nil
}
