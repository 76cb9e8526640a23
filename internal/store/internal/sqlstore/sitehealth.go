package sqlstore

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

const healthSiteCols = `id, namespace, name, url, max_pages, max_depth, check_external_links, perf_audit_enabled,
 perf_audit_urls, perf_audit_form_factor, schedule, notify_on_issues, score_drop_thresh, is_active, created_at, updated_at`

func (s *siteHealthStore) scanHealthSite(r interface{ Scan(...any) error }) (store.HealthSite, error) {
	var h store.HealthSite
	var urls []byte
	err := r.Scan(&h.ID, &h.Namespace, &h.Name, &h.URL, &h.MaxPages, &h.MaxDepth, &h.CheckExternalLinks, &h.PerfAuditEnabled,
		&urls, &h.PerfAuditFormFactor, &h.Schedule, &h.NotifyOnIssues, &h.ScoreDropThresh, &h.IsActive,
		s.D.ScanTime(&h.CreatedAt), s.D.ScanTime(&h.UpdatedAt))
	if err != nil {
		return h, err
	}
	h.PerfAuditURLs, err = parseList(urls)
	return h, err
}

// CreateHealthSite implements store.Store.
func (s *siteHealthStore) CreateHealthSite(ctx context.Context, h store.HealthSite) (store.HealthSite, error) {
	if h.Namespace == "" || h.URL == "" {
		return h, fmt.Errorf("%w: website health site needs a namespace and a url", store.ErrInvalid)
	}
	if h.ID == "" {
		h.ID = uuid.NewString()
	}
	if h.CreatedAt.IsZero() {
		h.CreatedAt = s.now()
	}
	h.CreatedAt = store.UTC(h.CreatedAt)
	if h.UpdatedAt.IsZero() {
		h.UpdatedAt = h.CreatedAt
	}
	h.UpdatedAt = store.UTC(h.UpdatedAt)
	if h.PerfAuditURLs == nil {
		h.PerfAuditURLs = []string{}
	}
	err := s.B.Write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, "INSERT INTO health_sites ("+healthSiteCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			h.ID, h.Namespace, h.Name, h.URL, h.MaxPages, h.MaxDepth, h.CheckExternalLinks, h.PerfAuditEnabled,
			jsonList(h.PerfAuditURLs), h.PerfAuditFormFactor, h.Schedule, h.NotifyOnIssues, h.ScoreDropThresh, h.IsActive,
			s.D.Time(h.CreatedAt), s.D.Time(h.UpdatedAt))
		return err
	})
	if err != nil {
		return h, fmt.Errorf("create website health site: %w", err)
	}
	return h, nil
}

// GetHealthSite implements store.Store.
func (s *siteHealthStore) GetHealthSite(ctx context.Context, id string) (store.HealthSite, error) {
	h, err := s.scanHealthSite(s.B.Reader().QueryRow(ctx, "SELECT "+healthSiteCols+" FROM health_sites WHERE id = ?", id))
	if err != nil && !isNotFound(err) {
		return h, fmt.Errorf("get website health site: %w", err)
	}
	return h, err
}

// ListHealthSites implements store.Store.
func (s *siteHealthStore) ListHealthSites(ctx context.Context, namespace string) ([]store.HealthSite, error) {
	return listInNamespace(ctx, s.db, "health_sites", healthSiteCols, namespace, "website health sites", s.scanHealthSite)
}

// UpdateHealthSite implements store.Store.
func (s *siteHealthStore) UpdateHealthSite(ctx context.Context, h store.HealthSite) (store.HealthSite, error) {
	if h.PerfAuditURLs == nil {
		h.PerfAuditURLs = []string{}
	}
	h.UpdatedAt = s.now()
	var out store.HealthSite
	err := s.B.Write(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, `UPDATE health_sites SET name = ?, url = ?, max_pages = ?, max_depth = ?, check_external_links = ?,
 perf_audit_enabled = ?, perf_audit_urls = ?, perf_audit_form_factor = ?, schedule = ?, notify_on_issues = ?,
 score_drop_thresh = ?, is_active = ?, updated_at = ? WHERE id = ?`,
			h.Name, h.URL, h.MaxPages, h.MaxDepth, h.CheckExternalLinks, h.PerfAuditEnabled, jsonList(h.PerfAuditURLs),
			h.PerfAuditFormFactor, h.Schedule, h.NotifyOnIssues, h.ScoreDropThresh, h.IsActive, s.D.Time(h.UpdatedAt), h.ID)
		if err != nil {
			return fmt.Errorf("update website health site: %w", err)
		}
		if n == 0 {
			return store.ErrNotFound
		}
		out, err = s.scanHealthSite(q.QueryRow(ctx, "SELECT "+healthSiteCols+" FROM health_sites WHERE id = ?", h.ID))
		return err
	})
	return out, err
}

