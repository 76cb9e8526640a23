package monitors

import (
	"context"
	"net"
	"net/http"
	"slices"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Routes registers /monitors with their checks, step runs, regions, heartbeats and DNS records.
func (h *Handlers) Routes(rt *core.Router) {
	l := rt.Limits
	monitorWrite := core.WithLimit(l.MonitorWrite)
	rt.Handle(http.MethodGet, "/monitors", h.listMonitors, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "All monitors, newest first (not paginated)",
		Query:   []apidoc.Param{apidoc.Q("tag", apidoc.Str(""), "Only monitors with this tag.")},
		Resp:    []restapi.Monitor{},
	}))
	rt.Handle(http.MethodGet, "/monitors/summary", h.monitorsSummary, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "Counts by status, open incidents, 24 h uptime",
		Resp:    restapi.MonitorSummary{},
	}))
	rt.Handle(http.MethodPost, "/monitors", h.createMonitor, monitorWrite, core.Doc(apidoc.Op{
		Tag:         "Monitors",
		Summary:     "Create a monitor",
		Desc:        "config.notification_emails is ignored when sent with an API key.",
		Body:        restapi.MonitorCreate{},
		Status:      201,
		Resp:        restapi.Monitor{},
		Entitlement: true,
	}))
	rt.Handle(http.MethodPost, "/monitors/bulk", h.bulkMonitors, monitorWrite, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "Bulk pause, resume, delete, tag or move monitors",
		Body:    restapi.BulkRequest{},
		Resp:    restapi.BulkResult{},
	}))
	rt.Handle(http.MethodPost, "/monitors/test", h.testMonitor, core.WithLimit(l.RunCheck), core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "One-off check of a definition; nothing saved",
		Query:   []apidoc.Param{apidoc.Q("region", apidoc.Str(""), "Probe region code.")},
		Body:    restapi.MonitorCreate{},
		Resp:    restapi.CheckResult{},
	}))
	rt.Handle(http.MethodGet, "/monitors/discover-subdomains", h.discoverSubdomains, core.WithLimit(core.NewLimiter("discover-subdomains", 20, 15*time.Minute, core.PerWorkspace, ratelimit.Plain)), core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "Subdomains that could be monitored",
		Desc:    "Resolves a fixed list of common names under the domain with the operator's resolver (certificate-transparency logs are not used) and returns those resolving to addresses a monitor may target.",
		Query:   []apidoc.Param{{Name: "domain", Schema: apidoc.Str("Hostname of at least two labels."), Required: true}},
		Resp:    restapi.Subdomains{},
	}))
	rt.Handle(http.MethodGet, "/monitors/{id}", h.getMonitor, core.Doc(apidoc.Op{Tag: "Monitors", Summary: "A monitor with 24 h and 30 d uptime", Resp: restapi.Monitor{}}))
	rt.Handle(http.MethodPut, "/monitors/{id}", h.updateMonitor, monitorWrite, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "Update a monitor (only sent fields change)",
		Body:    restapi.MonitorUpdate{},
		Resp:    restapi.Monitor{},
	}))
	rt.Handle(http.MethodDelete, "/monitors/{id}", h.deleteMonitor, monitorWrite, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "Delete a monitor and its history",
		Status:  204,
	}))
	rt.Handle(http.MethodPost, "/monitors/{id}/pause", h.setPaused(true), monitorWrite, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "Pause a monitor",
		Resp:    restapi.Monitor{},
	}))
	rt.Handle(http.MethodPost, "/monitors/{id}/resume", h.setPaused(false), monitorWrite, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "Resume a monitor (checked right away)",
		Resp:    restapi.Monitor{},
	}))
	rt.Handle(http.MethodPost, "/monitors/{id}/reset-stats", h.resetStats, monitorWrite, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "Clear a monitor's statistics",
		Resp:    restapi.Success{},
	}))
	rt.Handle(http.MethodPost, "/monitors/{id}/run-check", h.runCheckSaved, core.WithLimit(l.RunCheck), core.Doc(apidoc.Op{
		Tag:          "Monitors",
		Summary:      "Run a check of a saved monitor now",
		Query:        []apidoc.Param{apidoc.Q("region", apidoc.Str(""), "Probe region code.")},
		Body:         restapi.RunCheckBody{},
		BodyOptional: true,
		Resp:         restapi.CheckResult{},
		Extra:        []int{503},
	}))
	rt.Handle(http.MethodGet, "/monitors/{id}/checks", h.listChecks, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "Check history (cursor pagination)",
		Query: []apidoc.Param{
			apidoc.IntQ("limit", 1, 500, 50, ""),
			apidoc.Q("before", apidoc.Str(""), "UTC timestamp YYYY-MM-DDTHH:MM:SS[.ffffff][Z]; returns older checks. Pass next_before unchanged."),
			apidoc.Q("region", apidoc.Str(""), "Probe region code."), apidoc.Q("status", apidoc.Enum("", append(slices.Clone(restapi.CheckStates), "problem")...), "problem = anything not up."),
		},
		Resp: restapi.CheckPage{},
	}))
	rt.Handle(http.MethodGet, "/monitors/{id}/checks.csv", h.checksCSV, core.WithLimit(l.Export), core.Doc(apidoc.Op{
		Tag:         "Monitors",
		Summary:     "Check history as CSV (at most 50,000 rows)",
		Query:       []apidoc.Param{apidoc.Q("from", apidoc.DateTime(""), ""), apidoc.Q("to", apidoc.DateTime(""), ""), apidoc.Q("region", apidoc.Str(""), "Probe region code."), apidoc.Q("status", apidoc.Enum("", append(slices.Clone(restapi.CheckStates), "problem")...), "")},
		Resp:        apidoc.With(apidoc.Str("CSV with a header row."), "contentMediaType", "text/csv"),
		RespType:    "text/csv",
		RespHeaders: apidoc.M{"X-Export-Truncated": apidoc.M{"description": "true when the 50,000-row cap cut the export (the newest rows are returned).", "schema": apidoc.Enum("", "true")}},
	}))
	rt.Handle(http.MethodGet, "/monitors/{id}/checks/{checkId}/screenshot", h.checkScreenshot, core.Doc(apidoc.Op{
		Tag:      "Monitors",
		Summary:  "The screenshot a failed browser check took of its page (extension)",
		Desc:     "An extension beyond the specification: browser monitors store a JPEG of the page with each failed check (at most 256 KiB), kept and pruned with the check history. 404 when the check has none.",
		Resp:     apidoc.With(apidoc.Str("JPEG image."), "contentMediaType", "image/jpeg"),
		RespType: "image/jpeg",
	}))
	rt.Handle(http.MethodGet, "/monitors/{id}/regions", h.getRegions, core.Doc(apidoc.Op{Tag: "Monitors", Summary: "The monitor's probe regions", Resp: restapi.Regions{}}))
	rt.Handle(http.MethodPut, "/monitors/{id}/regions", h.putRegions, monitorWrite, core.Doc(apidoc.Op{
		Tag:         "Monitors",
		Summary:     "Set the monitor's probe regions",
		Body:        restapi.RegionsBody{},
		Resp:        restapi.Regions{},
		Entitlement: true,
	}))
	rt.Handle(http.MethodGet, "/monitors/{id}/explanation", h.monitorExplanation, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "Explanation of the open incident, or the per-region state against the quorum",
		Resp:    restapi.Explanation{},
	}))
	rt.Handle(http.MethodPost, "/monitors/{id}/heartbeat/rotate", h.rotateHeartbeat, monitorWrite, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "New heartbeat URL for a cron monitor; the old one stops at once",
		Resp:    restapi.HeartbeatURL{},
	}))
	rt.Handle(http.MethodPost, "/monitors/{id}/cron-heartbeat", h.cronHeartbeat, core.Doc(apidoc.Op{
		Tag:          "Monitors",
		Summary:      "Record a heartbeat with the API key",
		Body:         restapi.CronHeartbeat{},
		BodyOptional: true,
		Resp:         restapi.HeartbeatRecorded{},
	}))
	rt.Handle(http.MethodGet, "/monitors/{id}/dns-records", h.dnsRecords, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "DNS records and recent changes of a DNS monitor",
		Query:   []apidoc.Param{apidoc.IntQ("limit", 1, 1000, 50, "")},
		Resp:    restapi.DNSRecords{},
	}))
	rt.Handle(http.MethodPost, "/monitors/{id}/dns-records/accept", h.acceptDNSRecords, core.WithLimit(l.DNSAccept), core.Doc(apidoc.Op{
		Tag:     "Domain and DNS",
		Summary: "Accept the current DNS answer as the new expected value",
		// No body: the latest observed answer is accepted.
		Resp:  restapi.DNSAccepted{},
		Extra: []int{409},
	}))
	rt.Handle(http.MethodGet, "/monitors/{id}/step-runs", h.stepRuns, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "Per-step results of a multi-step monitor's checks, newest first",
		Query:   []apidoc.Param{apidoc.IntQ("limit", 1, 100, 10, ""), apidoc.Q("before", apidoc.Str(""), "As for check history."), apidoc.Q("region", apidoc.Str(""), "Probe region code.")},
		Resp:    restapi.StepRuns{},
	}))
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
	CheckScreenshot(ctx context.Context, monitorID, checkID string) ([]byte, error)
}
