package apiserver_test

import (
	"net/http"
	"net/url"
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
)

// newWorkspace creates namespace ns on plan (the default plan when empty)
// with a key of every level, and waits until the keys authenticate.
func newWorkspace(ns, plan string) {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if plan != "" {
		n.Labels = map[string]string{monv1.PlanLabel: plan}
	}
	ExpectWithOffset(1, k8s.Create(ctx, n)).To(Succeed())
	for _, level := range []apikeys.Level{apikeys.ReadOnly, apikeys.Standard, apikeys.Automation} {
		full, _, err := apikeys.Create(ctx, k8s, ns, string(level)+" key", level)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		keys[ns+"/"+string(level)] = full
		EventuallyWithOffset(1, func() int { return do("GET", "/automation/whoami", full, nil).Code }).
			WithTimeout(30 * time.Second).Should(Equal(http.StatusOK))
	}
}

// asUser makes a request come from the aggregated front door as a
// Kubernetes user whom RBAC grants level in ns.
func asUser(ns, level string) reqOpt {
	return func(r *http.Request) {
		*r = *apiserver.InjectIdentity(r, aggregated.Identity{Namespace: ns, User: "alice", Level: level})
	}
}

// keyPath is the path of a keyed monitor.
func keyPath(k string) string { return "/automation/monitors/" + url.PathEscape(k) }

