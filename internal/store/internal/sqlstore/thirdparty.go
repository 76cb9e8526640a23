package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

const thirdPartySubCols = "id, namespace, provider_id, component_ids, keywords, notify, notify_maintenance, min_severity, created_at, updated_at"

func (s *thirdPartyStore) scanThirdPartySub(r interface{ Scan(...any) error }) (store.ThirdPartySubscription, error) {
	var sub store.ThirdPartySubscription
	var comps, kws []byte
	err := r.Scan(&sub.ID, &sub.Namespace, &sub.ProviderID, &comps, &kws, &sub.Notify, &sub.NotifyMaintenance,
		&sub.MinSeverity, s.D.ScanTime(&sub.CreatedAt), s.D.ScanTime(&sub.UpdatedAt))
	if err != nil {
		return sub, err
	}
	if sub.ComponentIDs, err = parseList(comps); err != nil {
		return sub, err
	}
	sub.Keywords, err = parseList(kws)
	return sub, err
}

func (s *thirdPartyStore) getThirdPartySub(ctx context.Context, q Querier, where string, args ...any) (store.ThirdPartySubscription, error) {
	sub, err := s.scanThirdPartySub(q.QueryRow(ctx, "SELECT "+thirdPartySubCols+" FROM third_party_subscriptions WHERE "+where, args...))
	if err != nil && !isNotFound(err) {
		return sub, fmt.Errorf("get third-party subscription: %w", err)
	}
	return sub, err
}

// InsertThirdPartySubscription implements store.Store.
func (s *thirdPartyStore) InsertThirdPartySubscription(ctx context.Context, sub store.ThirdPartySubscription) (store.ThirdPartySubscription, error) {
	if sub.Namespace == "" || sub.ProviderID == "" {
		return sub, fmt.Errorf("%w: third-party subscription needs a namespace and a provider", store.ErrInvalid)
	}
	if sub.ID == "" {
		sub.ID = uuid.NewString()
	}
	now := s.now()
	if sub.CreatedAt.IsZero() {
		sub.CreatedAt = now
	}
	if sub.UpdatedAt.IsZero() {
		sub.UpdatedAt = sub.CreatedAt
	}
	sub.CreatedAt, sub.UpdatedAt = store.UTC(sub.CreatedAt), store.UTC(sub.UpdatedAt)
	sub.ComponentIDs, sub.Keywords = nonNilList(sub.ComponentIDs), nonNilList(sub.Keywords)
	var existing store.ThirdPartySubscription
	err := s.B.Write(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, "INSERT INTO third_party_subscriptions ("+thirdPartySubCols+") VALUES "+placeholders(10)+
			" ON CONFLICT (namespace, provider_id) DO NOTHING",
			sub.ID, sub.Namespace, sub.ProviderID, jsonList(sub.ComponentIDs), jsonList(sub.Keywords), sub.Notify,
			sub.NotifyMaintenance, sub.MinSeverity, s.D.Time(sub.CreatedAt), s.D.Time(sub.UpdatedAt))
		if err != nil {
			return fmt.Errorf("insert third-party subscription: %w", err)
		}
		if n == 0 {
			existing, err = s.getThirdPartySub(ctx, q, "namespace = ? AND provider_id = ?", sub.Namespace, sub.ProviderID)
			if err != nil {
				return err
			}
			return store.ErrSubscriptionExists
		}
		return nil
	})
	if errors.Is(err, store.ErrSubscriptionExists) {
		return existing, err
	}
	return sub, err
}

func nonNilList(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// GetThirdPartySubscription implements store.Store.
func (s *thirdPartyStore) GetThirdPartySubscription(ctx context.Context, id string) (store.ThirdPartySubscription, error) {
	return s.getThirdPartySub(ctx, s.B.Reader(), "id = ?", id)
}

// ListThirdPartySubscriptions implements store.Store.
func (s *thirdPartyStore) ListThirdPartySubscriptions(ctx context.Context, namespace string) ([]store.ThirdPartySubscription, error) {
	return listInNamespace(ctx, s.db, "third_party_subscriptions", thirdPartySubCols, namespace, "third-party subscriptions", s.scanThirdPartySub)
}

// UpdateThirdPartySubscription implements store.Store.
func (s *thirdPartyStore) UpdateThirdPartySubscription(ctx context.Context, sub store.ThirdPartySubscription) (store.ThirdPartySubscription, error) {
	if sub.UpdatedAt.IsZero() {
		sub.UpdatedAt = s.now()
	}
	sub.UpdatedAt = store.UTC(sub.UpdatedAt)
	var out store.ThirdPartySubscription
	err := s.B.Write(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, `UPDATE third_party_subscriptions SET component_ids = ?, keywords = ?, notify = ?, notify_maintenance = ?,
 min_severity = ?, updated_at = ? WHERE id = ?`, jsonList(sub.ComponentIDs), jsonList(sub.Keywords), sub.Notify,
			sub.NotifyMaintenance, sub.MinSeverity, s.D.Time(sub.UpdatedAt), sub.ID)
		if err != nil {
			return fmt.Errorf("update third-party subscription: %w", err)
		}
		if n == 0 {
			return store.ErrNotFound
		}
		out, err = s.getThirdPartySub(ctx, q, "id = ?", sub.ID)
		return err
	})
	return out, err
}

