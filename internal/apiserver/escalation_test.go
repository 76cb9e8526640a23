package apiserver_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

var _ = Describe("Incident escalation", func() {
	It("shows each step of the monitor's policy as fired, pending or cancelled", func() {
		pol := &monv1.EscalationPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "esc-steps", Namespace: "team"},
			Spec: monv1.EscalationPolicySpec{Steps: []monv1.EscalationStep{
				{DelayMinutes: 0, Emails: []string{"first@example.com"}},
				{DelayMinutes: 60, Emails: []string{"second@example.com"}},
			}},
		}
		Expect(k8s.Create(ctx, pol)).To(Succeed())
		mid, inc := openIncident("team", "inc-escalation")
		id := inc["id"].(string)

		// Without a policy there is nothing to escalate.
		esc := obj(do("GET", "/incidents/"+id+"/escalation", key("team", "read-only"), nil))
		Expect(esc["policy"]).To(BeNil())
		Expect(esc["steps"]).To(BeEmpty())

		rec := do("PUT", "/monitors/"+mid, key("team", "standard"), map[string]any{"escalation_policy_id": string(pol.UID)})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Eventually(func() any {
			return obj(do("GET", "/incidents/"+id+"/escalation", key("team", "read-only"), nil))["policy"]
		}).ShouldNot(BeNil())

		esc = obj(do("GET", "/incidents/"+id+"/escalation", key("team", "read-only"), nil))
		Expect(esc["policy"]).To(HaveKeyWithValue("name", "esc-steps"))
		Expect(esc["acknowledged"]).To(BeFalse())
		steps := esc["steps"].([]any)
		Expect(steps).To(HaveLen(2))
		Expect(steps[0]).To(HaveKeyWithValue("step", 1.0))
		Expect(steps[0]).To(HaveKeyWithValue("targets", map[string]any{"channels": []any{}, "emails": []any{"first@example.com"}}))
		Expect(steps[1]).To(HaveKeyWithValue("step", 2.0))
		Expect(steps[1]).To(HaveKeyWithValue("state", "pending"))

		// Acknowledging stops the steps that have not fired.
		Expect(do("POST", "/incidents/"+id+"/acknowledge", key("team", "standard"), nil).Code).To(Equal(http.StatusOK))
		esc = obj(do("GET", "/incidents/"+id+"/escalation", key("team", "read-only"), nil))
		Expect(esc["acknowledged"]).To(BeTrue())
		Expect(esc["steps"].([]any)[1]).To(HaveKeyWithValue("state", "cancelled"))

		// The policy itself, as the settings list it.
		var listed map[string]any
		for _, p := range arr(do("GET", "/settings/escalation-policies", key("team", "read-only"), nil)) {
			if p.(map[string]any)["name"] == "esc-steps" {
				listed = p.(map[string]any)
			}
		}
		Expect(listed).To(HaveKeyWithValue("id", string(pol.UID)))
		Expect(listed["steps"]).To(HaveLen(2))
	})
})
