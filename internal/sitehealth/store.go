package sitehealth

import (
	"context"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Store is the part of the history store (internal/store) that the Service
// uses: the sites to audit on schedule, and each run from its start to its
// outcome, stored with its issues and the alerts it enqueues. It holds only
// the methods the Service calls, so the dependency is visible here and a
// test can fake or wrap it; every store backend satisfies it.
type Store interface {
	ListHealthSites(ctx context.Context, namespace string) ([]store.HealthSite, error)
	StartHealthRun(ctx context.Context, r store.HealthRun) (store.HealthRun, error)
	FinishHealthRun(ctx context.Context, r store.HealthRun, issues []store.HealthIssue, events ...store.OutboxEvent) (store.HealthRun, error)
	ListHealthRuns(ctx context.Context, siteID string, limit int) ([]store.HealthRun, error)
	ListHealthIssues(ctx context.Context, runID string) ([]store.HealthIssue, error)
	PruneHealthRuns(ctx context.Context, siteID string, keep int) (int64, error)
}

// ReportStore is what LoadReport reads: one run and its issues. The REST
// API passes its own store, so it is kept apart from Store.
type ReportStore interface {
	GetHealthRun(ctx context.Context, id string) (store.HealthRun, error)
	ListHealthIssues(ctx context.Context, runID string) ([]store.HealthIssue, error)
}
