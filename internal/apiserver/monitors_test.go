package apiserver_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/aggregated"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// createMonitor creates a monitor through the API and returns its object.
func createMonitor(ns string, body map[string]any) map[string]any {
	rec := do("POST", "/monitors", key(ns, "standard"), body)
	ExpectWithOffset(1, rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
	return obj(rec)
}

// monitorCR reads the Monitor with uid id straight from the API server.
func monitorCR(ns, id string) *monv1.Monitor {
	var list monv1.MonitorList
	ExpectWithOffset(1, k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	for i := range list.Items {
		if string(list.Items[i].UID) == id {
			return &list.Items[i]
		}
	}
	return nil
}

// validationFields returns the field names of a validation error response.
func validationFields(m map[string]any) []string {
	var out []string
	errs, _ := m["errors"].([]any)
	for _, e := range errs {
		out = append(out, e.(map[string]any)["field"].(string))
	}
	return out
}

var _ = Describe("Authentication and access", func() {
	It("refuses a missing key with 401 and no code", func() {
		rec := do("GET", "/monitors", "", nil)
		Expect(rec.Code).To(Equal(http.StatusUnauthorized))
		Expect(obj(rec)).To(Equal(map[string]any{"error": "No token provided"}))
	})
	It("refuses an unknown key with 401 Invalid API key", func() {
		rec := do("GET", "/monitors", "sk_doesnotexist", nil)
		Expect(rec.Code).To(Equal(http.StatusUnauthorized))
		Expect(obj(rec)).To(Equal(map[string]any{"error": "Invalid API key"}))
	})
	It("refuses a foreign X-Workspace-Id with 403 WORKSPACE_ACCESS_DENIED", func() {
		rec := do("GET", "/monitors", key("team", "standard"), nil, header("X-Workspace-Id", "other"))
		Expect(rec.Code).To(Equal(http.StatusForbidden))
		Expect(obj(rec)["code"]).To(Equal("WORKSPACE_ACCESS_DENIED"))
		Expect(do("GET", "/monitors", key("team", "standard"), nil, header("X-Workspace-Id", "team")).Code).To(Equal(http.StatusOK))
	})
	It("refuses writes of a read-only key with 403 READ_ONLY_ACCESS and allows its reads", func() {
		Expect(do("GET", "/monitors", key("team", "read-only"), nil).Code).To(Equal(http.StatusOK))
		rec := do("POST", "/monitors", key("team", "read-only"), map[string]any{"name": "x", "url": "https://example.com"})
		Expect(rec.Code).To(Equal(http.StatusForbidden))
		Expect(obj(rec)["code"]).To(Equal("READ_ONLY_ACCESS"))
	})
	It("refuses browser origins with 403 CORS_REJECTED and allows requests without Origin", func() {
		rec := do("GET", "/monitors", key("team", "standard"), nil, header("Origin", "https://evil.example"))
		Expect(rec.Code).To(Equal(http.StatusForbidden))
		Expect(obj(rec)["code"]).To(Equal("CORS_REJECTED"))
		Expect(do("GET", "/monitors", key("team", "standard"), nil, header("Origin", "https://uptime.example.com")).Code).To(Equal(http.StatusOK))
	})
	It("serves callers of the aggregated front door by their RBAC level, without a key", func() {
		as := func(level string) reqOpt {
			return func(r *http.Request) {
				*r = *apiserver.InjectIdentity(r, aggregated.Identity{Namespace: "team", User: "alice", Level: level})
			}
		}
		rec := do("GET", "/automation/whoami", "", nil, as("read-only"))
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).To(HaveKeyWithValue("auth_type", "kubernetes"))
		rec = do("POST", "/monitors", "", map[string]any{"name": "x", "url": "https://example.com"}, as("read-only"))
		Expect(rec.Code).To(Equal(http.StatusForbidden))
		Expect(obj(rec)["code"]).To(Equal("READ_ONLY_ACCESS"))
		Expect(do("POST", "/integrations/slack/connections", "", map[string]any{}, as("standard")).Code).To(Equal(http.StatusForbidden))
	})
	It("sets the RateLimit headers on authenticated responses", func() {
		rec := do("GET", "/monitors", key("other", "standard"), nil)
		Expect(rec.Header().Get("RateLimit-Limit")).To(Equal("1200"))
		Expect(rec.Header().Get("RateLimit-Remaining")).NotTo(BeEmpty())
		Expect(rec.Header().Get("RateLimit-Reset")).NotTo(BeEmpty())
	})
	It("blocks an address after more than 100 invalid keys in 15 minutes", func() {
		ip := fromIP("192.0.2.77")
		for range 100 {
			Expect(do("GET", "/monitors", "sk_wrong", nil, ip).Code).To(Equal(http.StatusUnauthorized))
		}
		rec := do("GET", "/monitors", key("team", "standard"), nil, ip)
		Expect(rec.Code).To(Equal(http.StatusTooManyRequests))
		Expect(rec.Header().Get("Retry-After")).NotTo(BeEmpty())
		clk.SetTime(clk.Now().Add(15 * time.Minute))
		Expect(do("GET", "/monitors", key("team", "standard"), nil, ip).Code).To(Equal(http.StatusOK))
	})
	It("limits monitor writes to 120 per 15 minutes per address with a plain-text 429", func() {
		ip := fromIP("192.0.2.88")
		for range 120 {
			Expect(do("POST", "/monitors/00000000-0000-0000-0000-000000000000/pause", key("team", "standard"), nil, ip).Code).
				To(Equal(http.StatusNotFound))
		}
		rec := do("POST", "/monitors/00000000-0000-0000-0000-000000000000/pause", key("team", "standard"), nil, ip)
		Expect(rec.Code).To(Equal(http.StatusTooManyRequests))
		Expect(rec.Body.String()).To(Equal("Too many requests, please try again later"))
		Expect(rec.Header().Get("Retry-After")).NotTo(BeEmpty())
		Expect(rec.Header().Get("RateLimit-Limit")).To(Equal("120"))
		Expect(rec.Header().Get("RateLimit-Remaining")).To(Equal("0"))
		// Reads from the same address are not monitor writes.
		Expect(do("GET", "/monitors", key("team", "standard"), nil, ip).Code).To(Equal(http.StatusOK))
	})
	It("answers 413 PAYLOAD_TOO_LARGE over 100 KB and 400 BAD_REQUEST for bad JSON", func() {
		big := `{"name":"` + strings.Repeat("x", 101<<10) + `"}`
		rec := do("POST", "/monitors", key("team", "standard"), big)
		Expect(rec.Code).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(obj(rec)["code"]).To(Equal("PAYLOAD_TOO_LARGE"))
		rec = do("POST", "/monitors", key("team", "standard"), `{"name": `)
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(obj(rec)["code"]).To(Equal("BAD_REQUEST"))
	})
})

var _ = Describe("Monitors", func() {
	It("creates a monitor as a CR and returns the monitor object", func() {
		m := createMonitor("team", map[string]any{
			"name": "Shop API", "type": "api", "url": "https://93.184.216.34/health", "interval_seconds": 60,
			"tags": []string{"Prod", "prod", "EU"}, "regions": []string{"eu-1", "us-1"},
			"config": map[string]any{"method": "post", "timeout": 5000, "headers": map[string]any{"X-Token": "abc"},
				"expected_status_codes": []int{200, 201}, "assertions": []any{map[string]any{"source": "status_code", "operator": "equals", "target": 200}},
				"notification_emails": []string{"ops@example.com"}},
		})
		Expect(m["id"]).NotTo(BeEmpty())
		Expect(m).To(HaveKeyWithValue("name", "Shop API"))
		Expect(m).To(HaveKeyWithValue("type", "api"))
		Expect(m).To(HaveKeyWithValue("interval_seconds", 60.0))
		Expect(m).To(HaveKeyWithValue("is_active", true))
		Expect(m["tags"]).To(Equal([]any{"prod", "eu"}))
		Expect(m["effective_regions"]).To(Equal([]any{"eu-1", "us-1"}))
		Expect(m["effective_timeout_ms"]).To(Equal(5000.0))
		Expect(m["current_status"]).To(Equal("pending"))
		Expect(m["uptime_24h"]).To(BeNil())
		Expect(m["heartbeat_url"]).To(BeNil())
		cfg := m["config"].(map[string]any)
		Expect(cfg).To(HaveKeyWithValue("method", "POST"))
		Expect(cfg).To(HaveKeyWithValue("timeout", 5000.0))
		Expect(cfg["headers"]).To(Equal(map[string]any{"X-Token": "[REDACTED]"}), "header values are credentials")
		// notification_emails sent with an API key is ignored.
		Expect(cfg).NotTo(HaveKey("notification_emails"))

		cr := monitorCR("team", m["id"].(string))
		Expect(cr).NotTo(BeNil())
		Expect(cr.Name).To(HavePrefix("shop-api-"))
		Expect(cr.Spec.HTTP.TimeoutMs).To(Equal(int32(5000)))
		Expect(cr.Spec.HTTP.Assertions).To(HaveLen(1))
		Expect(cr.Spec.NotificationEmails).To(BeEmpty())

		got := do("GET", "/monitors/"+m["id"].(string), key("team", "read-only"), nil)
		Expect(got.Code).To(Equal(http.StatusOK))
		Expect(obj(got)["name"]).To(Equal("Shop API"))
	})

	It("maps the config of every type onto its typed struct and back", func() {
		cases := []map[string]any{
			{"name": "ping", "type": "ping", "config": map[string]any{"host": "93.184.216.34", "timeout": 5, "packet_count": 20}},
			{"name": "port", "type": "port", "config": map[string]any{"host": "93.184.216.34", "port": 443, "tls": true}},
			{"name": "udp", "type": "udp", "config": map[string]any{"host": "93.184.216.34", "port": 53, "payload_hex": "00ff"}},
			{"name": "cron", "type": "cron", "config": map[string]any{"cron_expression": "*/5 * * * *", "grace_seconds": 60}},
			{"name": "dns", "type": "dns", "config": map[string]any{"name": "example.com", "record_type": "mx", "expected_values": []string{"10 mx.example.com."}, "match_mode": "all"}},
			{"name": "steps", "type": "multistep", "config": map[string]any{"steps": []any{
				map[string]any{"name": "login", "method": "POST", "url": "https://93.184.216.34/login", "extract": []any{map[string]any{"variable": "tok", "source": "json_body", "property": "$.token"}}},
				map[string]any{"name": "me", "url": "https://93.184.216.34/me", "headers": map[string]any{"Authorization": "Bearer {{tok}}"}},
			}}},
			{"name": "mcp", "type": "mcp", "url": "https://93.184.216.34/mcp", "config": map[string]any{"expected_tools": []string{"search"}, "tool_call": map[string]any{"name": "search", "arguments": map[string]any{"q": "x"}}}},
		}
		for _, body := range cases {
			m := createMonitor("team", body)
			cfg := m["config"].(map[string]any)
			cr := monitorCR("team", m["id"].(string))
			switch body["type"] {
			case "ping":
				Expect(cr.Spec.Ping.TimeoutSeconds).To(Equal(int32(5)))
				Expect(cfg["packet_count"]).To(Equal(10.0), "clamped")
				Expect(m["effective_timeout_ms"]).To(Equal(5000.0))
			case "port":
				Expect(cr.Spec.Port.Port).To(Equal(int32(443)))
				Expect(cfg["tls"]).To(BeTrue())
			case "udp":
				Expect(cr.Spec.UDP.PayloadHex).To(Equal("00ff"))
			case "cron":
				Expect(cr.Spec.Cron.GraceSeconds).To(Equal(int32(60)))
				Expect(m["effective_regions"]).To(BeEmpty())
			case "dns":
				Expect(cr.Spec.DNS.RecordType).To(Equal(monv1.DNSRecordType("MX")))
				Expect(cfg["match_mode"]).To(Equal("all"))
			case "multistep":
				Expect(cr.Spec.Multistep.Steps).To(HaveLen(2))
				Expect(cr.Spec.Multistep.Steps[0].Extract[0].Variable).To(Equal("tok"))
				Expect(cfg["steps"].([]any)[1].(map[string]any)["headers"]).To(Equal(map[string]any{"Authorization": "[REDACTED]"}))
			case "mcp":
				Expect(cr.Spec.MCP.ToolCall.ArgumentsJSON).To(MatchJSON(`{"q":"x"}`))
				Expect(cfg["tool_call"]).To(Equal(map[string]any{"name": "search", "arguments": map[string]any{"q": "x"}}))
			}
		}
	})

	DescribeTable("refuses invalid bodies with the validation shape and REST field names",
		func(body map[string]any, fields ...string) {
			rec := do("POST", "/monitors", key("team", "standard"), body)
			Expect(rec.Code).To(Equal(http.StatusBadRequest), rec.Body.String())
			m := obj(rec)
			Expect(m["error"]).To(Equal("Validation failed"))
			Expect(m["code"]).To(Equal("VALIDATION_ERROR"))
			for _, f := range fields {
				Expect(validationFields(m)).To(ContainElement(f), rec.Body.String())
			}
			for _, e := range m["errors"].([]any) {
				Expect(e.(map[string]any)["message"]).NotTo(BeEmpty())
			}
		},
		Entry("missing name", map[string]any{"url": "https://example.com"}, "name"),
		Entry("interval out of range", map[string]any{"name": "a", "url": "https://example.com", "interval_seconds": 5}, "interval_seconds"),
		Entry("http timeout out of range", map[string]any{"name": "a", "url": "https://example.com", "config": map[string]any{"timeout": 10}}, "config.timeout"),
		Entry("ping timeout out of range", map[string]any{"name": "a", "type": "ping", "config": map[string]any{"host": "1.1.1.1", "timeout": 31}}, "config.timeout"),
		Entry("missing url", map[string]any{"name": "a", "type": "http"}, "url"),
		Entry("bad url", map[string]any{"name": "a", "url": "ftp://example.com"}, "url"),
		Entry("unknown type", map[string]any{"name": "a", "type": "no such type"}, "type"), // a name no type will ever take
		Entry("port without port", map[string]any{"name": "a", "type": "port", "config": map[string]any{"host": "1.1.1.1"}}, "config.port"),
		Entry("cron without expression", map[string]any{"name": "a", "type": "cron", "config": map[string]any{}}, "config.cron_expression"),
		// robfig/cron v3.0.1 panics on these three (issue 28 row 7).
		Entry("cron expression TZ=Europe/Berlin", map[string]any{"name": "a", "type": "cron", "config": map[string]any{"cron_expression": "TZ=Europe/Berlin"}}, "config.cron_expression"),
		Entry("cron expression CRON_TZ=UTC", map[string]any{"name": "a", "type": "cron", "config": map[string]any{"cron_expression": "CRON_TZ=UTC"}}, "config.cron_expression"),
		Entry("cron expression TZ=", map[string]any{"name": "a", "type": "cron", "config": map[string]any{"cron_expression": "TZ="}}, "config.cron_expression"),
		Entry("cron expression that never fires", map[string]any{"name": "a", "type": "cron", "config": map[string]any{"cron_expression": "0 0 30 2 *"}}, "config.cron_expression"),
		Entry("unknown config key", map[string]any{"name": "a", "url": "https://example.com", "config": map[string]any{"nope": 1}}, "config.nope"),
		Entry("config value of the wrong type", map[string]any{"name": "a", "url": "https://example.com", "config": map[string]any{"timeout": "fast"}}, "config.timeout"),
		Entry("degraded above max", map[string]any{"name": "a", "url": "https://example.com", "config": map[string]any{"max_response_time_ms": 100, "degraded_response_time_ms": 200}}, "config.degraded_response_time_ms"),
		Entry("too many tags", map[string]any{"name": "a", "url": "https://example.com", "tags": strings.Split("a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u", ",")}, "tags"),
		Entry("unknown group", map[string]any{"name": "a", "url": "https://example.com", "group_id": "1b4e28ba-2fa1-11d2-883f-0016d3cca427"}, "group_id"),
		Entry("unknown region (admission)", map[string]any{"name": "a", "url": "https://example.com", "regions": []string{"mars-1"}}, "regions"),
		Entry("config over 50 keys", map[string]any{"name": "a", "url": "https://example.com", "config": manyKeys(51)}, "config"),
	)

	It("says why a cron expression that never fires is refused", func() {
		rec := do("POST", "/monitors", key("team", "standard"), map[string]any{"name": "feb30", "type": "cron", "config": map[string]any{"cron_expression": "0 0 30 2 *"}})
		Expect(rec.Code).To(Equal(http.StatusBadRequest), rec.Body.String())
		errs := obj(rec)["errors"].([]any)
		Expect(errs).To(HaveLen(1))
		Expect(errs[0].(map[string]any)["message"]).To(ContainSubstring("never fires"))
	})

	It("refuses more monitors than the plan allows with 403 ENTITLEMENT_LIMIT_REACHED", func() {
		for i := range 3 {
			createMonitor("free-ws", map[string]any{"name": fmt.Sprintf("m%d", i), "url": "https://example.com", "interval_seconds": 60})
		}
		rec := do("POST", "/monitors", key("free-ws", "standard"), map[string]any{"name": "m4", "url": "https://example.com"})
		Expect(rec.Code).To(Equal(http.StatusForbidden), rec.Body.String())
		m := obj(rec)
		Expect(m["code"]).To(Equal("ENTITLEMENT_LIMIT_REACHED"))
		Expect(m["details"]).To(Equal(map[string]any{"resource": "monitors", "current": 3.0, "limit": 3.0}))
	})

	It("updates only the sent fields, maps is_active to paused and refuses a type change", func() {
		m := createMonitor("team", map[string]any{"name": "upd", "url": "https://example.com", "tags": []string{"a"},
			"config": map[string]any{"timeout": 2000, "keyword": "ok"}})
		id := m["id"].(string)
		rec := do("PUT", "/monitors/"+id, key("team", "standard"), map[string]any{"name": "upd2", "is_active": false, "config": map[string]any{"timeout": 3000}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		u := obj(rec)
		Expect(u["name"]).To(Equal("upd2"))
		Expect(u["is_active"]).To(BeFalse())
		Expect(u["current_status"]).To(Equal("paused"))
		Expect(u["tags"]).To(Equal([]any{"a"}))
		Expect(u["config"]).To(HaveKeyWithValue("timeout", 3000.0))
		Expect(u["config"]).To(HaveKeyWithValue("keyword", "ok"))
		Expect(monitorCR("team", id).Spec.Paused).To(BeTrue())
		windows, err := st.ListPauseWindows(ctx, id, time.Now().Add(-time.Hour))
		Expect(err).NotTo(HaveOccurred())
		Expect(windows).To(HaveLen(1))

		rec = do("PUT", "/monitors/"+id, key("team", "standard"), map[string]any{"type": "ping"})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ContainElement("type"))
	})

	It("pauses and resumes, recording pause windows", func() {
		id := createMonitor("team", map[string]any{"name": "pr", "url": "https://example.com"})["id"].(string)
		rec := do("POST", "/monitors/"+id+"/pause", key("team", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(obj(rec)["is_active"]).To(BeFalse())
		rec = do("POST", "/monitors/"+id+"/resume", key("team", "standard"), nil)
		Expect(obj(rec)["is_active"]).To(BeTrue())
		windows, err := st.ListPauseWindows(ctx, id, time.Now().Add(-time.Hour))
		Expect(err).NotTo(HaveOccurred())
		Expect(windows).To(HaveLen(1))
		Expect(windows[0].ResumedAt).NotTo(BeNil())
	})

	It("answers 404 for ids of other workspaces and for a second delete", func() {
		id := createMonitor("team", map[string]any{"name": "mine", "url": "https://example.com"})["id"].(string)
		for _, req := range [][2]string{{"GET", ""}, {"PUT", ""}, {"DELETE", ""}, {"POST", "/pause"}, {"GET", "/checks"}} {
			rec := do(req[0], "/monitors/"+id+req[1], key("other", "standard"), map[string]any{})
			Expect(rec.Code).To(Equal(http.StatusNotFound), req[0]+req[1])
			Expect(obj(rec)["code"]).To(Equal("NOT_FOUND"))
		}
		Expect(do("DELETE", "/monitors/"+id, key("team", "standard"), nil).Code).To(Equal(http.StatusNoContent))
		Expect(do("DELETE", "/monitors/"+id, key("team", "standard"), nil).Code).To(Equal(http.StatusNotFound))
		Expect(do("GET", "/monitors/"+id, key("team", "standard"), nil).Code).To(Equal(http.StatusNotFound))
	})

	It("lists monitors newest first, filters by tag and summarises", func() {
		createMonitor("other", map[string]any{"name": "first", "url": "https://example.com", "tags": []string{"blue"}})
		createMonitor("other", map[string]any{"name": "second", "url": "https://example.com", "tags": []string{"green"}})
		// Read-your-writes: the list shows both at once, before the cache may have seen them.
		Expect(arr(do("GET", "/monitors?tag=blue", key("other", "standard"), nil))).To(HaveLen(1))
		all := arr(do("GET", "/monitors", key("other", "standard"), nil))
		Expect(len(all)).To(BeNumerically(">=", 2))
		sum := obj(do("GET", "/monitors/summary", key("other", "standard"), nil))
		Expect(sum["total"]).To(BeNumerically(">=", 2))
		Expect(sum["counts"]).To(HaveKey("pending"))
	})

	It("runs bulk actions and reports failures per id", func() {
		a := createMonitor("team", map[string]any{"name": "b1", "url": "https://example.com"})["id"].(string)
		b := createMonitor("team", map[string]any{"name": "b2", "url": "https://example.com"})["id"].(string)
		foreign := createMonitor("other", map[string]any{"name": "b3", "url": "https://example.com"})["id"].(string)
		rec := do("POST", "/monitors/bulk", key("team", "standard"), map[string]any{"action": "add_tags", "ids": []string{a, b, foreign}, "tags": []string{"Bulk"}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		res := obj(rec)
		Expect(res["updated"]).To(Equal(2.0))
		Expect(res["failed"]).To(Equal([]any{map[string]any{"id": foreign, "error": "Monitor not found"}}))
		Expect(monitorCR("team", a).Spec.Tags).To(Equal([]string{"bulk"}))

		rec = do("POST", "/monitors/bulk", key("team", "standard"), map[string]any{"action": "explode", "ids": []string{}})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ConsistOf("action", "ids"))
	})

	It("tests an unsaved definition and runs a check of a saved monitor", func() {
		rec := do("POST", "/monitors/test", key("team", "standard"), map[string]any{"name": "adhoc", "url": "https://example.com"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).To(HaveKeyWithValue("status", "up"))
		id := createMonitor("team", map[string]any{"name": "rc", "url": "https://example.com"})["id"].(string)
		rec = do("POST", "/monitors/"+id+"/run-check", key("team", "standard"), map[string]any{"region": "us-1"})
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(obj(rec)).To(HaveKeyWithValue("region", "us-1"))
		Expect(eng.runs).To(ContainElements("adhoc//false", "rc/us-1/true"))
	})

	It("reads and changes regions", func() {
		id := createMonitor("team", map[string]any{"name": "rg", "url": "https://example.com", "regions": []string{"eu-1"}})["id"].(string)
		rec := do("PUT", "/monitors/"+id+"/regions", key("team", "standard"), map[string]any{"regions": []string{"us-1", "us-2"}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(monitorCR("team", id).Spec.Regions).To(Equal([]string{"us-1", "us-2"}))
		rec = do("PUT", "/monitors/"+id+"/regions", key("team", "standard"), map[string]any{"regions": []string{}})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		rec = do("PUT", "/monitors/"+id+"/regions", key("team", "standard"), map[string]any{"regions": []string{"mars-9"}})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ContainElement("regions"))
	})
})

func manyKeys(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = i
	}
	return m
}

var _ = Describe("Check history", func() {
	It("pages with a microsecond cursor that round-trips unchanged", func() {
		id := createMonitor("team", map[string]any{"name": "hist", "url": "https://example.com"})["id"].(string)
		base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		var checks []store.Check
		for i := range 7 {
			status := store.StatusUp
			if i%3 == 0 {
				status = store.StatusDown
			}
			checks = append(checks, store.Check{ID: fmt.Sprintf("%s-%d", id, i), MonitorID: id, Namespace: "team", Region: []string{"eu-1", "us-1"}[i%2],
				CheckedAt: base.Add(time.Duration(i)*time.Second + 123457*time.Microsecond), Status: status, ResponseTimeMs: int64(100 + i)})
		}
		_, err := st.InsertChecks(ctx, checks)
		Expect(err).NotTo(HaveOccurred())

		rec := do("GET", "/monitors/"+id+"/checks?limit=3", key("team", "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		page := obj(rec)
		items := page["items"].([]any)
		Expect(items).To(HaveLen(3))
		Expect(items[0].(map[string]any)["checked_at"]).To(Equal("2026-03-01T12:00:06.123457Z"))
		Expect(items[0].(map[string]any)).To(HaveKeyWithValue("error_message", BeNil()))
		next := page["next_before"].(string)
		Expect(next).To(Equal("2026-03-01T12:00:04.123457Z"))

		seen := len(items)
		for next != "" {
			page = obj(do("GET", "/monitors/"+id+"/checks?limit=3&before="+next, key("team", "read-only"), nil))
			seen += len(page["items"].([]any))
			next, _ = page["next_before"].(string)
		}
		Expect(seen).To(Equal(7))

		page = obj(do("GET", "/monitors/"+id+"/checks?status=problem", key("team", "read-only"), nil))
		Expect(page["items"]).To(HaveLen(3))
		page = obj(do("GET", "/monitors/"+id+"/checks?region=us-1&before=2026-03-01T12:00:05", key("team", "read-only"), nil))
		Expect(page["items"]).To(HaveLen(2))

		for _, bad := range []string{"limit=0", "limit=501", "before=yesterday", "before=2026-03-01T12:00:00.1234567Z", "status=sideways"} {
			rec := do("GET", "/monitors/"+id+"/checks?"+bad, key("team", "read-only"), nil)
			Expect(rec.Code).To(Equal(http.StatusBadRequest), bad)
			Expect(obj(rec)["code"]).To(Equal("VALIDATION_ERROR"))
		}

		rec = do("GET", "/monitors/"+id+"/checks.csv?status=down", key("team", "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(rec.Header().Get("Content-Type")).To(HavePrefix("text/csv"))
		Expect(rec.Header().Get("X-Export-Truncated")).To(BeEmpty())
		rows, err := csv.NewReader(rec.Body).ReadAll()
		Expect(err).NotTo(HaveOccurred())
		Expect(rows).To(HaveLen(4))
		Expect(rows[0][1]).To(Equal("checked_at"))

		full := obj(do("GET", "/monitors/"+id, key("team", "read-only"), nil))
		Expect(full["uptime_24h"]).To(BeNil(), "the checks are older than 24 hours")
	})
})

var _ = Describe("Heartbeats", func() {
	It("accepts pings by token, rotates the token and answers per spec", func() {
		m := createMonitor("team", map[string]any{"name": "nightly", "type": "cron", "config": map[string]any{"cron_expression": "0 3 * * *"}})
		id := m["id"].(string)
		rec := do("POST", "/monitors/"+id+"/heartbeat/rotate", key("team", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		url := obj(rec)["heartbeat_url"].(string)
		Expect(url).To(HavePrefix("https://uptime.example.com/heartbeat/"))
		path := strings.TrimPrefix(url, "https://uptime.example.com")
		tok := strings.TrimPrefix(path, "/heartbeat/")
		Expect(monitorCR("team", id).Annotations).To(HaveKeyWithValue(monv1.HeartbeatTokenHashAnnotation, monv1.HashHeartbeatToken(tok)),
			"the object holds the new token's hash")
		Expect(obj(do("GET", "/monitors/"+id, key("team", "read-only"), nil))["heartbeat_url"]).To(Equal(url),
			"GET shows the rotated URL, read from the monitor's credentials Secret")

		Eventually(func() int { return do("GET", path, "", nil).Code }).Should(Equal(http.StatusOK))
		rec = do("POST", path+"?status=fail&duration_ms=1500", "", nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(rec.Body.String()).To(Equal("OK"))
		Expect(eng.lastPing().OK).To(BeFalse())
		Expect(*eng.lastPing().DurationMs).To(Equal(int64(1500)))
		rec = do("HEAD", path, "", nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(rec.Body.Len()).To(BeZero())

		// Bad parameters answer the validation shape, naming the field.
		rec = do("GET", path+"?duration_ms=-1", "", nil)
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ConsistOf("duration_ms"))
		rec = do("GET", path+"?status=maybe", "", nil)
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ConsistOf("status"))
		Expect(do("GET", "/heartbeat/nope", "", nil).Code).To(Equal(http.StatusNotFound))

		// A paused monitor's pings are answered 200 and ignored.
		Expect(do("POST", "/monitors/"+id+"/pause", key("team", "standard"), nil).Code).To(Equal(http.StatusOK))
		Eventually(func() bool {
			var cur monv1.Monitor
			_ = env.Manager.GetClient().Get(ctx, client.ObjectKeyFromObject(monitorCR("team", id)), &cur)
			return cur.Spec.Paused
		}).Should(BeTrue())
		n := eng.pingCount()
		rec = do("GET", path, "", nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(eng.pingCount()).To(Equal(n))

		// The API-key variant.
		rec = do("POST", "/monitors/"+id+"/cron-heartbeat", key("team", "standard"), map[string]any{"status": "bogus"})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ContainElement("status"))

		// Rotation stops the old URL at once.
		Expect(do("POST", "/monitors/"+id+"/heartbeat/rotate", key("team", "standard"), nil).Code).To(Equal(http.StatusOK))
		Eventually(func() int { return do("GET", path, "", nil).Code }).Should(Equal(http.StatusNotFound))
	})

	It("limits one heartbeat URL to 60 pings per minute", func() {
		for range 60 {
			Expect(do("GET", "/heartbeat/limited-token", "", nil).Code).To(Equal(http.StatusNotFound))
		}
		rec := do("GET", "/heartbeat/limited-token", "", nil)
		Expect(rec.Code).To(Equal(http.StatusTooManyRequests))
		Expect(rec.Header().Get("Retry-After")).NotTo(BeEmpty())
	})
})

var _ = Describe("Public status routes", func() {
	It("passes /status/:slug paths to the status page server and keeps /status/pages for REST", func() {
		Expect(do("GET", "/status/acme", "", nil).Code).To(Equal(http.StatusOK))
		Expect(public.last).To(Equal("acme|"))
		Expect(do("GET", "/status/acme/badge.svg", "", nil).Code).To(Equal(http.StatusOK))
		Expect(public.last).To(Equal("acme|badge.svg"))
		Expect(do("GET", "/s/acme", "", nil).Code).To(Equal(http.StatusOK))
		Expect(public.last).To(Equal("html|acme"))
		Expect(do("GET", "/status/acme/secret", "", nil).Code).To(Equal(http.StatusNotFound))
		Expect(do("GET", "/status/pages/me", "", nil).Code).To(Equal(http.StatusUnauthorized))
	})
})

var _ = Describe("Cron monitors at create time", func() {
	// The URL a user pastes into a crontab must be in the create response,
	// not only once the controller has caught up.
	It("returns heartbeat_url in the 201 of POST /monitors and of a keyed create", func() {
		m := createMonitor("team", map[string]any{"name": "backup", "type": "cron", "config": map[string]any{"cron_expression": "0 4 * * *"}})
		url, ok := m["heartbeat_url"].(string)
		Expect(ok).To(BeTrue(), "heartbeat_url is %v", m["heartbeat_url"])
		tok := strings.TrimPrefix(url, "https://uptime.example.com/heartbeat/")
		Expect(tok).To(HaveLen(32))
		cr := monitorCR("team", m["id"].(string))
		Expect(cr.Annotations).To(HaveKeyWithValue(monv1.HeartbeatTokenHashAnnotation, monv1.HashHeartbeatToken(tok)))
		raw, err := json.Marshal(cr)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).NotTo(ContainSubstring(tok), "the Monitor, which view reads, holds no token")
		Eventually(func() int { return do("GET", "/heartbeat/"+tok, "", nil).Code }).Should(Equal(http.StatusOK), "the URL works")
		Expect(obj(do("GET", "/monitors/"+m["id"].(string), key("team", "read-only"), nil))["heartbeat_url"]).To(Equal(url),
			"the controller keeps the token minted at create")

		rec := do("PUT", "/automation/monitors/"+"cron%3Areport", key("team", "standard"), map[string]any{"name": "report", "type": "cron",
			"config": map[string]any{"cron_expression": "0 5 * * *"}})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		Expect(obj(rec)["heartbeat_url"]).To(HavePrefix("https://uptime.example.com/heartbeat/"))
	})
})

var _ = Describe("Monitor regions", func() {
	It("lists the regions a monitor is checked from and whether they are the plan's default", func() {
		// A workspace of its own on the "free" plan (default regions eu-1
		// and us-1), so the plan's monitor limit is not shared.
		ns := "regions-ws"
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{monv1.PlanLabel: "free"}}})).To(Succeed())
		k, _, err := apikeys.Create(ctx, k8s, ns, "regions key", apikeys.Standard)
		Expect(err).NotTo(HaveOccurred())
		keys[ns+"/standard"] = k
		// API keys are read from the manager's cache: wait until it has this one.
		Eventually(func() int { return do("GET", "/monitors", k, nil).Code }).Should(Equal(http.StatusOK))
		m := createMonitor(ns, map[string]any{"name": "regions", "url": "https://example.com/regions", "interval_seconds": 60})
		id := m["id"].(string)
		got := obj(do("GET", "/monitors/"+id+"/regions", key(ns, "standard"), nil))
		Expect(got["regions"]).To(Equal([]any{"eu-1", "us-1"}), "the plan's default regions")
		Expect(got["effective_regions"]).To(Equal([]any{"eu-1", "us-1"}))
		Expect(got["is_default"]).To(BeTrue())

		rec := do("PUT", "/monitors/"+id+"/regions", key(ns, "standard"), map[string]any{"regions": []string{"us-1"}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).To(Equal(map[string]any{"regions": []any{"us-1"}, "effective_regions": []any{"us-1"}, "is_default": false}))
		Expect(obj(do("GET", "/monitors/"+id+"/regions", key(ns, "standard"), nil))["is_default"]).To(BeFalse())
		Expect(do("DELETE", "/monitors/"+id, key(ns, "standard"), nil).Code).To(Equal(http.StatusNoContent))
	})
})
