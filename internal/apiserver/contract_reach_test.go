package apiserver_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Answers the other specs do not provoke, so that the contract check
// (doOn validates every answer against docs/openapi.json) sees them too.
var _ = Describe("Contract reach", func() {
	It("answers the per-monitor reads and actions as documented", func() {
		mid, inc := openIncident("team", "reach-mon")
		std, ro := key("team", "standard"), key("team", "read-only")

		rec := do("GET", "/monitors/"+mid+"/explanation", ro, nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).To(HaveKeyWithValue("monitor_id", mid))

		rec = do("GET", "/stats/"+mid+"/incidents", ro, nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["items"]).To(HaveLen(1))

		rec = do("POST", "/incidents/"+inc["id"].(string)+"/escalation/acknowledge", std, nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["acknowledged_at"]).NotTo(BeNil())

		rec = do("POST", "/monitors/"+mid+"/reset-stats", std, nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).To(HaveKeyWithValue("success", true))

		cron := createMonitor("team", map[string]any{"name": "reach-cron", "type": "cron", "config": map[string]any{"cron_expression": "*/5 * * * *"}})["id"].(string)
		rec = do("POST", "/monitors/"+cron+"/cron-heartbeat", std, map[string]any{"status": "ok"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).To(HaveKeyWithValue("paused", false))
	})

	It("adds a monitor to a status page by monitorId, as the spec names the field", func() {
		mid := createMonitor("team", map[string]any{"name": "reach-page-mon", "url": "https://example.com"})["id"].(string)
		rec := do("POST", "/status/pages", key("team", "standard"), map[string]any{"title": "Reach"})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		id := obj(rec)["id"].(string)

		rec = do("POST", "/status/pages/"+id+"/monitors", key("team", "standard"), map[string]any{"monitorId": mid, "section": "API"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		rec = do("GET", "/status/pages/"+id, key("team", "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		monitors := obj(rec)["monitors"].([]any)
		Expect(monitors).To(HaveLen(1))
		Expect(monitors[0]).To(HaveKeyWithValue("monitor_id", mid))
		Expect(monitors[0]).To(HaveKeyWithValue("section", "API"))

		rec = do("POST", "/status/pages/"+id+"/monitors", key("team", "standard"), map[string]any{"section": "API"})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ContainElement("monitorId"))
	})
})
