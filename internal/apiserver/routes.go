package apiserver

import (
	"net/http"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/domainssl"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/groups"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidentcomms"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidents"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/integrations"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/maintenance"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/public"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/reliability"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/stats"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/statuspages"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/telemetry"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/thirdpartystatus"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/websitehealth"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/workspace"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
)

// routes registers every endpoint. Access, plan features and rate limits
// follow the tables of spec/rest-api.md.
func (s *Server) routes() {
	rt := s.rt.Mux
	rt.NotFound(func(w http.ResponseWriter, _ *http.Request) { core.WriteNotFound(w, "Resource") })
	rt.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		core.WriteError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "method not allowed")
	})
	rt.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok"))
	})
	rt.Get("/openapi.json", serveOpenAPI)

	// Public endpoints: heartbeat pings and the public status pages.
	public.New(s.clock, s.opts.Engine, s.opts.Public).Routes(s.rt)

	l := s.rt.Limits
	get, post, put, del := http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete
	monitorWrite := core.WithLimit(l.MonitorWrite)

	// Monitoring as code (keys may contain "/": the key is the rest of the path).
	keyed := core.WithLimit(l.KeyedWrite)
	codeBody := core.WithMaxBody(maxCodeBody)
	s.rt.Handle(post, "/automation/monitors/plan", s.planMonitors, core.WithAccess(core.ReadOnlyWrite), core.WithLimit(l.Plan), codeBody)
	s.rt.Handle(post, "/automation/monitors/apply", s.applyMonitors, core.WithLimit(l.Apply), codeBody)
	s.rt.Handle(put, "/automation/monitors/by-id/{id}/key", s.putMonitorKey, keyed)
	s.rt.Handle(get, "/automation/monitors/*", s.getKeyedMonitor)
	s.rt.Handle(put, "/automation/monitors/*", s.putKeyedMonitor, keyed)
	s.rt.Handle(del, "/automation/monitors/*", s.deleteKeyedMonitor, keyed)

	// Monitors.
	s.rt.Handle(get, "/monitors", s.listMonitors)
	s.rt.Handle(get, "/monitors/summary", s.monitorsSummary)
	s.rt.Handle(post, "/monitors", s.createMonitor, monitorWrite)
	s.rt.Handle(post, "/monitors/bulk", s.bulkMonitors, monitorWrite)
	s.rt.Handle(post, "/monitors/test", s.testMonitor, core.WithLimit(l.RunCheck))
	s.rt.Handle(get, "/monitors/discover-subdomains", s.discoverSubdomains,
		core.WithLimit(core.NewLimiter("discover-subdomains", 20, 15*time.Minute, core.PerWorkspace, ratelimit.Plain)))
	s.rt.Handle(get, "/monitors/{id}", s.getMonitor)
	s.rt.Handle(put, "/monitors/{id}", s.updateMonitor, monitorWrite)
	s.rt.Handle(del, "/monitors/{id}", s.deleteMonitor, monitorWrite)
	s.rt.Handle(post, "/monitors/{id}/pause", s.setPaused(true), monitorWrite)
	s.rt.Handle(post, "/monitors/{id}/resume", s.setPaused(false), monitorWrite)
	s.rt.Handle(post, "/monitors/{id}/reset-stats", s.resetStats, monitorWrite)
	s.rt.Handle(post, "/monitors/{id}/run-check", s.runCheckSaved, core.WithLimit(l.RunCheck))
	s.rt.Handle(get, "/monitors/{id}/checks", s.listChecks)
	s.rt.Handle(get, "/monitors/{id}/checks.csv", s.checksCSV, core.WithLimit(l.Export))
	s.rt.Handle(get, "/monitors/{id}/regions", s.getRegions)
	s.rt.Handle(put, "/monitors/{id}/regions", s.putRegions, monitorWrite)
	s.rt.Handle(get, "/monitors/{id}/explanation", s.monitorExplanation)
	s.rt.Handle(post, "/monitors/{id}/heartbeat/rotate", s.rotateHeartbeat, monitorWrite)
	s.rt.Handle(post, "/monitors/{id}/cron-heartbeat", s.cronHeartbeat)
	s.rt.Handle(get, "/monitors/{id}/dns-records", s.dnsRecords)
	s.rt.Handle(post, "/monitors/{id}/dns-records/accept", s.acceptDNSRecords, core.WithLimit(l.DNSAccept))
	s.rt.Handle(get, "/monitors/{id}/step-runs", s.stepRuns)

	// The resources served by packages of their own.
	workspace.New(s.Deps).Routes(s.rt)
	stats.New(s.Deps, s.opts.Store).Routes(s.rt)
	groups.New(s.Deps).Routes(s.rt)
	incidents.New(s.Deps, s.opts.Store, s.opts.Engine, s.opts.Escalation, s.opts.Subscribers).Routes(s.rt)
	maintenance.New(s.Deps).Routes(s.rt)
	statuspages.New(s.Deps, s.opts.Subscribers, s.opts.PublicURL).Routes(s.rt)
	integrations.New(s.Deps, s.opts.Store, s.recipients, s.opts.ChannelTester, s.opts.Notifier, s.opts.AllowPrivateTargets).Routes(s.rt)
	reliability.New(s.Deps, s.opts.Store).Routes(s.rt)
	domainssl.New(s.Deps, s.opts.Expiry).Routes(s.rt)
	incidentcomms.New(s.opts.Store, s.clock, s.opts.Assist).Routes(s.rt)
	websitehealth.New(s.opts.Store, s.clock, s.opts.SiteHealth).Routes(s.rt)
	thirdpartystatus.New(s.Deps, s.opts.Store, s.opts.ThirdParty).Routes(s.rt)
	telemetry.New(s.opts.Store, s.clock, s.opts.OTel).Routes(s.rt)

	// Endpoints of the human account never accept API keys.
	for _, p := range []string{"/account", "/account/*", "/team/*", "/billing/*", "/api-keys", "/api-keys/*",
		"/workspaces", "/workspaces/*", "/subscription", "/subscription/*", "/checkout", "/checkout/*", "/auth/*"} {
		s.rt.SessionOnly(p)
	}
}
