package apiserver_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The rollout gate over REST with a key. The SLO figures come from the SLO
// controller (internal/aggregated's rollout gate test drives it against
// recorded results); here: the open incident, the query's validation and
// the plan feature.
var _ = Describe("Rollout gate", func() {
	reasonsOf := func(g map[string]any) map[string]bool {
		out := map[string]bool{}
		for _, r := range g["reasons"].([]any) {
			out[r.(map[string]any)["code"].(string)] = r.(map[string]any)["ok"].(bool)
		}
		return out
	}

	It("stops while the monitor has an open incident and goes once it is resolved", func() {
		mid, inc := openIncident("team", "gate-incident")
		ro := key("team", "read-only")
		rec := do("GET", "/monitors/"+mid+"/gate", ro, nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		g := obj(rec)
		Expect(g).To(HaveKeyWithValue("decision", "stop"))
		Expect(g).To(HaveKeyWithValue("go", false))
		Expect(g).To(HaveKeyWithValue("open_incident", true))
		Expect(g).To(HaveKeyWithValue("open_incident_id", inc["id"]))
		Expect(g).To(HaveKeyWithValue("monitor_id", mid))
		Expect(g).To(HaveKeyWithValue("slo", BeNil()))
		Expect(reasonsOf(g)).To(Equal(map[string]bool{"open_incident": false, "no_slo": true}))

		rec = do("POST", "/incidents/"+inc["id"].(string)+"/resolve", key("team", "standard"), map[string]any{})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		g = obj(do("GET", "/monitors/"+mid+"/gate", ro, nil))
		Expect(g).To(HaveKeyWithValue("decision", "go"))
		Expect(g).To(HaveKeyWithValue("open_incident", false))
		Expect(reasonsOf(g)).To(Equal(map[string]bool{"open_incident": true, "no_slo": true}))
	})

	It("validates the windows and thresholds with the specification's error shape", func() {
		mid := createMonitor("team", map[string]any{"name": "gate-params", "url": "https://example.com"})["id"].(string)
		ro := key("team", "read-only")
		for query, field := range map[string]string{
			"windows=2h":             "windows",
			"windows=5m,5m":          "windows",
			"windows=":               "windows",
			"max_burn_rate=0":        "max_burn_rate",
			"max_burn_rate=1001":     "max_burn_rate",
			"max_burn_rate=NaN":      "max_burn_rate",
			"min_error_budget=-1":    "min_error_budget",
			"min_error_budget=100.5": "min_error_budget",
			"min_error_budget=half":  "min_error_budget",
		} {
			rec := do("GET", "/monitors/"+mid+"/gate?"+query, ro, nil)
			Expect(rec.Code).To(Equal(http.StatusBadRequest), query)
			body := obj(rec)
			Expect(body).To(HaveKeyWithValue("code", "VALIDATION_ERROR"), query)
			Expect(body).To(HaveKeyWithValue("error", "Validation failed"), query)
			Expect(validationFields(body)).To(Equal([]string{field}), query)
		}
		rec := do("GET", "/monitors/"+mid+"/gate?windows=5m,30m,1h,6h&max_burn_rate=2.5&min_error_budget=25", ro, nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(do("GET", "/monitors/00000000-0000-4000-8000-000000000000/gate", ro, nil).Code).To(Equal(http.StatusNotFound))
	})

	It("answers an SLO target's gate with the SLO and the options applied", func() {
		mid := createMonitor("team", map[string]any{"name": "gate-slo", "url": "https://example.com"})["id"].(string)
		rec := do("POST", "/reliability/slo-targets", key("team", "standard"), map[string]any{"monitor_id": mid, "target_percentage": 99.5})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		sloID := obj(rec)["id"].(string)
		ro := key("team", "read-only")
		for _, path := range []string{"/reliability/slo-targets/" + sloID + "/gate", "/monitors/" + mid + "/gate"} {
			rec = do("GET", path+"?windows=30m,6h&max_burn_rate=3&min_error_budget=10", ro, nil)
			Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
			g := obj(rec)
			Expect(g).To(HaveKeyWithValue("monitor_id", mid))
			Expect(g["go"]).To(Equal(g["decision"] == "go"))
			slo := g["slo"].(map[string]any)
			Expect(slo).To(HaveKeyWithValue("id", sloID))
			Expect(slo).To(HaveKeyWithValue("target", 99.5))
			Expect(slo).To(HaveKeyWithValue("min_error_budget_remaining", 10.0))
			Expect(slo).To(HaveKeyWithValue("max_burn_rate", 3.0))
			Expect(slo).To(HaveKeyWithValue("burn_rate_fast_threshold", 14.4))
			// Until the controller's first evaluation there are no windows.
			if slo["evaluated_at"] != nil {
				Expect(slo["windows"]).To(HaveLen(2))
			} else {
				Expect(reasonsOf(g)).To(HaveKeyWithValue("slo_pending", false))
			}
		}
		Expect(do("GET", "/reliability/slo-targets/00000000-0000-4000-8000-000000000000/gate", ro, nil).Code).To(Equal(http.StatusNotFound))
		// A plan without the SLO feature has no SLO gate.
		rec = do("GET", "/reliability/slo-targets/"+sloID+"/gate", key("free-ws", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusForbidden))
		Expect(obj(rec)).To(HaveKeyWithValue("code", "FEATURE_NOT_AVAILABLE"))
	})
})
