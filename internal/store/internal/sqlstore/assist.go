package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// PutAIContent implements store.Store.
func (s *assistStore) PutAIContent(ctx context.Context, c store.AIContent) (store.AIContent, error) {
	if c.IncidentID == "" || c.Kind == "" {
		return c, fmt.Errorf("%w: AI content needs an incident and a kind", store.ErrInvalid)
	}
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = s.now()
	}
	c.UpdatedAt = store.UTC(c.UpdatedAt)
	err := s.B.Write(ctx, func(q Querier) error {
		if _, err := s.incidents.getIncident(ctx, q, c.IncidentID); err != nil {
			return err
		}
		_, err := q.Exec(ctx, `INSERT INTO ai_content (incident_id, kind, namespace, body, model, updated_at) VALUES (?, ?, ?, ?, ?, ?)
 ON CONFLICT (incident_id, kind) DO UPDATE SET namespace = excluded.namespace, body = excluded.body,
 model = excluded.model, updated_at = excluded.updated_at`,
			c.IncidentID, c.Kind, c.Namespace, c.Body, c.Model, s.D.Time(c.UpdatedAt))
		return err
	})
	if err != nil {
		if isNotFound(err) {
			return c, err
		}
		return c, fmt.Errorf("put AI content: %w", err)
	}
	return c, nil
}