// monitorsWithKey lists the CRs of ns carrying key, straight from the API server.
func monitorsWithKey(ns, k string) []monv1.Monitor {
	var list monv1.MonitorList
	ExpectWithOffset(1, k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	var out []monv1.Monitor
	for _, m := range list.Items {
		if m.Spec.Key == k && m.DeletionTimestamp == nil {
			out = append(out, m)
		}
	}
	return out
}

func changesByKey(plan map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, c := range plan["changes"].([]any) {
		ch := c.(map[string]any)
		out[ch["key"].(string)] = ch
	}
	return out
}

var _ = Describe("Monitoring as code", Ordered, func() {
	const ns = "iac"
	BeforeAll(func() { newWorkspace(ns, "pro") })

	It("shares keyed monitors with kubectl: a CR is readable by key and an API write lands in the CR", func() {
		cr := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kubectl-api"},
			Spec: monv1.MonitorSpec{Name: "API from kubectl", URL: "https://example.com/health", Key: "team/api"}}
		Expect(k8s.Create(ctx, cr)).To(Succeed())

		rec := do("GET", keyPath("team/api"), key(ns, "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).To(HaveKeyWithValue("id", string(cr.UID)))
		Expect(obj(rec)).To(HaveKeyWithValue("key", "team/api"))

		rec = do("PUT", keyPath("team/api"), key(ns, "standard"), map[string]any{"interval_seconds": 300, "tags": []string{"Edge"}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		var got monv1.Monitor
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cr), &got)).To(Succeed())
		Expect(got.Spec.IntervalSeconds).To(Equal(int32(300)))
		Expect(got.Spec.Tags).To(Equal([]string{"edge"}))
		Expect(got.Spec.URL).To(Equal("https://example.com/health"), "omitted fields are not managed")

		// A kubectl change is seen by the API at once.
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(cr), &got); err != nil {
				return err
			}
			got.Spec.URL = "https://example.com/v2/health"
			return k8s.Update(ctx, &got)
		}).Should(Succeed())
		Eventually(func() any { return obj(do("GET", keyPath("team/api"), key(ns, "read-only"), nil))["url"] }).
			Should(Equal("https://example.com/v2/health"))
	})

	It("creates with 201, updates with 200, deletes with 204 and then 404", func() {
		k := "svc:checkout/primary"
		rec := do("PUT", keyPath(k), key(ns, "standard"), map[string]any{"name": "Checkout", "url": "https://example.com/checkout",
			"regions": []string{"eu-1"}, "paused": true})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		m := obj(rec)
		Expect(m["key"]).To(Equal(k))
		Expect(m["is_active"]).To(BeFalse())
		crs := monitorsWithKey(ns, k)
		Expect(crs).To(HaveLen(1))
		Expect(crs[0].Spec.Regions).To(Equal([]string{"eu-1"}))

		rec = do("PUT", keyPath(k), key(ns, "standard"), map[string]any{"regions": nil, "paused": false})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["id"]).To(Equal(m["id"]))
		crs = monitorsWithKey(ns, k)
		Expect(crs[0].Spec.Regions).To(BeEmpty(), "regions: null resets to the plan's default")
		Expect(crs[0].Spec.Paused).To(BeFalse())
		Expect(crs[0].Spec.Name).To(Equal("Checkout"))

		rec = do("PUT", keyPath(k), key(ns, "standard"), map[string]any{"key": "other"})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ConsistOf("key"))
		rec = do("PUT", keyPath(k), key(ns, "standard"), map[string]any{"group_id": nil})
		Expect(validationFields(obj(rec))).To(ConsistOf("group_id"))
		Expect(do("PUT", keyPath(k), key(ns, "read-only"), map[string]any{}).Code).To(Equal(http.StatusForbidden))
		Expect(do("PUT", keyPath("-bad"), key(ns, "standard"), map[string]any{"name": "x"}).Code).To(Equal(http.StatusBadRequest))

		Expect(do("DELETE", keyPath(k), key(ns, "standard"), nil).Code).To(Equal(http.StatusNoContent))
		Expect(do("DELETE", keyPath(k), key(ns, "standard"), nil).Code).To(Equal(http.StatusNotFound))
		Expect(do("GET", keyPath(k), key(ns, "standard"), nil).Code).To(Equal(http.StatusNotFound))
	})

	It("needs an Automation key for config.notification_emails", func() {
		body := map[string]any{"name": "Mail", "url": "https://example.com/m", "config": map[string]any{"notification_emails": []string{"ops@example.com"}}}
		rec := do("PUT", keyPath("mail"), key(ns, "standard"), body)
		Expect(rec.Code).To(Equal(http.StatusForbidden))
		Expect(obj(rec)["code"]).To(Equal("ALERT_ROUTING_NOT_ALLOWED"))
		rec = do("POST", "/automation/monitors/apply", key(ns, "standard"), map[string]any{"monitors": []any{withKey(body, "mail")}})
		Expect(rec.Code).To(Equal(http.StatusForbidden))
		Expect(obj(rec)["code"]).To(Equal("ALERT_ROUTING_NOT_ALLOWED"))
		rec = do("PUT", keyPath("mail"), key(ns, "automation"), body)
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		Expect(monitorsWithKey(ns, "mail")[0].Spec.NotificationEmails).To(Equal([]string{"ops@example.com"}))
	})

	It("assigns, refuses duplicate and removes keys by id", func() {
		id := createMonitor(ns, map[string]any{"name": "Unkeyed", "url": "https://example.com/u"})["id"].(string)
		path := "/automation/monitors/by-id/" + id + "/key"
		rec := do("PUT", path, key(ns, "standard"), map[string]any{"key": "unkeyed"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(do("GET", keyPath("unkeyed"), key(ns, "standard"), nil).Code).To(Equal(http.StatusOK))
		rec = do("PUT", path, key(ns, "standard"), map[string]any{"key": "team/api"})
		Expect(rec.Code).To(Equal(http.StatusConflict))
		Expect(do("PUT", path, key(ns, "standard"), map[string]any{"key": "has space"}).Code).To(Equal(http.StatusBadRequest))
		Expect(do("PUT", path, key(ns, "standard"), map[string]any{"key": nil}).Code).To(Equal(http.StatusOK))
		Expect(monitorCR(ns, id).Spec.Key).To(BeEmpty())
		Expect(do("GET", keyPath("unkeyed"), key(ns, "standard"), nil).Code).To(Equal(http.StatusNotFound))
	})

	Describe("plan and apply", Ordered, func() {
		specs := []any{
			map[string]any{"key": "web", "name": "Web", "url": "https://example.com/", "config": map[string]any{"timeout": 5000}},
			map[string]any{"key": "db/port", "name": "DB", "type": "port", "config": map[string]any{"host": "93.184.216.34", "port": 5432}},
		}

		It("plans without writing, with read-only keys, and a stable fingerprint", func() {
			rec := do("POST", "/automation/monitors/plan", key(ns, "read-only"), map[string]any{"monitors": specs})
			Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
			p := obj(rec)
			Expect(p["summary"]).To(HaveKeyWithValue("create", 2.0))
			Expect(p["plan_fingerprint"]).To(HavePrefix("sha256:"))
			Expect(monitorsWithKey(ns, "web")).To(BeEmpty())
			again := obj(do("POST", "/automation/monitors/plan", key(ns, "read-only"), map[string]any{"monitors": specs}))
			Expect(again["plan_fingerprint"]).To(Equal(p["plan_fingerprint"]))

			rec = do("POST", "/automation/monitors/plan", key(ns, "read-only"), map[string]any{"monitors": []any{
				map[string]any{"key": "a", "name": "A", "url": "https://example.com", "interval_seconds": 1},
				map[string]any{"name": "no key"}, map[string]any{"key": "a", "name": "dup", "url": "https://example.com"}}})
			Expect(rec.Code).To(Equal(http.StatusBadRequest))
			Expect(validationFields(obj(rec))).To(ContainElements("monitors[1].key", "monitors[2].key"))
		})

		It("applies the plan, after which the same plan is all noop", func() {
			p := obj(do("POST", "/automation/monitors/plan", key(ns, "read-only"), map[string]any{"monitors": specs}))
			rec := do("POST", "/automation/monitors/apply", key(ns, "standard"), map[string]any{"monitors": specs, "expected_fingerprint": p["plan_fingerprint"]})
			Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
			res := obj(rec)
			Expect(res["ok"]).To(BeTrue())
			Expect(res["results"]).To(HaveLen(2))
			Expect(monitorsWithKey(ns, "db/port")).To(HaveLen(1))

			again := obj(do("POST", "/automation/monitors/plan", key(ns, "read-only"), map[string]any{"monitors": specs}))
			Expect(again["summary"]).To(HaveKeyWithValue("noop", 2.0), again)
			Expect(again["summary"]).To(HaveKeyWithValue("total", 2.0))
		})

		It("reports updates with a diff and refuses a stale fingerprint with 409 PLAN_CHANGED", func() {
			changed := []any{withKey(map[string]any{"name": "Web", "url": "https://example.com/", "interval_seconds": 600}, "web"), specs[1]}
			p := obj(do("POST", "/automation/monitors/plan", key(ns, "read-only"), map[string]any{"monitors": changed}))
			web := changesByKey(p)["web"]
			Expect(web["action"]).To(Equal("update"))
			Expect(web["diff"]).To(ConsistOf(HaveKeyWithValue("field", "interval_seconds")))

			// Someone edits the monitor with kubectl after the review.
			Eventually(func() error {
				cr := monitorsWithKey(ns, "web")[0]
				cr.Spec.Tags = []string{"changed"}
				return k8s.Update(ctx, &cr)
			}).Should(Succeed())
			changedAgain := []any{withKey(map[string]any{"name": "Web", "url": "https://example.com/", "interval_seconds": 600, "tags": []string{}}, "web"), specs[1]}
			rec := do("POST", "/automation/monitors/apply", key(ns, "standard"), map[string]any{"monitors": changedAgain, "expected_fingerprint": p["plan_fingerprint"]})
			Expect(rec.Code).To(Equal(http.StatusConflict), rec.Body.String())
			Expect(obj(rec)["code"]).To(Equal("PLAN_CHANGED"))
			Expect(monitorsWithKey(ns, "web")[0].Spec.IntervalSeconds).NotTo(Equal(int32(600)))
		})

		It("needs confirmation to prune or replace, and changes nothing without it", func() {
			body := map[string]any{"monitors": []any{specs[0]}, "prune": true}
			p := obj(do("POST", "/automation/monitors/plan", key(ns, "read-only"), body))
			Expect(changesByKey(p)["db/port"]["action"]).To(Equal("delete"))
			// Keyed monitors made elsewhere in this workspace are pruned too.
			Expect(changesByKey(p)["team/api"]["action"]).To(Equal("delete"))
			rec := do("POST", "/automation/monitors/apply", key(ns, "standard"), body)
			Expect(rec.Code).To(Equal(http.StatusPreconditionRequired), rec.Body.String())
			Expect(obj(rec)["code"]).To(Equal("PRUNE_CONFIRMATION_REQUIRED"))
			Expect(monitorsWithKey(ns, "db/port")).To(HaveLen(1))
			Expect(monitorsWithKey(ns, "web")[0].Spec.Tags).To(Equal([]string{"changed"}), "nothing changed")

			// A type change is a replace: new id, old one gone.
			old := monitorsWithKey(ns, "db/port")[0]
			replaceBody := map[string]any{"monitors": []any{map[string]any{"key": "db/port", "type": "ping", "config": map[string]any{"host": "93.184.216.34"}}}}
			p = obj(do("POST", "/automation/monitors/plan", key(ns, "read-only"), replaceBody))
			Expect(changesByKey(p)["db/port"]["action"]).To(Equal("replace"))
			Expect(p["warnings"]).NotTo(BeEmpty())
			Expect(do("POST", "/automation/monitors/apply", key(ns, "standard"), replaceBody).Code).To(Equal(http.StatusPreconditionRequired))
			replaceBody["expected_fingerprint"] = p["plan_fingerprint"]
			rec = do("POST", "/automation/monitors/apply", key(ns, "standard"), replaceBody)
			Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
			now := monitorsWithKey(ns, "db/port")
			Expect(now).To(HaveLen(1))
			Expect(now[0].UID).NotTo(Equal(old.UID))
			Expect(now[0].Spec.Type).To(Equal(monv1.MonitorPing))
			Expect(now[0].Spec.Name).To(Equal("DB"), "unmanaged fields carry over")

			body["allow_prune_without_fingerprint"] = true
			rec = do("POST", "/automation/monitors/apply", key(ns, "standard"), body)
			Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
			Expect(monitorsWithKey(ns, "db/port")).To(BeEmpty())
			Expect(monitorsWithKey(ns, "web")).To(HaveLen(1))
		})

		It("adopts an un-keyed monitor by name and type", func() {
			id := createMonitor(ns, map[string]any{"name": "Legacy", "url": "https://example.com/legacy"})["id"].(string)
			body := map[string]any{"monitors": []any{specs[0], map[string]any{"key": "legacy", "name": "Legacy", "url": "https://example.com/legacy"}}, "adopt_by_name": true}
			p := obj(do("POST", "/automation/monitors/plan", key(ns, "read-only"), body))
			legacy := changesByKey(p)["legacy"]
			Expect(legacy["action"]).To(Equal("update"))
			Expect(legacy["adopted"]).To(BeTrue())
			Expect(legacy["monitor_id"]).To(Equal(id))
			Expect(do("POST", "/automation/monitors/apply", key(ns, "standard"), body).Code).To(Equal(http.StatusOK))
			Expect(monitorCR(ns, id).Spec.Key).To(Equal("legacy"))
		})

		It("limits bodies to 2 MB", func() {
			big := `{"monitors": [], "pad": "` + stringOf('x', 2<<20) + `"}`
			rec := do("POST", "/automation/monitors/plan", key(ns, "read-only"), big)
			Expect(rec.Code).To(Equal(http.StatusRequestEntityTooLarge))
			Expect(obj(rec)["code"]).To(Equal("PAYLOAD_TOO_LARGE"))
		})
	})
})

