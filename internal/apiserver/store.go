package apiserver

import (
	"context"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidentcomms"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidents"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/integrations"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/reliability"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/stats"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/telemetry"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/thirdpartystatus"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/websitehealth"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Store is the part of the history store (internal/store) that the REST API
// uses: the store interface each resource package declares for itself,
// what the recipient confirmer needs when none is configured, and the calls
// of the handlers not yet split into packages, grouped by the routes that
// call them. The handlers' own calls are listed even where an embedded
// interface has them too, so that each group stays true when a service's
// needs change. It holds only these methods, so the dependency is visible
// here and a test can fake or wrap it; every store backend satisfies it.
type Store interface {
	core.KeyStore
	recipients.Store
	incidents.Store
	incidentcomms.Store
	integrations.Store
	reliability.Store
	websitehealth.Store
	telemetry.Store
	thirdpartystatus.Store
	stats.Store

	// Monitors: pause windows, statistics reset, deletion, uptime and the
	// history of DNS answers.
	PauseMonitor(ctx context.Context, monitorID string, at time.Time) error
	ResumeMonitor(ctx context.Context, monitorID string, at time.Time) error
	ListPauseWindows(ctx context.Context, monitorID string, since time.Time) ([]store.PauseWindow, error)
	ResetStats(ctx context.Context, monitorID string) error
	DeleteMonitorHistory(ctx context.Context, monitorID string) error
	UptimeWindows(ctx context.Context, monitorID string, to time.Time, windows ...time.Duration) ([]*float64, error)
	ListDNSRecords(ctx context.Context, monitorID string, changedOnly bool, limit int) ([]store.DNSRecord, error)
	// Check history and step runs.
	ListChecks(ctx context.Context, q store.ChecksQuery) (items []store.Check, nextBefore *time.Time, err error)
	LatestChecks(ctx context.Context, monitorID string) ([]store.Check, error)
}
