package apiserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

var _ = Describe("Access levels", func() {
	DescribeTable("refuses what a key may not do",
		func(method, path, level, ns string, body any, status int, code string) {
			rec := do(method, path, key(ns, level), body)
			Expect(rec.Code).To(Equal(status), rec.Body.String())
			Expect(obj(rec)["code"]).To(Equal(code))
		},
		Entry("automation-only channel create with a standard key", "POST", "/integrations/slack/connections", "standard", "team",
			map[string]any{"webhook_url": "https://hooks.example.com/x"}, http.StatusForbidden, "AUTOMATION_KEY_REQUIRED"),
		Entry("automation-only channel create with a read-only key", "POST", "/integrations/slack/connections", "read-only", "team",
			map[string]any{}, http.StatusForbidden, "READ_ONLY_ACCESS"),
		Entry("owner-only maintenance create", "POST", "/maintenance", "automation", "team", map[string]any{}, http.StatusForbidden, "WORKSPACE_OWNER_REQUIRED"),
		Entry("owner-only snooze", "POST", "/incidents/x/snooze", "automation", "team", nil, http.StatusForbidden, "WORKSPACE_OWNER_REQUIRED"),
		Entry("owner-only status page access", "PUT", "/status/pages/x/access", "automation", "team", map[string]any{}, http.StatusForbidden, "WORKSPACE_OWNER_REQUIRED"),
		Entry("owner-only dependencies", "POST", "/reliability/dependencies", "standard", "team", map[string]any{}, http.StatusForbidden, "WORKSPACE_OWNER_REQUIRED"),
		Entry("session-only account endpoint", "GET", "/account/profile", "automation", "team", nil, http.StatusForbidden, "SESSION_AUTH_REQUIRED"),
		Entry("session-only team members", "GET", "/team/members", "standard", "team", nil, http.StatusForbidden, "SESSION_AUTH_REQUIRED"),
		Entry("plan without status pages", "POST", "/status/pages", "standard", "free-ws", map[string]any{"title": "x"}, http.StatusForbidden, "FEATURE_NOT_AVAILABLE"),
	)

	It("gives the feature error its plan, required_plan and upgradePath", func() {
		rec := do("GET", "/incidents/deploy-events", key("free-ws", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusForbidden))
		m := obj(rec)
		Expect(m["code"]).To(Equal("FEATURE_NOT_AVAILABLE"))
		Expect(m["plan"]).To(Equal("free"))
		Expect(m["required_plan"]).To(Equal("starter"))
		Expect(m["upgradePath"]).To(ContainSubstring("uptime-operator.io/plan=starter"))
		Expect(m["details"]).To(HaveKeyWithValue("feature", "deploy-events"))
	})
})

var _ = Describe("Monitor groups", func() {
	It("creates, renames, summarises and deletes groups; emails are owner-only", func() {
		rec := do("POST", "/monitor-groups", key("team", "standard"), map[string]any{"name": "Payments"})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		g := obj(rec)
		gid := g["id"].(string)
		m := createMonitor("team", map[string]any{"name": "pay", "url": "https://example.com", "group_id": gid})
		Expect(m["group_id"]).To(Equal(gid))

		rec = do("POST", "/monitor-groups", key("team", "standard"), map[string]any{"name": "x", "notification_emails": []string{"a@example.com"}})
		Expect(rec.Code).To(Equal(http.StatusForbidden))
		Expect(obj(rec)["code"]).To(Equal("WORKSPACE_OWNER_REQUIRED"))
		rec = do("POST", "/monitor-groups", key("team", "standard"), map[string]any{})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ContainElement("name"))

		rec = do("PUT", "/monitor-groups/"+gid, key("team", "standard"), map[string]any{"name": "Billing"})
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(obj(rec)["name"]).To(Equal("Billing"))
		Eventually(func() any {
			return obj(do("GET", "/monitor-groups/"+gid+"/summary", key("team", "read-only"), nil))["total"]
		}).Should(Equal(1.0))
		Expect(do("GET", "/monitor-groups/"+gid+"/summary", key("other", "standard"), nil).Code).To(Equal(http.StatusNotFound))

		Expect(do("DELETE", "/monitor-groups/"+gid, key("team", "standard"), nil).Code).To(Equal(http.StatusNoContent))
		Expect(do("DELETE", "/monitor-groups/"+gid, key("team", "standard"), nil).Code).To(Equal(http.StatusNotFound))
		Expect(monitorCR("team", m["id"].(string)).Spec.GroupRef).To(BeNil())
	})
})

