package sqlstore

import (
	"context"
	"fmt"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// RecordCertObservation implements store.Store.
func (s *expiryStore) RecordCertObservation(ctx context.Context, o store.CertObservation) error {
	if o.MonitorID == "" || o.NotAfter.IsZero() {
		return fmt.Errorf("%w: certificate observation needs a monitor id and not_after", store.ErrInvalid)
	}
	if o.ObservedAt.IsZero() {
		o.ObservedAt = s.now()
	}
	err := s.B.Write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO cert_observations (monitor_id, region, observed_at, not_after, issuer, subject)
 VALUES (?, ?, ?, ?, ?, ?)
 ON CONFLICT (monitor_id, region) DO UPDATE SET observed_at = excluded.observed_at, not_after = excluded.not_after,
 issuer = excluded.issuer, subject = excluded.subject
 WHERE excluded.observed_at >= cert_observations.observed_at`,
			o.MonitorID, o.Region, s.D.Time(store.UTC(o.ObservedAt)), s.D.Time(store.UTC(o.NotAfter)), o.Issuer, o.Subject)
		return err
	})
	if err != nil {
		return fmt.Errorf("record certificate observation: %w", err)
	}
	return nil
}

// ListCertObservations implements store.Store.
func (s *expiryStore) ListCertObservations(ctx context.Context, monitorID string) ([]store.CertObservation, error) {
	rows, err := s.B.Reader().Query(ctx, `SELECT monitor_id, region, observed_at, not_after, issuer, subject
 FROM cert_observations WHERE monitor_id = ? ORDER BY observed_at DESC, region`, monitorID)
	if err != nil {
		return nil, fmt.Errorf("list certificate observations: %w", err)
	}
	defer rows.Close()
	out := []store.CertObservation{}
	for rows.Next() {
		var o store.CertObservation
		if err := rows.Scan(&o.MonitorID, &o.Region, s.D.ScanTime(&o.ObservedAt), s.D.ScanTime(&o.NotAfter), &o.Issuer, &o.Subject); err != nil {
			return nil, fmt.Errorf("scan certificate observation: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list certificate observations: %w", err)
	}
	return out, nil
}

// PutDomainExpiry implements store.Store.
func (s *expiryStore) PutDomainExpiry(ctx context.Context, d store.DomainExpiry) error {
	if d.Domain == "" {
		return fmt.Errorf("%w: domain expiry needs a domain", store.ErrInvalid)
	}
	if d.CheckedAt.IsZero() {
		d.CheckedAt = s.now()
	}
	err := s.B.Write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO domain_expiry (domain, checked_at, expires_at, registrar, error) VALUES (?, ?, ?, ?, ?)
 ON CONFLICT (domain) DO UPDATE SET checked_at = excluded.checked_at, expires_at = excluded.expires_at,
 registrar = excluded.registrar, error = excluded.error`,
			d.Domain, s.D.Time(store.UTC(d.CheckedAt)), s.nullTime(d.ExpiresAt), d.Registrar, d.Error)
		return err
	})
	if err != nil {
		return fmt.Errorf("put domain expiry: %w", err)
	}
	return nil
}

// GetDomainExpiry implements store.Store.
func (s *expiryStore) GetDomainExpiry(ctx context.Context, domain string) (store.DomainExpiry, error) {
	var d store.DomainExpiry
	err := s.B.Reader().QueryRow(ctx, "SELECT domain, checked_at, expires_at, registrar, error FROM domain_expiry WHERE domain = ?", domain).
		Scan(&d.Domain, s.D.ScanTime(&d.CheckedAt), s.D.ScanNullTime(&d.ExpiresAt), &d.Registrar, &d.Error)
	if err != nil {
		if isNotFound(err) {
			return d, err
		}
		return d, fmt.Errorf("get domain expiry: %w", err)
	}
	return d, nil
}

// RecordExpiryNotice implements store.Store.
func (s *expiryStore) RecordExpiryNotice(ctx context.Context, n store.ExpiryNotice, events ...store.OutboxEvent) (bool, error) {
	if n.MonitorID == "" || n.Kind == "" || n.Stage == "" || n.ExpiresAt.IsZero() {
		return false, fmt.Errorf("%w: expiry notice needs monitor, kind, stage and expiry date", store.ErrInvalid)
	}
	if n.SentAt.IsZero() {
		n.SentAt = s.now()
	}
	inserted := false
	err := s.B.Write(ctx, func(q Querier) error {
		affected, err := q.Exec(ctx, `INSERT INTO expiry_notices (monitor_id, kind, expires_at, stage, sent_at) VALUES (?, ?, ?, ?, ?)
 ON CONFLICT DO NOTHING`, n.MonitorID, n.Kind, s.D.Time(store.UTC(n.ExpiresAt)), n.Stage, s.D.Time(store.UTC(n.SentAt)))
		if err != nil {
			return err
		}
		if affected == 0 {
			return nil
		}
		inserted = true
		return s.enqueue(ctx, q, events)
	})
	if err != nil {
		return false, fmt.Errorf("record expiry notice: %w", err)
	}
	return inserted, nil
}

// ListExpiryNotices implements store.Store.
func (s *expiryStore) ListExpiryNotices(ctx context.Context, monitorID string) ([]store.ExpiryNotice, error) {
	rows, err := s.B.Reader().Query(ctx, `SELECT monitor_id, kind, expires_at, stage, sent_at FROM expiry_notices
 WHERE monitor_id = ? ORDER BY sent_at DESC, kind, stage LIMIT 200`, monitorID)
	if err != nil {
		return nil, fmt.Errorf("list expiry notices: %w", err)
	}
	defer rows.Close()
	out := []store.ExpiryNotice{}
	for rows.Next() {
		var n store.ExpiryNotice
		if err := rows.Scan(&n.MonitorID, &n.Kind, s.D.ScanTime(&n.ExpiresAt), &n.Stage, s.D.ScanTime(&n.SentAt)); err != nil {
			return nil, fmt.Errorf("scan expiry notice: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list expiry notices: %w", err)
	}
	return out, nil
}
