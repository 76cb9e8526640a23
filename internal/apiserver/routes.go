package apiserver

import (
	"context"
	"net/http"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
	"github.com/uptime-operator/uptime-operator/internal/recipients"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
)

func ctrlLog(ctx context.Context) logr.Logger { return ctrl.LoggerFrom(ctx).WithName("api") }

// routes registers every endpoint. Access, plan features and rate limits
// follow the tables of spec/rest-api.md.
func (s *Server) routes() {
	rt := s.router
	rt.NotFound(func(w http.ResponseWriter, _ *http.Request) { writeNotFound(w, "Resource") })
	rt.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "method not allowed")
	})
	rt.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok"))
	})
	rt.Get("/openapi.json", serveOpenAPI)

	// Public endpoints.
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodHead} {
		rt.Method(m, "/heartbeat/{token}", http.HandlerFunc(s.heartbeat))
	}
	rt.Get("/status/{slug}", s.publicStatus)
	rt.Get("/status/{slug}/{rest}", s.publicStatus)
	rt.Get("/s/{slug}", s.publicHTML)
	rt.Post("/s/{slug}/login", s.publicForm(PublicStatus.ServeLogin))
	rt.Post("/s/{slug}/subscribe", s.publicForm(PublicStatus.ServeSubscribe))
	rt.Get("/s/{slug}/confirm", s.publicForm(PublicStatus.ServeConfirm))
	rt.Post("/s/{slug}/confirm", s.publicForm(PublicStatus.ServeConfirm))
	rt.Get("/s/{slug}/unsubscribe", s.publicForm(PublicStatus.ServeUnsubscribe))
	rt.Post("/s/{slug}/unsubscribe", s.publicForm(PublicStatus.ServeUnsubscribe))
	rt.Get(recipients.ConfirmPath+"{token}", s.confirmRecipient)
	rt.Post(recipients.ConfirmPath+"{token}", s.confirmRecipient)

	l := s.limits
	get, post, put, patch, del := http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete
	monitorWrite := withLimit(l.monitorWrite)

	s.handle(get, "/automation/whoami", s.whoami)

	// Monitoring as code (keys may contain "/": the key is the rest of the path).
	keyed := withLimit(l.keyedWrite)
	codeBody := withMaxBody(maxCodeBody)
	s.handle(post, "/automation/monitors/plan", s.planMonitors, withAccess(readOnlyWrite), withLimit(l.plan), codeBody)
	s.handle(post, "/automation/monitors/apply", s.applyMonitors, withLimit(l.apply), codeBody)
	s.handle(put, "/automation/monitors/by-id/{id}/key", s.putMonitorKey, keyed)
	s.handle(get, "/automation/monitors/*", s.getKeyedMonitor)
	s.handle(put, "/automation/monitors/*", s.putKeyedMonitor, keyed)
	s.handle(del, "/automation/monitors/*", s.deleteKeyedMonitor, keyed)

	// Monitors.
	s.handle(get, "/monitors", s.listMonitors)
	s.handle(get, "/monitors/summary", s.monitorsSummary)
	s.handle(post, "/monitors", s.createMonitor, monitorWrite)
	s.handle(post, "/monitors/bulk", s.bulkMonitors, monitorWrite)
	s.handle(post, "/monitors/test", s.testMonitor, withLimit(l.runCheck))
	s.handle(get, "/monitors/discover-subdomains", s.discoverSubdomains,
		withLimit(newLimiter("discover-subdomains", 20, 15*time.Minute, perWorkspace, ratelimit.Plain)))
	s.handle(get, "/monitors/{id}", s.getMonitor)
	s.handle(put, "/monitors/{id}", s.updateMonitor, monitorWrite)
	s.handle(del, "/monitors/{id}", s.deleteMonitor, monitorWrite)
	s.handle(post, "/monitors/{id}/pause", s.setPaused(true), monitorWrite)
	s.handle(post, "/monitors/{id}/resume", s.setPaused(false), monitorWrite)
	s.handle(post, "/monitors/{id}/reset-stats", s.resetStats, monitorWrite)
	s.handle(post, "/monitors/{id}/run-check", s.runCheckSaved, withLimit(l.runCheck))
	s.handle(get, "/monitors/{id}/checks", s.listChecks)
	s.handle(get, "/monitors/{id}/checks.csv", s.checksCSV, withLimit(l.export))
	s.handle(get, "/monitors/{id}/regions", s.getRegions)
	s.handle(put, "/monitors/{id}/regions", s.putRegions, monitorWrite)
	s.handle(get, "/monitors/{id}/explanation", s.monitorExplanation)
	s.handle(get, "/monitors/{id}/flakiness", s.monitorFlakiness)
	s.handle(post, "/monitors/{id}/heartbeat/rotate", s.rotateHeartbeat, monitorWrite)
	s.handle(post, "/monitors/{id}/cron-heartbeat", s.cronHeartbeat)
	s.handle(get, "/monitors/{id}/dns-records", s.dnsRecords)
	s.handle(get, "/monitors/{id}/notification-recipients", s.notificationRecipients)
	s.handle(post, "/monitors/{id}/test-notification", s.testNotification, withLimit(l.testNotify))
	s.handle(get, "/monitors/{id}/step-runs", s.stepRuns)
	s.handle(get, "/regions", s.listRegions)

	// Stats (1000 per minute per address, plain-text 429).
	stats := withLimit(l.stats)
	s.handle(get, "/stats/{id}/stats", s.statsSummary, stats)
	s.handle(get, "/stats/{id}/checks", s.statsChecks, stats)
	s.handle(get, "/stats/{id}/incidents", s.statsIncidents, stats)
	s.handle(get, "/stats/{id}/response-time-chart", s.responseTimeChart, stats)
	s.handle(get, "/stats/{id}/response-series", s.responseSeries, stats)
	s.handle(get, "/stats/{id}/uptime-history", s.uptimeHistory, stats)
	s.handle(get, "/stats/{id}/24h-bars", s.dailyBars, stats)
	s.handle(get, "/stats/{id}/region-statuses", s.regionStatuses, stats)
	s.handle(get, "/stats/{id}/pause-windows", s.pauseWindows, stats)

	// Monitor groups.
	s.handle(get, "/monitor-groups", s.listGroups)
	s.handle(post, "/monitor-groups", s.createGroup)
	s.handle(get, "/monitor-groups/{id}/summary", s.groupSummary)
	s.handle(put, "/monitor-groups/{id}", s.updateGroup)
	s.handle(del, "/monitor-groups/{id}", s.deleteGroup)

	// Incidents.
	s.handle(get, "/incidents", s.listIncidents)
	s.handle(post, "/incidents", s.createIncident)
	s.handle(get, "/incidents/export", s.exportIncidents, withLimit(l.export))
	s.handle(get, "/incidents/runbooks", s.listRunbooks)
	s.handle(post, "/incidents/runbooks", s.createRunbook)
	s.handle(put, "/incidents/runbooks/{runbookId}", s.replaceRunbook)
	s.handle(del, "/incidents/runbooks/{runbookId}", s.deleteRunbook)
	deploys := withFeature(monv1.FeatureDeployEvents)
	s.handle(get, "/incidents/deploy-events", s.listDeployEvents, deploys)
	s.handle(post, "/incidents/deploy-events", s.createDeployEvent, deploys)
	s.handle(get, "/incidents/deploy-events/config", s.deployEventsConfig, deploys)
	s.handle(get, "/incidents/{id}", s.getIncident)
	s.handle(get, "/incidents/{id}/explanation", s.incidentExplanation)
	s.handle(get, "/incidents/{id}/replay-timeline", s.replayTimeline)
	s.handle(post, "/incidents/{id}/acknowledge", s.acknowledgeIncident)
	s.handle(post, "/incidents/{id}/resolve", s.resolveIncident)
	s.handle(post, "/incidents/{id}/snooze", s.snoozeIncident, withAccess(ownerOnly))
	s.handle(del, "/incidents/{id}/snooze", s.unsnoozeIncident)
	s.handle(get, "/incidents/{id}/escalation", s.escalation)
	s.handle(post, "/incidents/{id}/escalation/acknowledge", s.acknowledgeIncident)
	s.handle(get, "/incidents/{id}/notes", s.listNotes)
	s.handle(post, "/incidents/{id}/notes", s.addNote)
	s.handle(del, "/incidents/{id}/notes/{noteId}", s.deleteNote)
	s.handle(put, "/incidents/{id}/postmortem", s.putPostmortem)
	s.handle(post, "/incidents/{id}/runbook", s.attachRunbook)
	s.handle(patch, "/incidents/{id}/runbook-steps/{stepId}", s.setRunbookStep)

	// Maintenance windows: readable, changes owner-only.
	s.handle(get, "/maintenance", s.listMaintenance)
	owner := withAccess(ownerOnly)
	s.handle(post, "/maintenance", s.createMaintenance, owner)
	s.handle(put, "/maintenance/{id}", s.updateMaintenance, owner)
	s.handle(patch, "/maintenance/{id}", s.updateMaintenance, owner)
	s.handle(del, "/maintenance/{id}", s.deleteMaintenance, owner)

	// Status pages (REST; /status/{slug} is public, above).
	pages := withFeature(monv1.FeatureStatusPages)
	s.handle(get, "/status/pages/me", s.listPages)
	s.handle(get, "/status/pages/overview", s.pagesOverview)
	s.handle(post, "/status/pages", s.createPage, pages)
	s.handle(get, "/status/pages/monitor/{monitorId}", s.listPages)
	s.handle(get, "/status/pages/{id}", s.getPage)
	s.handle(patch, "/status/pages/{id}", s.updatePage, pages)
	s.handle(del, "/status/pages/{id}", s.deletePage)
	s.handle(put, "/status/pages/{id}/monitors", s.putPageMonitors, pages)
	s.handle(post, "/status/pages/{id}/monitors", s.addPageMonitor, pages)
	s.handle(del, "/status/pages/{id}/monitors/{monitorId}", s.removePageMonitor)
	s.handle(get, "/status/pages/{id}/access", s.getPageAccess)
	s.handle(put, "/status/pages/{id}/access", s.putPageAccess, owner)
	s.handle(post, "/status/pages/{id}/access/revoke-sessions", s.revokePageSessions, owner)
	s.handle(put, "/status/pages/{id}/domain", s.putPageDomain, owner)
	s.handle(get, "/status/pages/{id}/subscribers", s.pageSubscribers)
	s.handle(get, "/status/pages/{id}/languages", s.getPageLanguages)
	s.handle(put, "/status/pages/{id}/languages", s.putPageLanguages, pages)

	// Alert channels.
	automation := withAccess(automationKey)
	s.handle(get, "/integrations", s.listIntegrations)
	s.handle(get, "/integrations/alert-contacts", s.alertRecipients)
	s.handle(post, "/integrations/{type}/connections", s.createConnection, automation)
	s.handle(put, "/integrations/connections/{connectionId}", s.updateConnection, automation)
	s.handle(del, "/integrations/connections/{connectionId}", s.deleteConnection, automation)
	s.handle(put, "/integrations/connections/{connectionId}/routing", s.putRouting, automation)
	s.handle(post, "/integrations/connections/{connectionId}/test", s.testConnection, withLimit(l.channelTestWS, l.channelTestIP))
	s.handle(post, "/integrations/connections/{connectionId}/rotate-secret", s.rotateSigningSecret, owner)

	// Alert recipients and settings (read only for keys).
	s.handle(get, "/alert-recipients", s.alertRecipients)
	s.handle(post, "/alert-recipients", s.addRecipient, owner)
	s.handle(post, "/alert-recipients/resend", s.resendConfirmation)
	s.handle(del, "/alert-recipients/{email}", s.removeRecipient, owner)
	s.handle(get, "/settings/escalation-policies", s.listEscalationPolicies)
	s.handle(get, "/settings/on-call-schedules", s.listOnCallSchedules)
	s.handle(get, "/settings/on-call-schedules/current", s.currentOnCall)
	s.handle(get, "/settings/suppression-windows", emptyList)
	s.handle(get, "/settings/notifications", s.notificationSettings)
	s.handle(get, "/settings/notification-attempts", s.notificationAttempts)

	// Reliability.
	slo := withFeature(monv1.FeatureSLO)
	deps := withFeature(monv1.FeatureDependencies)
	s.handle(get, "/reliability/overview", s.reliabilityOverview)
	s.handle(get, "/reliability/monitor/{monitorId}", s.reliabilityMonitor)
	s.handle(get, "/reliability/dependencies", s.listDependencies, deps)
	s.handle(post, "/reliability/dependencies", s.createDependency, owner, deps)
	s.handle(del, "/reliability/dependencies/{id}", s.deleteDependency, owner, deps)
	s.handle(get, "/reliability/slo-targets", s.listSLOs, slo)
	s.handle(post, "/reliability/slo-targets", s.upsertSLO, slo)
	s.handle(put, "/reliability/slo-targets/{id}", s.updateSLO, slo)
	s.handle(del, "/reliability/slo-targets/{id}", s.deleteSLO, slo)

	// Domain/SSL expiry, DNS acceptance and AI incident assist.
	s.registerExpiryRoutes(s.opts.Expiry)
	s.registerAssistRoutes(s.opts.Assist)
	s.registerSiteHealthRoutes(s.opts.SiteHealth)
	s.registerThirdPartyRoutes(s.opts.ThirdParty)
	s.registerOTelRoutes(s.opts.OTel)

	// Endpoints of the human account never accept API keys.
	for _, p := range []string{"/account", "/account/*", "/team/*", "/billing/*", "/api-keys", "/api-keys/*",
		"/workspaces", "/workspaces/*", "/subscription", "/subscription/*", "/checkout", "/checkout/*", "/auth/*"} {
		s.router.Handle(p, s.cors(s.authenticated(s.guard(route{access: sessionOnly}, nil))))
	}
}
