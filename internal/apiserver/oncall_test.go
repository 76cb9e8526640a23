package apiserver_test

import (
	"encoding/json"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

var _ = Describe("On-call schedules", func() {
	const ns = "oncall-ws"
	It("lists schedules and who is on call now", func() {
		newWorkspace(ns, "")
		start := clk.Now().Add(-30 * time.Hour)
		Expect(k8s.Create(ctx, &monv1.OnCallSchedule{
			ObjectMeta: metav1.ObjectMeta{Name: "primary", Namespace: ns},
			Spec: monv1.OnCallScheduleSpec{ShiftHours: 24, StartsAt: metav1.NewTime(start), Participants: []monv1.OnCallParticipant{
				{Name: "Ann", Email: "ann@example.com"}, {Name: "Bob", Email: "bob@example.com"}}},
		})).To(Succeed())
		Eventually(func(g Gomega) {
			rec := do("GET", "/settings/on-call-schedules/current", key(ns, "read-only"), nil)
			g.Expect(rec.Code).To(Equal(http.StatusOK))
			var got []map[string]any
			g.Expect(json.Unmarshal(rec.Body.Bytes(), &got)).To(Succeed())
			g.Expect(got).To(HaveLen(1))
			g.Expect(got[0]["schedule_name"]).To(Equal("primary"))
			g.Expect(got[0]["on_call"]).To(HaveKeyWithValue("email", "bob@example.com"))
		}).Should(Succeed())
		rec := do("GET", "/settings/on-call-schedules", key(ns, "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(rec.Body.String()).To(ContainSubstring(`"shift_hours":24`))
	})
})
