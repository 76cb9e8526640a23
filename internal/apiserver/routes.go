package apiserver

import (
	"net/http"

	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/automation"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/domainssl"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/groups"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidentcomms"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidents"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/integrations"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/maintenance"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/monitors"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/public"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/reliability"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/stats"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/statuspages"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/telemetry"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/thirdpartystatus"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/websitehealth"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/workspace"
)

// routes registers every endpoint. Access, plan features and rate limits
// follow the tables of spec/rest-api.md.
func (s *Server) routes() {
	rt := s.rt.Mux
	rt.NotFound(func(w http.ResponseWriter, _ *http.Request) { core.WriteNotFound(w, "Resource") })
	rt.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		core.WriteError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "method not allowed")
	})
	s.rt.Public(http.MethodGet, "/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok"))
	}, apidoc.Op{Tag: "Meta", Summary: "Liveness of the API", Resp: apidoc.With(apidoc.Str(""), "const", "ok"), RespType: "text/plain"})
	s.rt.Public(http.MethodGet, "/openapi.json", serveOpenAPI, apidoc.Op{Tag: "Meta", Summary: "This OpenAPI document", Resp: apidoc.Freeform("OpenAPI 3.1 document.")})

	// Public endpoints: heartbeat pings and the public status pages.
	public.New(s.clock, s.opts.Engine, s.opts.Public).Routes(s.rt)

	// The resources, each served by a package of its own.
	mon := monitors.New(s.Deps, monitors.Options{Store: s.opts.Store, Engine: s.opts.Engine, Monitors: s.opts.Monitors,
		Resolver: s.opts.Resolver, PublicURL: s.opts.PublicURL, AllowPrivateTargets: s.opts.AllowPrivateTargets,
		CredentialSecrets: s.opts.CredentialSecrets})
	mon.Routes(s.rt)
	// Monitoring as code writes its monitors through the monitor handlers.
	automation.New(s.Deps, mon.Writes()).Routes(s.rt)
	workspace.New(s.Deps).Routes(s.rt)
	stats.New(s.Deps, s.opts.Store).Routes(s.rt)
	groups.New(s.Deps).Routes(s.rt)
	incidents.New(s.Deps, s.opts.Store, s.opts.Engine, s.opts.Alerting.Escalation, s.opts.Alerting.Subscribers).Routes(s.rt)
	maintenance.New(s.Deps).Routes(s.rt)
	statuspages.New(s.Deps, s.opts.Alerting.Subscribers, s.opts.PublicURL, s.opts.SSOUnavailable).Routes(s.rt)
	integrations.New(s.Deps, s.opts.Store, s.recipients, s.opts.Alerting.ChannelTester, s.opts.Alerting.Notifier, s.opts.AllowPrivateTargets).Routes(s.rt)
	reliability.New(s.Deps, s.opts.Store).Routes(s.rt)
	domainssl.New(s.Deps, s.opts.Features.Expiry).Routes(s.rt)
	incidentcomms.New(s.opts.Store, s.clock, s.opts.Features.Assist).Routes(s.rt)
	websitehealth.New(s.opts.Store, s.clock, s.opts.Features.SiteHealth).Routes(s.rt)
	thirdpartystatus.New(s.Deps, s.opts.Store, s.opts.Features.ThirdParty).Routes(s.rt)
	telemetry.New(s.opts.Store, s.clock, s.opts.Features.OTel).Routes(s.rt)

	// Endpoints of the human account never accept API keys.
	// The catch-all * is {path} in the document.
	for _, p := range []string{"/account", "/account/*", "/team/*", "/billing/*", "/api-keys", "/api-keys/*",
		"/workspaces", "/workspaces/*", "/subscription", "/subscription/*", "/checkout", "/checkout/*", "/auth/*"} {
		s.rt.SessionOnly(p)
	}
}