// DeleteThirdPartySubscription implements store.Store.
func (s *thirdPartyStore) DeleteThirdPartySubscription(ctx context.Context, id string) error {
	return s.B.Write(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, "DELETE FROM third_party_subscriptions WHERE id = ?", id)
		if err != nil {
			return fmt.Errorf("delete third-party subscription: %w", err)
		}
		if n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

// GetThirdPartyState implements store.Store.
func (s *thirdPartyStore) GetThirdPartyState(ctx context.Context, providerID string) (store.ThirdPartyState, error) {
	var st store.ThirdPartyState
	var snap []byte
	err := s.B.Reader().QueryRow(ctx, `SELECT provider_id, etag, last_modified, snapshot, polled_at, changed_at, error
 FROM third_party_state WHERE provider_id = ?`, providerID).Scan(&st.ProviderID, &st.ETag, &st.LastModified, &snap,
		s.D.ScanTime(&st.PolledAt), s.D.ScanNullTime(&st.ChangedAt), &st.Error)
	if err != nil {
		if isNotFound(err) {
			return st, err
		}
		return st, fmt.Errorf("get third-party state: %w", err)
	}
	if len(snap) > 0 {
		st.Snapshot = json.RawMessage(snap)
	}
	return st, nil
}

// PutThirdPartyState implements store.Store.
func (s *thirdPartyStore) PutThirdPartyState(ctx context.Context, st store.ThirdPartyState, events ...store.OutboxEvent) error {
	if st.ProviderID == "" {
		return fmt.Errorf("%w: third-party state needs a provider", store.ErrInvalid)
	}
	if st.PolledAt.IsZero() {
		st.PolledAt = s.now()
	}
	err := s.B.Write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO third_party_state (provider_id, etag, last_modified, snapshot, polled_at, changed_at, error)
 VALUES (?, ?, ?, ?, ?, ?, ?)
 ON CONFLICT (provider_id) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified,
 snapshot = excluded.snapshot, polled_at = excluded.polled_at, changed_at = excluded.changed_at, error = excluded.error`,
			st.ProviderID, st.ETag, st.LastModified, jsonArg(st.Snapshot), s.D.Time(store.UTC(st.PolledAt)), s.nullTime(st.ChangedAt), st.Error)
		if err != nil {
			return err
		}
		return s.enqueue(ctx, q, events)
	})
	if err != nil {
		return fmt.Errorf("put third-party state: %w", err)
	}
	return nil
}

// GetThirdPartyPage implements store.Store.
func (s *thirdPartyStore) GetThirdPartyPage(ctx context.Context, pageUID string) (store.ThirdPartyPage, error) {
	p, err := s.scanThirdPartyPage(s.B.Reader().QueryRow(ctx, "SELECT page_uid, namespace, services, updated_at FROM third_party_pages WHERE page_uid = ?", pageUID))
	switch {
	case isNotFound(err):
		return store.ThirdPartyPage{PageUID: pageUID, Services: []store.ThirdPartyService{}}, nil
	case err != nil:
		return p, fmt.Errorf("get third-party page services: %w", err)
	}
	return p, nil
}

// ListThirdPartyPages implements store.Store.
func (s *thirdPartyStore) ListThirdPartyPages(ctx context.Context) ([]store.ThirdPartyPage, error) {
	rows, err := s.B.Reader().Query(ctx, "SELECT page_uid, namespace, services, updated_at FROM third_party_pages ORDER BY page_uid")
	if err != nil {
		return nil, fmt.Errorf("list third-party page services: %w", err)
	}
	defer rows.Close()
	out := []store.ThirdPartyPage{}
	for rows.Next() {
		p, err := s.scanThirdPartyPage(rows)
		if err != nil {
			return nil, fmt.Errorf("list third-party page services: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list third-party page services: %w", err)
	}
	return out, nil
}

func (s *thirdPartyStore) scanThirdPartyPage(row interface{ Scan(...any) error }) (store.ThirdPartyPage, error) {
	p := store.ThirdPartyPage{Services: []store.ThirdPartyService{}}
	var raw []byte
	if err := row.Scan(&p.PageUID, &p.Namespace, &raw, s.D.ScanTime(&p.UpdatedAt)); err != nil {
		return p, err
	}
	if err := json.Unmarshal(raw, &p.Services); err != nil {
		return p, fmt.Errorf("decode third-party page services: %w", err)
	}
	return p, nil
}

// PutThirdPartyPage implements store.Store.
func (s *thirdPartyStore) PutThirdPartyPage(ctx context.Context, p store.ThirdPartyPage) (store.ThirdPartyPage, error) {
	if p.PageUID == "" {
		return p, fmt.Errorf("%w: third-party page services need a page", store.ErrInvalid)
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = s.now()
	}
	p.UpdatedAt = store.UTC(p.UpdatedAt)
	if p.Services == nil {
		p.Services = []store.ThirdPartyService{}
	}
	for i := range p.Services {
		p.Services[i].ComponentIDs = nonNilList(p.Services[i].ComponentIDs)
	}
	raw, err := json.Marshal(p.Services)
	if err != nil {
		return p, fmt.Errorf("encode third-party page services: %w", err)
	}
	err = s.B.Write(ctx, func(q Querier) error {
		if len(p.Services) == 0 {
			_, err := q.Exec(ctx, "DELETE FROM third_party_pages WHERE page_uid = ?", p.PageUID)
			return err
		}
		_, err := q.Exec(ctx, `INSERT INTO third_party_pages (page_uid, namespace, services, updated_at) VALUES (?, ?, ?, ?)
 ON CONFLICT (page_uid) DO UPDATE SET namespace = excluded.namespace, services = excluded.services, updated_at = excluded.updated_at`,
			p.PageUID, p.Namespace, string(raw), s.D.Time(p.UpdatedAt))
		return err
	})
	if err != nil {
		return p, fmt.Errorf("put third-party page services: %w", err)
	}
	return p, nil
}