// openIncident opens an incident on a new monitor of ns through the API.
func openIncident(ns, name string) (monitorID string, incident map[string]any) {
	monitorID = createMonitor(ns, map[string]any{"name": name, "url": "https://example.com", "tags": []string{"checkout"}})["id"].(string)
	rec := do("POST", "/incidents", key(ns, "standard"), map[string]any{"monitor_id": monitorID})
	ExpectWithOffset(1, rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
	return monitorID, obj(rec)
}

var _ = Describe("Incidents", func() {
	It("opens, acknowledges, annotates and resolves an incident", func() {
		mid, inc := openIncident("team", "inc-life")
		id := inc["id"].(string)
		Expect(inc["monitor_id"]).To(Equal(mid))
		Expect(inc["resolved_at"]).To(BeNil())
		Expect(inc["confirming_regions"]).To(Equal([]any{"eu-1"}))

		rec := do("POST", "/incidents", key("team", "standard"), map[string]any{"monitor_id": mid})
		Expect(rec.Code).To(Equal(http.StatusConflict))

		rec = do("POST", "/incidents/"+id+"/acknowledge", key("team", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["acknowledged_by_name"]).To(Equal("API key standard key"))

		rec = do("POST", "/incidents/"+id+"/notes", key("team", "standard"), map[string]any{"body": "looking", "public": true})
		Expect(rec.Code).To(Equal(http.StatusCreated))
		noteID := obj(rec)["id"].(string)
		Expect(arr(do("GET", "/incidents/"+id+"/notes", key("team", "read-only"), nil))).To(HaveLen(1))
		Expect(do("POST", "/incidents/"+id+"/notes", key("team", "standard"), map[string]any{"body": ""}).Code).To(Equal(http.StatusBadRequest))
		Expect(do("DELETE", "/incidents/"+id+"/notes/"+noteID, key("team", "standard"), nil).Code).To(Equal(http.StatusNoContent))
		Expect(do("DELETE", "/incidents/"+id+"/notes/"+noteID, key("team", "standard"), nil).Code).To(Equal(http.StatusNotFound))

		Expect(do("PUT", "/incidents/"+id+"/postmortem", key("team", "standard"), map[string]any{"postmortem": "root cause"}).Code).To(Equal(http.StatusOK))
		rec = do("PUT", "/incidents/"+id+"/postmortem", key("team", "standard"), map[string]any{"postmortem": strings.Repeat("x", 50001)})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))

		rec = do("POST", "/incidents/"+id+"/resolve", key("team", "standard"), map[string]any{"note": "fixed"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["resolved_manually"]).To(BeTrue())
		rec = do("POST", "/incidents/"+id+"/resolve", key("team", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusConflict))
		Expect(obj(rec)["code"]).To(Equal("INCIDENT_RESOLVED"))

		detail := obj(do("GET", "/incidents/"+id, key("team", "read-only"), nil))
		Expect(detail["postmortem"]).To(Equal("root cause"))
		timeline := obj(do("GET", "/incidents/"+id+"/replay-timeline?limit=2", key("team", "read-only"), nil))
		Expect(timeline["items"]).To(HaveLen(2))
		Expect(timeline["next_cursor"]).NotTo(BeNil())

		Expect(do("GET", "/incidents/"+id, key("other", "standard"), nil).Code).To(Equal(http.StatusNotFound))
		Expect(do("POST", "/incidents/"+id+"/acknowledge", key("team", "read-only"), nil).Code).To(Equal(http.StatusForbidden))
		Expect(obj(do("GET", "/incidents/"+id+"/explanation", key("team", "read-only"), nil))["fault_verdict"]).To(Equal("yours"))
		Expect(do("DELETE", "/incidents/"+id+"/snooze", key("team", "standard"), nil).Code).To(Equal(http.StatusOK))
	})

	It("lists with filters, pages and counts, and exports", func() {
		for i := range 3 {
			openIncident("other", fmt.Sprintf("list-%d", i))
		}
		rec := do("GET", "/incidents?page_size=2&status=ongoing", key("other", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		page := obj(rec)
		Expect(page["items"]).To(HaveLen(2))
		Expect(page["page"]).To(Equal(1.0))
		Expect(page["page_size"]).To(Equal(2.0))
		Expect(page["total"]).To(BeNumerically(">=", 3))
		Expect(page["counts"]).To(HaveKey("suppressed"))
		item := page["items"].([]any)[0].(map[string]any)
		for _, f := range []string{"id", "monitor_id", "monitor_name", "monitor_url", "monitor_type", "started_at", "resolved_at", "duration_seconds",
			"alert_suppressed", "suppression_reason", "is_flapping", "confirmations", "confirming_regions", "confirming_region_names",
			"regions_total", "acknowledged_at", "acknowledged_by_name", "snoozed_until", "resolved_manually", "code_host_issue_url"} {
			Expect(item).To(HaveKey(f))
		}
		page2 := obj(do("GET", "/incidents?page_size=2&page=2&status=ongoing", key("other", "standard"), nil))
		Expect(page2["items"]).NotTo(BeEmpty())
		Expect(obj(do("GET", "/incidents?q=list-1", key("other", "standard"), nil))["total"]).To(Equal(1.0))

		for _, bad := range []string{"page_size=101", "page_size=0", "page=0", "status=weird", "from=notadate", "q=" + strings.Repeat("q", 201)} {
			Expect(do("GET", "/incidents?"+bad, key("other", "standard"), nil).Code).To(Equal(http.StatusBadRequest), bad)
		}
		rec = do("GET", "/incidents/export", key("other", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(rec.Header().Get("Content-Type")).To(HavePrefix("text/csv"))
		Expect(strings.Count(rec.Body.String(), "\n")).To(BeNumerically(">=", 4))
		rec = do("GET", "/incidents/export?format=json", key("other", "standard"), nil)
		Expect(obj(rec)["items"]).NotTo(BeEmpty())
	})

	It("keeps runbooks as ConfigMaps and attaches them to incidents", func() {
		rec := do("POST", "/incidents/runbooks", key("team", "standard"), map[string]any{"name": "Checkout down",
			"service_tag": "checkout", "steps": []any{map[string]any{"title": "Check DB"}, map[string]any{"title": "Page on-call"}}})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		rbID := obj(rec)["id"].(string)
		Expect(do("POST", "/incidents/runbooks", key("team", "standard"), map[string]any{"name": "x", "steps": []any{}}).Code).To(Equal(http.StatusBadRequest))

		_, inc := openIncident("team", "rb-inc")
		id := inc["id"].(string)
		rec = do("POST", "/incidents/"+id+"/runbook", key("team", "standard"), map[string]any{})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		rb := obj(rec)["runbook"].(map[string]any)
		Expect(rb["runbook_id"]).To(Equal(rbID))
		step := rb["steps"].([]any)[0].(map[string]any)["id"].(string)
		rec = do("PATCH", "/incidents/"+id+"/runbook-steps/"+step, key("team", "standard"), map[string]any{"is_completed": true})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["runbook"].(map[string]any)["steps"].([]any)[0].(map[string]any)["is_completed"]).To(BeTrue())
		Expect(do("PATCH", "/incidents/"+id+"/runbook-steps/"+step, key("team", "standard"), map[string]any{}).Code).To(Equal(http.StatusBadRequest))

		Expect(do("PUT", "/incidents/runbooks/"+rbID, key("team", "standard"), map[string]any{"name": "Renamed", "steps": []any{map[string]any{"title": "one"}}}).Code).To(Equal(http.StatusOK))
		Expect(arr(do("GET", "/incidents/runbooks", key("team", "read-only"), nil))[0].(map[string]any)["name"]).To(Equal("Renamed"))
		Expect(do("GET", "/incidents/runbooks", key("other", "standard"), nil).Body.String()).To(MatchJSON("[]"))
		Expect(do("DELETE", "/incidents/runbooks/"+rbID, key("other", "standard"), nil).Code).To(Equal(http.StatusNotFound))
		Expect(do("DELETE", "/incidents/runbooks/"+rbID, key("team", "standard"), nil).Code).To(Equal(http.StatusNoContent))
		Expect(do("DELETE", "/incidents/runbooks/"+rbID, key("team", "standard"), nil).Code).To(Equal(http.StatusNotFound))
	})

	It("records deploy events and refuses code-hosting payloads", func() {
		rec := do("POST", "/incidents/deploy-events", key("team", "standard"), map[string]any{"service_name": "api", "version": "1.2.3", "metadata": map[string]any{"sha": "abc"}})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		rec = do("POST", "/incidents/deploy-events", key("team", "standard"), map[string]any{"service_name": "api", "source": "github"})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(obj(rec)["code"]).To(Equal("USE_SIGNED_DEPLOY_HOOK"))
		Expect(do("POST", "/incidents/deploy-events", key("team", "standard"), map[string]any{}).Code).To(Equal(http.StatusBadRequest))
		events := obj(do("GET", "/incidents/deploy-events?limit=1", key("team", "read-only"), nil))["events"].([]any)
		Expect(events).To(HaveLen(1))
		Expect(do("GET", "/incidents/deploy-events?limit=101", key("team", "read-only"), nil).Code).To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("Stats", func() {
	It("answers the stats endpoints from the store", func() {
		id := createMonitor("team", map[string]any{"name": "stats", "url": "https://example.com"})["id"].(string)
		now := clk.Now()
		var checks []store.Check
		for i := range 10 {
			status := store.StatusUp
			if i == 0 {
				status = store.StatusDown
			}
			checks = append(checks, store.Check{ID: fmt.Sprintf("st-%s-%d", id, i), MonitorID: id, Namespace: "team", Region: "eu-1",
				CheckedAt: now.Add(-time.Duration(i+1) * time.Minute), Status: status, ResponseTimeMs: 100})
		}
		_, err := st.InsertChecks(ctx, checks)
		Expect(err).NotTo(HaveOccurred())

		s := obj(do("GET", "/stats/"+id+"/stats?days=1", key("team", "read-only"), nil))
		Expect(s["total_checks"]).To(Equal(10.0))
		Expect(s["successful_checks"]).To(Equal(9.0))
		Expect(s["failed_checks"]).To(Equal(1.0))
		Expect(s["uptime_percentage"]).To(Equal(90.0))
		Expect(s["avg_response_time_ms"]).To(Equal(100.0))
		Expect(obj(do("GET", "/stats/"+id+"/checks?limit=3", key("team", "read-only"), nil))["items"]).To(HaveLen(3))
		Expect(obj(do("GET", "/stats/"+id+"/response-series?range=1h", key("team", "read-only"), nil))["points"]).NotTo(BeEmpty())
		Expect(obj(do("GET", "/stats/"+id+"/response-time-chart?days=1&timeZone=Europe/Berlin", key("team", "read-only"), nil))["points"]).NotTo(BeEmpty())
		days := obj(do("GET", "/stats/"+id+"/uptime-history?days=3&tzOffsetMinutes=60", key("team", "read-only"), nil))["days"].([]any)
		Expect(days).To(HaveLen(3))
		bars := obj(do("GET", "/stats/"+id+"/24h-bars?days=2", key("team", "read-only"), nil))["days"].([]any)
		Expect(bars).To(HaveLen(2))
		Expect(bars[1].(map[string]any)).To(HaveKey("status"))
		Expect(obj(do("GET", "/stats/"+id+"/region-statuses", key("team", "read-only"), nil))["regions"]).To(HaveLen(1))
		Expect(obj(do("GET", "/stats/"+id+"/pause-windows", key("team", "read-only"), nil))["windows"]).To(BeEmpty())
		got := obj(do("GET", "/monitors/"+id, key("team", "read-only"), nil))
		Expect(got["uptime_24h"]).To(Equal(90.0))
		Expect(got["uptime_30d"]).To(Equal(90.0))

		for _, bad := range []string{"/stats/" + id + "/stats?days=0", "/stats/" + id + "/response-series?range=2h",
			"/stats/" + id + "/uptime-history?timeZone=Mars/Base", "/stats/" + id + "/pause-windows?hours=9000"} {
			Expect(do("GET", bad, key("team", "read-only"), nil).Code).To(Equal(http.StatusBadRequest), bad)
		}
		Expect(do("GET", "/stats/"+id+"/stats", key("other", "standard"), nil).Code).To(Equal(http.StatusNotFound))
	})
})

var _ = Describe("Status pages", func() {
	It("maps pages onto StatusPage CRs", func() {
		mid := createMonitor("team", map[string]any{"name": "page-mon", "url": "https://example.com"})["id"].(string)
		rec := do("POST", "/status/pages", key("team", "standard"), map[string]any{"title": "Acme Status", "is_public": true})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		p := obj(rec)
		id := p["id"].(string)
		Expect(p["slug"]).To(HavePrefix("acme-status-"))

		rec = do("PUT", "/status/pages/"+id+"/monitors", key("team", "standard"), map[string]any{"monitors": []any{map[string]any{"monitor_id": mid, "section": "Core"}}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["monitors"]).To(HaveLen(1))
		Eventually(func() []any { return arr(do("GET", "/status/pages/monitor/"+mid, key("team", "read-only"), nil)) }).Should(HaveLen(1))

		rec = do("PATCH", "/status/pages/"+id, key("team", "standard"), map[string]any{"accent_color": "#1f6feb", "logo_url": ""})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["accent_color"]).To(Equal("#1f6feb"))
		rec = do("PATCH", "/status/pages/"+id, key("team", "standard"), map[string]any{"colour": "red"})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ContainElement("colour"))
		rec = do("PATCH", "/status/pages/"+id, key("team", "standard"), map[string]any{"slug": "x"})
		Expect(validationFields(obj(rec))).To(ContainElement("slug"))

		Expect(do("DELETE", "/status/pages/"+id+"/monitors/"+mid, key("team", "standard"), nil).Code).To(Equal(http.StatusNoContent))
		Expect(do("DELETE", "/status/pages/"+id+"/monitors/"+mid, key("team", "standard"), nil).Code).To(Equal(http.StatusNotFound))
		Expect(obj(do("GET", "/status/pages/"+id+"/access", key("team", "read-only"), nil))["mode"]).To(Equal("public"))
		rec = do("PUT", "/status/pages/"+id+"/languages", key("team", "standard"), map[string]any{"default": "de", "enabled": []string{"en"}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(do("GET", "/status/pages/"+id+"/languages", key("team", "read-only"), nil))["default"]).To(Equal("de"))
		Expect(do("GET", "/status/pages/"+id, key("other", "standard"), nil).Code).To(Equal(http.StatusNotFound))
		Expect(do("DELETE", "/status/pages/"+id, key("team", "standard"), nil).Code).To(Equal(http.StatusNoContent))
		Expect(do("DELETE", "/status/pages/"+id, key("team", "standard"), nil).Code).To(Equal(http.StatusNotFound))
	})
})

var _ = Describe("Alert channels", func() {
	It("creates a webhook connection with a signing secret shown once", func() {
		rec := do("POST", "/integrations/webhook/connections", key("team", "automation"), map[string]any{
			"webhook_url": "https://93.184.216.34/hook", "name": "Ops hook", "routing": map[string]any{"scope": "all", "min_severity": "degraded"}})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		res := obj(rec)
		Expect(res["success"]).To(BeTrue())
		Expect(res["integration_type"]).To(Equal("webhook"))
		secret := res["signing_secret"].(string)
		Expect(secret).To(HavePrefix("whsec_"))
		id := res["connection_id"].(string)

		var list monv1.AlertChannelList
		Expect(k8s.List(ctx, &list, client.InNamespace("team"))).To(Succeed())
		var ch *monv1.AlertChannel
		for i := range list.Items {
			if string(list.Items[i].UID) == id {
				ch = &list.Items[i]
			}
		}
		Expect(ch).NotTo(BeNil())
		Expect(ch.Spec.SigningSecretRef).To(Equal(&monv1.SecretKeySelector{Name: monv1.SigningSecretName(ch.Name), Key: monv1.SigningSecretKey}))
		var sec corev1.Secret
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "team", Name: ch.Name + "-signing"}, &sec)).To(Succeed())
		Expect(string(sec.Data[monv1.SigningSecretKey])).To(Equal(secret))

		Eventually(func() []any {
			return obj(do("GET", "/integrations", key("team", "read-only"), nil))["connections"].([]any)
		}).Should(HaveLen(1))
		conn := obj(do("GET", "/integrations", key("team", "read-only"), nil))["connections"].([]any)[0].(map[string]any)
		Expect(conn).NotTo(HaveKey("signing_secret"))
		Expect(conn["routing"]).To(HaveKeyWithValue("min_severity", "degraded"))

		rec = do("PUT", "/integrations/connections/"+id+"/routing", key("team", "automation"), map[string]any{"scope": "monitors", "monitor_ids": []string{}})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(do("POST", "/integrations/connections/"+id+"/test", key("team", "standard"), nil).Code).To(Equal(http.StatusServiceUnavailable))
		Expect(do("DELETE", "/integrations/connections/"+id, key("team", "standard"), nil).Code).To(Equal(http.StatusForbidden))
		Expect(do("DELETE", "/integrations/connections/"+id, key("team", "automation"), nil).Code).To(Equal(http.StatusNoContent))
		Expect(do("DELETE", "/integrations/connections/"+id, key("team", "automation"), nil).Code).To(Equal(http.StatusNotFound))
	})

	It("keeps channel secrets in a Secret, refuses missing fields and unavailable channels", func() {
		rec := do("POST", "/integrations/pagerduty/connections", key("team", "automation"), map[string]any{"integration_key": "pdkey"})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		id := obj(rec)["connection_id"].(string)
		rec = do("PUT", "/integrations/connections/"+id, key("team", "automation"), map[string]any{"integration_key": "", "name": "PD"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["name"]).To(Equal("PD"))

		rec = do("POST", "/integrations/opsgenie/connections", key("team", "automation"), map[string]any{"api_key": "k"})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ContainElement("region"))
		rec = do("POST", "/integrations/sms/connections", key("free-ws", "automation"), map[string]any{"to": "+4915112345678"})
		Expect(rec.Code).To(Equal(http.StatusForbidden))
		Expect(obj(rec)["code"]).To(Equal("FEATURE_NOT_AVAILABLE"))
		Expect(do("POST", "/integrations/carrier-pigeon/connections", key("team", "automation"), map[string]any{}).Code).To(Equal(http.StatusNotFound))
	})

	It("refuses an eleventh connection of a type with 409 CONNECTION_LIMIT_REACHED", func() {
		for i := range 10 {
			rec := do("POST", "/integrations/telegram/connections", key("other", "automation"), map[string]any{"chat_id": fmt.Sprint(i)})
			Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		}
		rec := do("POST", "/integrations/telegram/connections", key("other", "automation"), map[string]any{"chat_id": "11"})
		Expect(rec.Code).To(Equal(http.StatusConflict), rec.Body.String())
		Expect(obj(rec)["code"]).To(Equal("CONNECTION_LIMIT_REACHED"))
	})
})

var _ = Describe("Reliability", func() {
	It("creates or replaces one SLO target per monitor", func() {
		mid := createMonitor("team", map[string]any{"name": "slo-mon", "url": "https://example.com"})["id"].(string)
		rec := do("POST", "/reliability/slo-targets", key("team", "standard"), map[string]any{"monitor_id": mid, "target_percentage": 99.9})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		first := obj(rec)
		Expect(first["monitor_id"]).To(Equal(mid))
		Expect(first["window_minutes"]).To(Equal(43200.0))
		rec = do("POST", "/reliability/slo-targets", key("team", "standard"), map[string]any{"monitor_id": mid, "target_percentage": 99.5, "sli_type": "latency"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["id"]).To(Equal(first["id"]))
		id := first["id"].(string)
		Expect(do("PUT", "/reliability/slo-targets/"+id, key("team", "standard"), map[string]any{"monitor_id": mid}).Code).To(Equal(http.StatusBadRequest))
		rec = do("PUT", "/reliability/slo-targets/"+id, key("team", "standard"), map[string]any{"target_percentage": 80})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ConsistOf("target_percentage"))
		Expect(do("PUT", "/reliability/slo-targets/"+id, key("team", "standard"), map[string]any{"is_enabled": false}).Code).To(Equal(http.StatusOK))
		Expect(do("DELETE", "/reliability/slo-targets/"+id, key("team", "standard"), nil).Code).To(Equal(http.StatusNoContent))
		Expect(do("DELETE", "/reliability/slo-targets/"+id, key("team", "standard"), nil).Code).To(Equal(http.StatusNotFound))
	})
})