// ListAIContent implements store.Store.
func (s *assistStore) ListAIContent(ctx context.Context, incidentID string) ([]store.AIContent, error) {
	rows, err := s.B.Reader().Query(ctx, `SELECT incident_id, kind, namespace, body, model, updated_at FROM ai_content
 WHERE incident_id = ? ORDER BY kind`, incidentID)
	if err != nil {
		return nil, fmt.Errorf("list AI content: %w", err)
	}
	defer rows.Close()
	out := []store.AIContent{}
	for rows.Next() {
		var c store.AIContent
		if err := rows.Scan(&c.IncidentID, &c.Kind, &c.Namespace, &c.Body, &c.Model, s.D.ScanTime(&c.UpdatedAt)); err != nil {
			return nil, fmt.Errorf("scan AI content: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list AI content: %w", err)
	}
	return out, nil
}

const draftCols = "id, namespace, incident_id, phase, body, guidance, model, status, note_id, created_at, updated_at"

func (s *assistStore) scanDraft(r interface{ Scan(...any) error }) (store.AIDraft, error) {
	var d store.AIDraft
	var status string
	err := r.Scan(&d.ID, &d.Namespace, &d.IncidentID, &d.Phase, &d.Body, &d.Guidance, &d.Model, &status, &d.NoteID,
		s.D.ScanTime(&d.CreatedAt), s.D.ScanTime(&d.UpdatedAt))
	d.Status = store.AIDraftStatus(status)
	return d, err
}

func (s *assistStore) getDraft(ctx context.Context, q Querier, id string) (store.AIDraft, error) {
	d, err := s.scanDraft(q.QueryRow(ctx, "SELECT "+draftCols+" FROM ai_drafts WHERE id = ?", id))
	if err != nil && !isNotFound(err) {
		return d, fmt.Errorf("get AI draft: %w", err)
	}
	return d, err
}

// InsertAIDraft implements store.Store.
func (s *assistStore) InsertAIDraft(ctx context.Context, d store.AIDraft) (store.AIDraft, error) {
	if d.IncidentID == "" {
		return d, fmt.Errorf("%w: AI draft needs an incident", store.ErrInvalid)
	}
	if d.ID == "" {
		d.ID = uuid.NewString()
	}
	if d.Status == "" {
		d.Status = store.AIDraftOpen
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = s.now()
	}
	d.CreatedAt = store.UTC(d.CreatedAt)
	if d.UpdatedAt.IsZero() {
		d.UpdatedAt = d.CreatedAt
	}
	d.UpdatedAt = store.UTC(d.UpdatedAt)
	err := s.B.Write(ctx, func(q Querier) error {
		if _, err := s.incidents.getIncident(ctx, q, d.IncidentID); err != nil {
			return err
		}
		_, err := q.Exec(ctx, "INSERT INTO ai_drafts ("+draftCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			d.ID, d.Namespace, d.IncidentID, d.Phase, d.Body, d.Guidance, d.Model, string(d.Status), d.NoteID,
			s.D.Time(d.CreatedAt), s.D.Time(d.UpdatedAt))
		return err
	})
	if err != nil {
		if isNotFound(err) {
			return d, err
		}
		return d, fmt.Errorf("insert AI draft: %w", err)
	}
	return d, nil
}

// GetAIDraft implements store.Store.
func (s *assistStore) GetAIDraft(ctx context.Context, id string) (store.AIDraft, error) {
	return s.getDraft(ctx, s.B.Reader(), id)
}

// ListAIDrafts implements store.Store.
func (s *assistStore) ListAIDrafts(ctx context.Context, incidentID string) ([]store.AIDraft, error) {
	rows, err := s.B.Reader().Query(ctx, "SELECT "+draftCols+" FROM ai_drafts WHERE incident_id = ? ORDER BY created_at DESC, id DESC", incidentID)
	if err != nil {
		return nil, fmt.Errorf("list AI drafts: %w", err)
	}
	defer rows.Close()
	out := []store.AIDraft{}
	for rows.Next() {
		d, err := s.scanDraft(rows)
		if err != nil {
			return nil, fmt.Errorf("scan AI draft: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list AI drafts: %w", err)
	}
	return out, nil
}

// UpdateAIDraft implements store.Store.
func (s *assistStore) UpdateAIDraft(ctx context.Context, d store.AIDraft, from store.AIDraftStatus) (store.AIDraft, error) {
	var out store.AIDraft
	err := s.B.Write(ctx, func(q Querier) error {
		cur, err := s.lockDraft(ctx, q, d.ID, from)
		if err != nil {
			return err
		}
		cur.Phase, cur.Body, cur.Status = d.Phase, d.Body, d.Status
		if cur.Status == "" {
			cur.Status = from
		}
		cur.UpdatedAt = s.now()
		if _, err := q.Exec(ctx, "UPDATE ai_drafts SET phase = ?, body = ?, status = ?, updated_at = ? WHERE id = ?",
			cur.Phase, cur.Body, string(cur.Status), s.D.Time(cur.UpdatedAt), cur.ID); err != nil {
			return fmt.Errorf("update AI draft: %w", err)
		}
		out = cur
		return nil
	})
	return out, err
}

// lockDraft reads draft id for a change (locking the row where writers
// compete) and checks that its status is from.
func (s *assistStore) lockDraft(ctx context.Context, q Querier, id string, from store.AIDraftStatus) (store.AIDraft, error) {
	sql := "SELECT " + draftCols + " FROM ai_drafts WHERE id = ?"
	if s.D.LockRows {
		sql += " FOR UPDATE"
	}
	cur, err := s.scanDraft(q.QueryRow(ctx, sql, id))
	if err != nil {
		if isNotFound(err) {
			return cur, err
		}
		return cur, fmt.Errorf("get AI draft: %w", err)
	}
	if cur.Status != from {
		return cur, store.ErrDraftState
	}
	return cur, nil
}

// PublishAIDraft implements store.Store.
func (s *assistStore) PublishAIDraft(ctx context.Context, id, author string, at time.Time) (store.AIDraft, store.Note, error) {
	var d store.AIDraft
	var n store.Note
	if at.IsZero() {
		at = s.now()
	}
	at = store.UTC(at)
	err := s.B.Write(ctx, func(q Querier) error {
		var err error
		if d, err = s.lockDraft(ctx, q, id, store.AIDraftOpen); err != nil {
			return err
		}
		if _, err := s.incidents.getIncident(ctx, q, d.IncidentID); err != nil {
			return err
		}
		if n, err = s.incidents.addNote(ctx, q, store.Note{IncidentID: d.IncidentID, Body: d.Body, Public: true, Author: author, CreatedAt: at}); err != nil {
			return err
		}
		d.Status, d.NoteID, d.UpdatedAt = store.AIDraftPublished, n.ID, at
		if _, err := q.Exec(ctx, "UPDATE ai_drafts SET status = ?, note_id = ?, updated_at = ? WHERE id = ?",
			string(d.Status), d.NoteID, s.D.Time(at), d.ID); err != nil {
			return fmt.Errorf("mark AI draft published: %w", err)
		}
		return nil
	})
	return d, n, err
}

// AddAIUsage implements store.Store.
func (s *assistStore) AddAIUsage(ctx context.Context, namespace, period string, delta, limit int) (int, bool, error) {
	if limit > 0 && delta > limit {
		used, err := s.AIUsage(ctx, namespace, period)
		return used, false, err
	}
	used, ok := 0, false
	err := s.B.Write(ctx, func(q Querier) error {
		var err error
		if delta < 0 {
			_, err = q.Exec(ctx, `UPDATE ai_usage SET used = CASE WHEN used + ? < 0 THEN 0 ELSE used + ? END
 WHERE namespace = ? AND period = ?`, delta, delta, namespace, period)
			if err != nil {
				return err
			}
			ok = true
			used, err = usageIn(ctx, q, namespace, period)
			return err
		}
		err = q.QueryRow(ctx, `INSERT INTO ai_usage (namespace, period, used) VALUES (?, ?, ?)
 ON CONFLICT (namespace, period) DO UPDATE SET used = ai_usage.used + excluded.used
 WHERE ? <= 0 OR ai_usage.used + excluded.used <= ?
 RETURNING used`, namespace, period, delta, limit, limit).Scan(&used)
		switch {
		case err == nil:
			ok = true
			return nil
		case isNotFound(err):
			used, err = usageIn(ctx, q, namespace, period)
			return err
		}
		return err
	})
	if err != nil {
		return used, false, fmt.Errorf("count AI usage: %w", err)
	}
	return used, ok, nil
}

// AIUsage implements store.Store.
func (s *assistStore) AIUsage(ctx context.Context, namespace, period string) (int, error) {
	used, err := usageIn(ctx, s.B.Reader(), namespace, period)
	if err != nil {
		return 0, fmt.Errorf("read AI usage: %w", err)
	}
	return used, nil
}

func usageIn(ctx context.Context, q Querier, namespace, period string) (int, error) {
	var used int64
	err := q.QueryRow(ctx, "SELECT used FROM ai_usage WHERE namespace = ? AND period = ?", namespace, period).Scan(&used)
	if isNotFound(err) {
		return 0, nil
	}
	return int(used), err
}
