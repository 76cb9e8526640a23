package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// enqueue adds events (and their deliveries) to the outbox inside q, the
// transaction of whatever they announce, in any domain: an event is stored
// exactly when what it announces is.
func (s *db) enqueue(ctx context.Context, q Querier, events []store.OutboxEvent) error {
	for _, e := range events {
		if e.Kind == "" {
			return fmt.Errorf("%w: outbox event needs a kind", store.ErrInvalid)
		}
		if e.ID == "" {
			e.ID = uuid.NewString()
		}
		if e.CreatedAt.IsZero() {
			e.CreatedAt = s.now()
		}
		at := s.D.Time(store.UTC(e.CreatedAt))
		payload := e.Payload
		if len(payload) == 0 {
			payload = json.RawMessage("{}")
		}
		// An event id already stored is the same announcement again (a
		// producer that derives ids from what it announces retried): it is
		// skipped with its deliveries, so it cannot be sent twice.
		n, err := q.Exec(ctx, "INSERT INTO outbox_events (id, namespace, kind, payload, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
			e.ID, e.Namespace, e.Kind, string(payload), at)
		if err != nil {
			return fmt.Errorf("enqueue event: %w", err)
		}
		if n == 0 {
			continue
		}
		for _, ch := range e.Channels {
			if _, err := q.Exec(ctx, `INSERT INTO deliveries (id, event_id, channel_id, status, attempts, next_attempt_at, leased_by, lease_until, last_error, created_at, updated_at)
 VALUES (?, ?, ?, 'pending', 0, ?, '', NULL, '', ?, ?)`, uuid.NewString(), e.ID, ch, at, at, at); err != nil {
				return fmt.Errorf("enqueue delivery: %w", err)
			}
		}
	}
	return nil
}

// EnqueueEvents implements store.Store.
func (s *outboxStore) EnqueueEvents(ctx context.Context, events ...store.OutboxEvent) error {
	if len(events) == 0 {
		return nil
	}
	return s.B.Write(ctx, func(q Querier) error { return s.enqueue(ctx, q, events) })
}

const deliveryCols = `d.id, d.event_id, e.namespace, e.kind, e.payload, d.channel_id, d.status, d.attempts,
 d.next_attempt_at, d.leased_by, d.lease_until, d.last_error, d.created_at, d.updated_at`

const deliveryFrom = " FROM deliveries d JOIN outbox_events e ON e.id = d.event_id"

func (s *outboxStore) queryDeliveries(ctx context.Context, q Querier, sql string, args ...any) ([]store.Delivery, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("query deliveries: %w", err)
	}
	defer rows.Close()
	out := []store.Delivery{}
	for rows.Next() {
		var d store.Delivery
		var payload []byte
		var status string
		if err := rows.Scan(&d.ID, &d.EventID, &d.Namespace, &d.Kind, &payload, &d.ChannelID, &status, &d.Attempts,
			s.D.ScanTime(&d.NextAttemptAt), &d.LeasedBy, s.D.ScanNullTime(&d.LeaseUntil), &d.LastError,
			s.D.ScanTime(&d.CreatedAt), s.D.ScanTime(&d.UpdatedAt)); err != nil {
			return nil, fmt.Errorf("scan delivery: %w", err)
		}
		d.Payload = json.RawMessage(payload)
		d.Status = store.DeliveryStatus(status)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query deliveries: %w", err)
	}
	return out, nil
}