// DeleteHealthSite implements store.Store.
func (s *siteHealthStore) DeleteHealthSite(ctx context.Context, id string) error {
	return s.B.Write(ctx, func(q Querier) error {
		if _, err := q.Exec(ctx, "DELETE FROM health_issues WHERE run_id IN (SELECT id FROM health_runs WHERE site_id = ?)", id); err != nil {
			return fmt.Errorf("delete website health issues: %w", err)
		}
		if _, err := q.Exec(ctx, "DELETE FROM health_runs WHERE site_id = ?", id); err != nil {
			return fmt.Errorf("delete website health runs: %w", err)
		}
		n, err := q.Exec(ctx, "DELETE FROM health_sites WHERE id = ?", id)
		if err != nil {
			return fmt.Errorf("delete website health site: %w", err)
		}
		if n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

const healthRunCols = "id, site_id, namespace, run_trigger, status, started_at, finished_at, score, summary, error"

func (s *siteHealthStore) scanHealthRun(r interface{ Scan(...any) error }) (store.HealthRun, error) {
	var h store.HealthRun
	var score *int64
	var summary []byte
	err := r.Scan(&h.ID, &h.SiteID, &h.Namespace, &h.Trigger, &h.Status, s.D.ScanTime(&h.StartedAt),
		s.D.ScanNullTime(&h.FinishedAt), &score, &summary, &h.Error)
	if score != nil {
		v := int(*score)
		h.Score = &v
	}
	if len(summary) > 0 {
		h.Summary = append([]byte(nil), summary...)
	}
	return h, err
}

// StartHealthRun implements store.Store.
func (s *siteHealthStore) StartHealthRun(ctx context.Context, r store.HealthRun) (store.HealthRun, error) {
	if r.SiteID == "" {
		return r, fmt.Errorf("%w: website health run needs a site", store.ErrInvalid)
	}
	if r.ID == "" {
		r.ID = uuid.NewString()
	}
	if r.StartedAt.IsZero() {
		r.StartedAt = s.now()
	}
	r.StartedAt = store.UTC(r.StartedAt)
	if r.Status == "" {
		r.Status = store.HealthRunRunning
	}
	err := s.B.Write(ctx, func(q Querier) error {
		site, err := s.scanHealthSite(q.QueryRow(ctx, "SELECT "+healthSiteCols+" FROM health_sites WHERE id = ?", r.SiteID))
		if err != nil {
			return err
		}
		r.Namespace = site.Namespace
		_, err = q.Exec(ctx, "INSERT INTO health_runs ("+healthRunCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			r.ID, r.SiteID, r.Namespace, r.Trigger, r.Status, s.D.Time(r.StartedAt), s.nullTime(r.FinishedAt),
			r.Score, jsonArg(r.Summary), r.Error)
		return err
	})
	if err != nil {
		if isNotFound(err) {
			return r, err
		}
		return r, fmt.Errorf("start website health run: %w", err)
	}
	return r, nil
}

// FinishHealthRun implements store.Store.
func (s *siteHealthStore) FinishHealthRun(ctx context.Context, r store.HealthRun, issues []store.HealthIssue, events ...store.OutboxEvent) (store.HealthRun, error) {
	if r.Status == "" || r.Status == store.HealthRunRunning {
		return r, fmt.Errorf("%w: a finished website health run needs a final status", store.ErrInvalid)
	}
	if r.FinishedAt == nil {
		now := s.now()
		r.FinishedAt = &now
	}
	var out store.HealthRun
	err := s.B.Write(ctx, func(q Querier) error {
		sql := "SELECT " + healthRunCols + " FROM health_runs WHERE id = ?"
		if s.D.LockRows {
			sql += " FOR UPDATE"
		}
		cur, err := s.scanHealthRun(q.QueryRow(ctx, sql, r.ID))
		if err != nil {
			return err
		}
		if cur.Status != store.HealthRunRunning {
			return store.ErrHealthRunFinished
		}
		cur.Status, cur.FinishedAt, cur.Score, cur.Summary, cur.Error = r.Status, r.FinishedAt, r.Score, r.Summary, r.Error
		if _, err := q.Exec(ctx, "UPDATE health_runs SET status = ?, finished_at = ?, score = ?, summary = ?, error = ? WHERE id = ?",
			cur.Status, s.nullTime(cur.FinishedAt), cur.Score, jsonArg(cur.Summary), cur.Error, cur.ID); err != nil {
			return fmt.Errorf("update website health run: %w", err)
		}
		for i, is := range issues {
			if _, err := q.Exec(ctx, "INSERT INTO health_issues (run_id, seq, kind, url, source_url, detail) VALUES (?, ?, ?, ?, ?, ?)",
				cur.ID, i, is.Kind, is.URL, is.SourceURL, is.Detail); err != nil {
				return fmt.Errorf("insert website health issue: %w", err)
			}
		}
		out = cur
		return s.enqueue(ctx, q, events)
	})
	return out, err
}

// GetHealthRun implements store.Store.
func (s *siteHealthStore) GetHealthRun(ctx context.Context, id string) (store.HealthRun, error) {
	r, err := s.scanHealthRun(s.B.Reader().QueryRow(ctx, "SELECT "+healthRunCols+" FROM health_runs WHERE id = ?", id))
	if err != nil && !isNotFound(err) {
		return r, fmt.Errorf("get website health run: %w", err)
	}
	return r, err
}

// ListHealthRuns implements store.Store.
func (s *siteHealthStore) ListHealthRuns(ctx context.Context, siteID string, limit int) ([]store.HealthRun, error) {
	sql := "SELECT " + healthRunCols + " FROM health_runs WHERE site_id = ? ORDER BY started_at DESC, id DESC"
	args := []any{siteID}
	if limit > 0 {
		sql += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := s.B.Reader().Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("list website health runs: %w", err)
	}
	defer rows.Close()
	out := []store.HealthRun{}
	for rows.Next() {
		r, err := s.scanHealthRun(rows)
		if err != nil {
			return nil, fmt.Errorf("scan website health run: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list website health runs: %w", err)
	}
	return out, nil
}

// ListHealthIssues implements store.Store.
func (s *siteHealthStore) ListHealthIssues(ctx context.Context, runID string) ([]store.HealthIssue, error) {
	rows, err := s.B.Reader().Query(ctx, "SELECT run_id, kind, url, source_url, detail FROM health_issues WHERE run_id = ? ORDER BY seq", runID)
	if err != nil {
		return nil, fmt.Errorf("list website health issues: %w", err)
	}
	defer rows.Close()
	out := []store.HealthIssue{}
	for rows.Next() {
		var is store.HealthIssue
		if err := rows.Scan(&is.RunID, &is.Kind, &is.URL, &is.SourceURL, &is.Detail); err != nil {
			return nil, fmt.Errorf("scan website health issue: %w", err)
		}
		out = append(out, is)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list website health issues: %w", err)
	}
	return out, nil
}

// PruneHealthRuns implements store.Store.
func (s *siteHealthStore) PruneHealthRuns(ctx context.Context, siteID string, keep int) (int64, error) {
	keep = max(keep, 0)
	var deleted int64
	err := s.B.Write(ctx, func(q Querier) error {
		const old = `SELECT id FROM health_runs WHERE site_id = ? AND status <> ? AND id NOT IN
 (SELECT id FROM health_runs WHERE site_id = ? ORDER BY started_at DESC, id DESC LIMIT ?)`
		args := []any{siteID, store.HealthRunRunning, siteID, keep}
		if _, err := q.Exec(ctx, "DELETE FROM health_issues WHERE run_id IN ("+old+")", args...); err != nil {
			return fmt.Errorf("prune website health issues: %w", err)
		}
		n, err := q.Exec(ctx, "DELETE FROM health_runs WHERE id IN ("+old+")", args...)
		if err != nil {
			return fmt.Errorf("prune website health runs: %w", err)
		}
		deleted = n
		return nil
	})
	return deleted, err
}
