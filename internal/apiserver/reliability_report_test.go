package apiserver_test

import (
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

var _ = Describe("Reliability reports", Ordered, func() {
	const ns = "rel-ws"
	BeforeAll(func() { newWorkspace(ns, "pro") })

	// seed stores a day of minute checks in two regions with an unconfirmed
	// one-region blip every 3 hours, and a 2-minute incident.
	seed := func(id string) {
		now := clk.Now()
		var checks []store.Check
		for i := range 24 * 60 {
			at := now.Add(-time.Duration(i+1) * time.Minute)
			for _, region := range []string{"eu-1", "us-1"} {
				status := store.StatusUp
				if region == "eu-1" && i%180 == 0 {
					status = store.StatusDown
				}
				checks = append(checks, store.Check{ID: fmt.Sprintf("rel-%s-%s-%d", id, region, i), MonitorID: id, Namespace: ns,
					Region: region, CheckedAt: at, Status: status, ResponseTimeMs: 80})
			}
		}
		_, err := st.InsertChecks(ctx, checks)
		Expect(err).NotTo(HaveOccurred())
		inc, err := st.OpenIncident(ctx, store.Incident{Namespace: ns, MonitorID: id, MonitorName: "rel", StartedAt: now.Add(-10 * time.Hour),
			Confirmations: 2, ConfirmingRegions: []string{"eu-1", "us-1"}, RegionsTotal: 2})
		Expect(err).NotTo(HaveOccurred())
		_, err = st.ResolveIncident(ctx, inc.ID, now.Add(-10*time.Hour+2*time.Minute), false, "")
		Expect(err).NotTo(HaveOccurred())
	}

	It("scores flakiness over 7 and 30 days with reasons", func() {
		id := createMonitor(ns, map[string]any{"name": "flaky", "url": "https://example.com"})["id"].(string)
		rec := do("GET", "/monitors/"+id+"/flakiness", key(ns, "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["7d"]).To(HaveKeyWithValue("score", BeNil()))

		seed(id)
		f := obj(do("GET", "/monitors/"+id+"/flakiness", key(ns, "read-only"), nil))
		week := f["7d"].(map[string]any)
		Expect(week["score"]).To(BeNumerically(">", 0))
		Expect(week["unconfirmed_failures"]).To(Equal(8.0))
		Expect(week["short_incidents"]).To(Equal(1.0))
		Expect(week["state_flips"]).To(Equal(15.0))
		codes := []string{}
		for _, r := range week["reasons"].([]any) {
			codes = append(codes, r.(map[string]any)["code"].(string))
		}
		Expect(codes).To(ConsistOf("state_flips", "unconfirmed_failures", "short_incidents"))
		month := f["30d"].(map[string]any)
		Expect(month["score"]).To(BeNumerically("<", week["score"]))
		Expect(do("GET", "/monitors/00000000-0000-0000-0000-000000000000/flakiness", key(ns, "read-only"), nil).Code).To(Equal(http.StatusNotFound))
	})

	It("reports uptime, incidents, MTTR, MTBF, health and SLO state", func() {
		id := createMonitor(ns, map[string]any{"name": "rel", "url": "https://example.com"})["id"].(string)
		seed(id)
		rec := do("POST", "/reliability/slo-targets", key(ns, "standard"), map[string]any{"monitor_id": id, "target_percentage": 99.9})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		// The SLO controller owns the status; its mapping is unit-tested.
		m := obj(do("GET", "/reliability/monitor/"+id, key(ns, "read-only"), nil))
		Expect(m["slo"]).To(HaveKeyWithValue("state", BeElementOf("pending", "met", "breaching", "budget_exhausted", "burning_fast", "burning_slow")))
		Expect(m["incidents_30d"]).To(Equal(1.0))
		Expect(m["mttr_seconds"]).To(Equal(120.0))
		Expect(m["mtbf_seconds"]).To(BeNumerically("~", 30*24*3600-120, 1))
		Expect(m["uptime_24h"]).To(BeNumerically("<", 100))
		Expect(m["health_score"]).To(BeNumerically(">", 0))
		Expect(m["health_score"]).To(BeNumerically("<", 100))
		Expect(m["slo_target"]).To(HaveKeyWithValue("monitor_id", id))

		o := obj(do("GET", "/reliability/overview", key(ns, "read-only"), nil))
		Expect(o["monitors"]).To(Equal(2.0))
		Expect(o["incidents_30d"]).To(Equal(2.0))
		Expect(o["slo_targets"]).To(Equal(1.0))
		Expect(o["slo_states"]).To(HaveLen(7))
		Expect(o["health_score"]).NotTo(BeNil())
		Expect(o["by_monitor"]).To(HaveLen(2))
	})
})