var _ = Describe("Monitoring as code at plan limits", func() {
	It("answers 207 with per-monitor results when some changes fail", func() {
		const ns = "iac-free"
		newWorkspace(ns, "")
		var specs []any
		for _, k := range []string{"a", "b", "c", "d"} {
			specs = append(specs, map[string]any{"key": k, "name": "M " + k, "url": "https://example.com/" + k})
		}
		rec := do("POST", "/automation/monitors/apply", key(ns, "standard"), map[string]any{"monitors": specs, "continue_on_error": true})
		Expect(rec.Code).To(Equal(http.StatusMultiStatus), rec.Body.String())
		res := obj(rec)
		Expect(res["ok"]).To(BeFalse())
		Expect(res["summary"]).To(HaveKeyWithValue("applied", 3.0))
		Expect(res["summary"]).To(HaveKeyWithValue("failed", 1.0))
		failed := res["results"].([]any)[3].(map[string]any)
		Expect(failed["status"]).To(Equal("failed"))
		Expect(failed["error"]).To(HaveKeyWithValue("code", "ENTITLEMENT_LIMIT_REACHED"))

		// Without continue_on_error the first failure skips the rest.
		more := append(specs, map[string]any{"key": "e", "name": "M e", "url": "https://example.com/e"})
		res = obj(do("POST", "/automation/monitors/apply", key(ns, "standard"), map[string]any{"monitors": more}))
		Expect(res["summary"]).To(HaveKeyWithValue("skipped", 1.0))
	})

	It("limits applies to 30 per 15 minutes per workspace", func() {
		const ns = "iac-rate"
		newWorkspace(ns, "pro")
		for range 30 {
			Expect(do("POST", "/automation/monitors/apply", key(ns, "standard"), map[string]any{"monitors": []any{}}).Code).To(Equal(http.StatusOK))
		}
		rec := do("POST", "/automation/monitors/apply", key(ns, "automation"), map[string]any{"monitors": []any{}})
		Expect(rec.Code).To(Equal(http.StatusTooManyRequests))
		Expect(rec.Header().Get("Retry-After")).NotTo(BeEmpty())
		Expect(do("POST", "/automation/monitors/plan", key(ns, "read-only"), map[string]any{"monitors": []any{}}).Code).To(Equal(http.StatusOK))
	})
})

func withKey(m map[string]any, k string) map[string]any {
	out := map[string]any{"key": k}
	for a, b := range m {
		out[a] = b
	}
	return out
}

func stringOf(c byte, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return string(b)
}
