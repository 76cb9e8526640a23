package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ErrHealthRunFinished means a website health run was already finished when
// another finish was attempted (a stale run closed by the scheduler, then
// finished by the crawl).
var ErrHealthRunFinished = errors.New("store: website health run already finished")

// Website health schedules.
const (
	HealthScheduleDaily  = "daily"
	HealthScheduleWeekly = "weekly"
	HealthScheduleManual = "manual"
)

// Website health audit form factors.
const (
	HealthFormMobile  = "mobile"
	HealthFormDesktop = "desktop"
)

// Website health run states.
const (
	HealthRunRunning   = "running"
	HealthRunCompleted = "completed"
	HealthRunFailed    = "failed"
)

// HealthSite is a website whose links, content and performance are checked
// by crawling it.
type HealthSite struct {
	ID        string `json:"id"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// URL is where the crawl starts.
	URL      string `json:"url"`
	MaxPages int    `json:"max_pages"`
	MaxDepth int    `json:"max_depth"`
	// CheckExternalLinks also checks links that leave the site.
	CheckExternalLinks bool `json:"check_external_links"`
	// PerfAuditEnabled runs the browser audit of PerfAuditURLs (the start
	// URL when empty) after each crawl.
	PerfAuditEnabled    bool     `json:"perf_audit_enabled"`
	PerfAuditURLs       []string `json:"perf_audit_urls"`
	PerfAuditFormFactor string   `json:"perf_audit_form_factor"`
	// Schedule is daily, weekly or manual.
	Schedule       string `json:"schedule"`
	NotifyOnIssues bool   `json:"notify_on_issues"`
	// ScoreDropThresh is how many points a score must fall, compared with
	// the previous run, to be reported.
	ScoreDropThresh int       `json:"score_drop_thresh"`
	IsActive        bool      `json:"is_active"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// HealthRun is one crawl of a site and its report summary.
type HealthRun struct {
	ID        string `json:"id"`
	SiteID    string `json:"site_id"`
	Namespace string `json:"namespace"`
	// Trigger is manual or scheduled.
	Trigger string `json:"trigger"`
	// Status is running, completed or failed.
	Status     string     `json:"status"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	// Score is the crawl score (0-100), nil until finished or when the
	// crawl failed.
	Score *int `json:"score"`
	// Summary is the report document (counts, audit results), owned by the
	// website health package.
	Summary json.RawMessage `json:"summary,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// HealthIssue is one problem a run found.
type HealthIssue struct {
	RunID string `json:"run_id"`
	// Kind is broken_link, broken_external_link, mixed_content,
	// redirect_chain or slow_page.
	Kind string `json:"kind"`
	// URL is the problem's target: the link, the insecure resource, the
	// redirecting or slow page.
	URL string `json:"url"`
	// SourceURL is the page the target was found on ("" for the start URL).
	SourceURL string `json:"source_url"`
	Detail    string `json:"detail"`
}

// SiteHealthStore keeps website health sites, runs and issues.
type SiteHealthStore interface {
	// CreateHealthSite stores a new site (ID and timestamps filled when empty).
	CreateHealthSite(ctx context.Context, s HealthSite) (HealthSite, error)
	// GetHealthSite returns one site or ErrNotFound.
	GetHealthSite(ctx context.Context, id string) (HealthSite, error)
	// ListHealthSites returns the sites of namespace ("" for every
	// namespace), oldest first.
	ListHealthSites(ctx context.Context, namespace string) ([]HealthSite, error)
	// UpdateHealthSite replaces the settings of site s.ID (UpdatedAt set);
	// ErrNotFound when missing.
	UpdateHealthSite(ctx context.Context, s HealthSite) (HealthSite, error)
	// DeleteHealthSite deletes a site with its runs and issues; ErrNotFound
	// when missing.
	DeleteHealthSite(ctx context.Context, id string) error

	// StartHealthRun stores a new running run (ID, StartedAt and Status
	// filled when empty); ErrNotFound when the site does not exist.
	StartHealthRun(ctx context.Context, r HealthRun) (HealthRun, error)
	// FinishHealthRun records the outcome of running run r.ID (status,
	// finished_at, score, summary, error), stores its issues and enqueues
	// events, in one transaction. ErrNotFound when missing,
	// ErrHealthRunFinished when it is no longer running.
	FinishHealthRun(ctx context.Context, r HealthRun, issues []HealthIssue, events ...OutboxEvent) (HealthRun, error)
	// GetHealthRun returns one run or ErrNotFound.
	GetHealthRun(ctx context.Context, id string) (HealthRun, error)
	// ListHealthRuns returns a site's runs, newest first, at most limit
	// (all when limit <= 0).
	ListHealthRuns(ctx context.Context, siteID string, limit int) ([]HealthRun, error)
	// ListHealthIssues returns a run's issues in the order they were stored.
	ListHealthIssues(ctx context.Context, runID string) ([]HealthIssue, error)
	// PruneHealthRuns deletes a site's finished runs (and their issues)
	// beyond the keep newest; it returns how many runs were deleted.
	PruneHealthRuns(ctx context.Context, siteID string, keep int) (int64, error)
}