// LeaseDeliveries implements store.Store.
func (s *outboxStore) LeaseDeliveries(ctx context.Context, owner string, n int, leaseFor time.Duration) ([]store.Delivery, error) {
	if owner == "" || n <= 0 || leaseFor <= 0 {
		return nil, fmt.Errorf("%w: lease needs an owner, a count and a duration", store.ErrInvalid)
	}
	now := s.now()
	until := store.UTC(now.Add(leaseFor))
	lock := ""
	if s.D.LockRows {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var out []store.Delivery
	err := s.B.Write(ctx, func(q Querier) error {
		rows, err := q.Query(ctx, `UPDATE deliveries SET leased_by = ?, lease_until = ?, updated_at = ?
 WHERE id IN (SELECT id FROM deliveries WHERE status = 'pending' AND next_attempt_at <= ?
   AND (lease_until IS NULL OR lease_until <= ?) ORDER BY next_attempt_at, id LIMIT ?`+lock+`)
 RETURNING id`, owner, s.D.Time(until), s.D.Time(now), s.D.Time(now), s.D.Time(now), n)
		if err != nil {
			return fmt.Errorf("lease deliveries: %w", err)
		}
		var ids []any
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("lease deliveries: %w", err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("lease deliveries: %w", err)
		}
		if len(ids) == 0 {
			out = []store.Delivery{}
			return nil
		}
		out, err = s.queryDeliveries(ctx, q, "SELECT "+deliveryCols+deliveryFrom+" WHERE d.id IN "+placeholders(len(ids))+
			" ORDER BY d.next_attempt_at, d.id", ids...)
		return err
	})
	return out, err
}

// finishAttempt updates a leased delivery and logs the attempt.
func (s *outboxStore) finishAttempt(ctx context.Context, owner string, a store.DeliveryAttempt, status store.DeliveryStatus, next *time.Time) error {
	now := s.now()
	if a.At.IsZero() {
		a.At = now
	}
	errText := a.Error
	if errText == "" && status != store.DeliveryDelivered {
		errText = fmt.Sprintf("status %d", a.StatusCode)
	}
	lastErr := ""
	if status != store.DeliveryDelivered {
		lastErr = errText
	}
	return s.B.Write(ctx, func(q Querier) error {
		set := "status = ?, attempts = attempts + 1, leased_by = '', lease_until = NULL, last_error = ?, updated_at = ?"
		args := []any{string(status), lastErr, s.D.Time(now)}
		if next != nil {
			set += ", next_attempt_at = ?"
			args = append(args, s.D.Time(store.UTC(*next)))
		}
		args = append(args, a.DeliveryID, owner)
		var attempts int
		err := q.QueryRow(ctx, "UPDATE deliveries SET "+set+" WHERE id = ? AND leased_by = ? AND status = 'pending' RETURNING attempts", args...).Scan(&attempts)
		if err != nil {
			if isNotFound(err) {
				return fmt.Errorf("delivery %s: %w", a.DeliveryID, store.ErrLeaseLost)
			}
			return fmt.Errorf("update delivery: %w", err)
		}
		_, err = q.Exec(ctx, `INSERT INTO delivery_attempts (delivery_id, attempt, at, status_code, excerpt, error, latency_ms)
 VALUES (?, ?, ?, ?, ?, ?, ?)`, a.DeliveryID, attempts, s.D.Time(store.UTC(a.At)), a.StatusCode, a.Excerpt, a.Error, a.LatencyMs)
		if err != nil {
			return fmt.Errorf("log delivery attempt: %w", err)
		}
		return nil
	})
}

// CompleteDelivery implements store.Store.
func (s *outboxStore) CompleteDelivery(ctx context.Context, owner string, a store.DeliveryAttempt) error {
	return s.finishAttempt(ctx, owner, a, store.DeliveryDelivered, nil)
}

// RetryDelivery implements store.Store.
func (s *outboxStore) RetryDelivery(ctx context.Context, owner string, a store.DeliveryAttempt, next time.Time) error {
	return s.finishAttempt(ctx, owner, a, store.DeliveryPending, &next)
}

// FailDelivery implements store.Store.
func (s *outboxStore) FailDelivery(ctx context.Context, owner string, a store.DeliveryAttempt) error {
	return s.finishAttempt(ctx, owner, a, store.DeliveryFailed, nil)
}

// ReleaseDeliveries implements store.Store.
func (s *outboxStore) ReleaseDeliveries(ctx context.Context, owner string, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{s.D.Time(s.now()), owner}
	for _, id := range ids {
		args = append(args, id)
	}
	return s.B.Write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, "UPDATE deliveries SET leased_by = '', lease_until = NULL, updated_at = ?"+
			" WHERE leased_by = ? AND status = 'pending' AND id IN "+placeholders(len(ids)), args...)
		if err != nil {
			return fmt.Errorf("release deliveries: %w", err)
		}
		return nil
	})
}

// GetDelivery implements store.Store.
func (s *outboxStore) GetDelivery(ctx context.Context, id string) (store.Delivery, error) {
	ds, err := s.queryDeliveries(ctx, s.B.Reader(), "SELECT "+deliveryCols+deliveryFrom+" WHERE d.id = ?", id)
	if err != nil {
		return store.Delivery{}, err
	}
	if len(ds) == 0 {
		return store.Delivery{}, fmt.Errorf("delivery %s: %w", id, store.ErrNotFound)
	}
	return ds[0], nil
}

// ListDeliveries implements store.Store.
func (s *outboxStore) ListDeliveries(ctx context.Context, q store.DeliveryQuery) ([]store.Delivery, error) {
	where := []string{"1 = 1"}
	var args []any
	if q.ChannelID != "" {
		where = append(where, "d.channel_id = ?")
		args = append(args, q.ChannelID)
	}
	if q.EventID != "" {
		where = append(where, "d.event_id = ?")
		args = append(args, q.EventID)
	}
	if q.Status != "" {
		where = append(where, "d.status = ?")
		args = append(args, string(q.Status))
	}
	args = append(args, store.Limit(q.Limit, 100, 1000))
	return s.queryDeliveries(ctx, s.B.Reader(), "SELECT "+deliveryCols+deliveryFrom+" WHERE "+strings.Join(where, " AND ")+
		" ORDER BY d.created_at DESC, d.id DESC LIMIT ?", args...)
}

// ListDeliveryAttempts implements store.Store.
func (s *outboxStore) ListDeliveryAttempts(ctx context.Context, deliveryID string) ([]store.DeliveryAttempt, error) {
	rows, err := s.B.Reader().Query(ctx, `SELECT delivery_id, attempt, at, status_code, excerpt, error, latency_ms
 FROM delivery_attempts WHERE delivery_id = ? ORDER BY attempt`, deliveryID)
	if err != nil {
		return nil, fmt.Errorf("list delivery attempts: %w", err)
	}
	defer rows.Close()
	out := []store.DeliveryAttempt{}
	for rows.Next() {
		var a store.DeliveryAttempt
		if err := rows.Scan(&a.DeliveryID, &a.Attempt, s.D.ScanTime(&a.At), &a.StatusCode, &a.Excerpt, &a.Error, &a.LatencyMs); err != nil {
			return nil, fmt.Errorf("scan delivery attempt: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list delivery attempts: %w", err)
	}
	return out, nil
}

// PruneOutbox implements store.Store.
func (s *outboxStore) PruneOutbox(ctx context.Context, olderThan time.Time) (int64, error) {
	var n int64
	err := s.B.Write(ctx, func(q Querier) error {
		var err error
		n, err = q.Exec(ctx, `DELETE FROM outbox_events WHERE created_at < ? AND NOT EXISTS
 (SELECT 1 FROM deliveries d WHERE d.event_id = outbox_events.id AND d.status = 'pending')`, s.D.Time(store.UTC(olderThan)))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune outbox: %w", err)
	}
	return n, nil
}
