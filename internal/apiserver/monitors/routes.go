package monitors

import (
	"context"
	"net"
	"net/http"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Routes registers /monitors with their checks, step runs, regions, heartbeats and DNS records.
func (h *Handlers) Routes(rt *core.Router) {
	l := rt.Limits
	monitorWrite := core.WithLimit(l.MonitorWrite)
	rt.Handle(http.MethodGet, "/monitors", h.listMonitors)
	rt.Handle(http.MethodGet, "/monitors/summary", h.monitorsSummary)
	rt.Handle(http.MethodPost, "/monitors", h.createMonitor, monitorWrite)
	rt.Handle(http.MethodPost, "/monitors/bulk", h.bulkMonitors, monitorWrite)
	rt.Handle(http.MethodPost, "/monitors/test", h.testMonitor, core.WithLimit(l.RunCheck))
	rt.Handle(http.MethodGet, "/monitors/discover-subdomains", h.discoverSubdomains, core.WithLimit(core.NewLimiter("discover-subdomains", 20, 15*time.Minute, core.PerWorkspace, ratelimit.Plain)))
	rt.Handle(http.MethodGet, "/monitors/{id}", h.getMonitor)
	rt.Handle(http.MethodPut, "/monitors/{id}", h.updateMonitor, monitorWrite)
	rt.Handle(http.MethodDelete, "/monitors/{id}", h.deleteMonitor, monitorWrite)
	rt.Handle(http.MethodPost, "/monitors/{id}/pause", h.setPaused(true), monitorWrite)
	rt.Handle(http.MethodPost, "/monitors/{id}/resume", h.setPaused(false), monitorWrite)
	rt.Handle(http.MethodPost, "/monitors/{id}/reset-stats", h.resetStats, monitorWrite)
	rt.Handle(http.MethodPost, "/monitors/{id}/run-check", h.runCheckSaved, core.WithLimit(l.RunCheck))
	rt.Handle(http.MethodGet, "/monitors/{id}/checks", h.listChecks)
	rt.Handle(http.MethodGet, "/monitors/{id}/checks.csv", h.checksCSV, core.WithLimit(l.Export))
	rt.Handle(http.MethodGet, "/monitors/{id}/regions", h.getRegions)
	rt.Handle(http.MethodPut, "/monitors/{id}/regions", h.putRegions, monitorWrite)
	rt.Handle(http.MethodGet, "/monitors/{id}/explanation", h.monitorExplanation)
	rt.Handle(http.MethodPost, "/monitors/{id}/heartbeat/rotate", h.rotateHeartbeat, monitorWrite)
	rt.Handle(http.MethodPost, "/monitors/{id}/cron-heartbeat", h.cronHeartbeat)
	rt.Handle(http.MethodGet, "/monitors/{id}/dns-records", h.dnsRecords)
	rt.Handle(http.MethodPost, "/monitors/{id}/dns-records/accept", h.acceptDNSRecords, core.WithLimit(l.DNSAccept))
	rt.Handle(http.MethodGet, "/monitors/{id}/step-runs", h.stepRuns)
}

// Options are the services the monitor handlers use besides the core's.
type Options struct {
	// Store holds check history, pause windows and uptime.
	Store Store
	// Engine runs checks, records heartbeats and explains; nil answers 503.
	Engine Engine
	// Monitors lists a namespace's Monitors without copying them (the
	// manager passes its informer's indexer); nil lists through the client.
	Monitors MonitorLister
	// Resolver resolves the candidate names of subdomain discovery; nil is
	// the system resolver.
	Resolver *net.Resolver
	// PublicURL is the base URL of heartbeat URLs.
	PublicURL string
	// AllowPrivateTargets lets monitors target private addresses (the same
	// setting admission uses).
	AllowPrivateTargets bool
	// CredentialSecrets reads the Secrets a monitor's header may reference
	// (the manager's credsecrets cache, which answers
	// *credentials.NotAllowedError for others); nil means Deps.Reader.
	CredentialSecrets client.Reader
}

// Handlers serve /monitors. They keep the caches
// that make a list of 10,000 monitors cheap: uptimes, encoded configs and
// encoded list items.
type Handlers struct {
	d                   *core.Deps
	st                  Store
	engine              Engine
	monitors            MonitorLister
	resolver            *net.Resolver
	publicURL           string
	allowPrivateTargets bool
	creds               credentialSecrets
	uptimes             uptimeCache
	configs             configCache
	items               listCache
	// history serves a monitor's checks, step runs and DNS records (its
	// handlers are promoted, so the route table names them like the rest).
	history
}

// New returns the handlers.
func New(d *core.Deps, o Options) *Handlers {
	return &Handlers{d: d, st: o.Store, engine: o.Engine, monitors: o.Monitors, resolver: o.Resolver,
		publicURL: o.PublicURL, allowPrivateTargets: o.AllowPrivateTargets,
		creds: credentialSecrets{d: d, secrets: o.CredentialSecrets}, history: history{d: d, st: o.Store}}
}

// Engine is what the monitor handlers ask of the incident engine.
type Engine interface {
	// HeartbeatByToken is not needed here: the public package records
	// pings by token.
	// Heartbeat records a ping for m (the API-key variant).
	Heartbeat(ctx context.Context, m *monv1.Monitor, p engine.Ping) error
	// ExplainMonitor explains the open incident or the current votes.
	ExplainMonitor(ctx context.Context, m *monv1.Monitor) (engine.Explanation, error)
	// RunCheck runs one check of m (saved or not) from region ("" = any
	// region the monitor uses) and returns the result without storing it
	// unless store is true.
	RunCheck(ctx context.Context, m *monv1.Monitor, region string, store bool) (probeapi.Result, error)
}

// Store is what the monitor handlers read and write in the history store.
type Store interface {
	PauseMonitor(ctx context.Context, monitorID string, at time.Time) error
	ResumeMonitor(ctx context.Context, monitorID string, at time.Time) error
	ResetStats(ctx context.Context, monitorID string) error
	DeleteMonitorHistory(ctx context.Context, monitorID string) error
	UptimeWindows(ctx context.Context, monitorID string, to time.Time, windows ...time.Duration) ([]*float64, error)
	ListDNSRecords(ctx context.Context, monitorID string, changedOnly bool, limit int) ([]store.DNSRecord, error)
	ListChecks(ctx context.Context, q store.ChecksQuery) (items []store.Check, nextBefore *time.Time, err error)
	LatestChecks(ctx context.Context, monitorID string) ([]store.Check, error)
}
