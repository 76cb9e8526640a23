package apiserver_test

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// fieldMessage returns the message of the validation error's entry for f.
func fieldMessage(rec *httptest.ResponseRecorder, f string) string {
	body := obj(rec)
	ExpectWithOffset(1, rec.Code).To(Equal(http.StatusBadRequest), rec.Body.String())
	ExpectWithOffset(1, body["code"]).To(Equal("VALIDATION_ERROR"))
	for _, e := range body["errors"].([]any) {
		if e.(map[string]any)["field"] == f {
			return e.(map[string]any)["message"].(string)
		}
	}
	Fail("no validation error for " + f + ": " + rec.Body.String())
	return ""
}

var _ = Describe("Connection-time checks of webhook endpoints (spec/webhooks.md, Errors)", func() {
	It("refuse an unresolvable host and a redirecting endpoint at create and at URL change", func() {
		final := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		defer final.Close()
		redirecting := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, final.URL+"/hook", http.StatusTemporaryRedirect)
		}))
		defer redirecting.Close()
		pool := x509.NewCertPool()
		pool.AddCert(final.Certificate())
		pool.AddCert(redirecting.Certificate())
		defer trust.Use(pool)()

		automation := key("team", "automation")
		unresolvable := fmt.Sprintf("https://hook-%d.invalid/hook", time.Now().UnixNano())
		create := func(u string) *httptest.ResponseRecorder {
			return do("POST", "/integrations/webhook/connections", automation, map[string]any{"webhook_url": u})
		}
		Expect(fieldMessage(create(unresolvable), "webhook_url")).To(Equal("This host could not be resolved"))
		Expect(fieldMessage(create(redirecting.URL+"/hook"), "webhook_url")).
			To(Equal("This endpoint redirects to " + final.URL + "/hook; use the final URL"))

		rec := create(final.URL + "/hook")
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		id := obj(rec)["connection_id"].(string)
		defer do("DELETE", "/integrations/connections/"+id, automation, nil)

		path := "/integrations/connections/" + id
		Expect(fieldMessage(do("PUT", path, automation, map[string]any{"webhook_url": redirecting.URL + "/hook"}), "webhook_url")).
			To(ContainSubstring("redirects to " + final.URL + "/hook"))
		Expect(fieldMessage(do("PUT", path, automation, map[string]any{"webhook_url": unresolvable}), "webhook_url")).
			To(Equal("This host could not be resolved"))
		// Nothing was lost: the connection still points at the endpoint
		// that answers.
		Expect(channelURL(id)).To(Equal(final.URL + "/hook"))
		rec = do("PUT", path, automation, map[string]any{"webhook_url": final.URL + "/other"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
	})
})

// channelURL reads the webhook URL of the channel with uid id from the API
// server.
func channelURL(id string) string {
	var list monv1.AlertChannelList
	ExpectWithOffset(1, k8s.List(ctx, &list, client.InNamespace("team"))).To(Succeed())
	for _, ch := range list.Items {
		if string(ch.UID) == id {
			return ch.Spec.WebhookURL
		}
	}
	Fail("no channel " + id)
	return ""
}

var _ = Describe("Region statuses", func() {
	It("list only the regions the monitor is checked from", func() {
		rec := do("POST", "/monitors", key("team", "standard"), map[string]any{"name": "one-region", "url": "https://example.com/one", "regions": []string{"eu-1"}})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		id := obj(rec)["id"].(string)
		now := time.Now().UTC()
		var checks []store.Check
		for i, region := range []string{"eu-1", "manager", "us-2"} {
			checks = append(checks, store.Check{ID: fmt.Sprintf("rs-%s-%d", id, i), MonitorID: id, Namespace: "team", Region: region,
				CheckedAt: now.Add(-time.Duration(i+1) * time.Second), Status: store.StatusUp, ResponseTimeMs: 10})
		}
		_, err := st.InsertChecks(ctx, checks)
		Expect(err).NotTo(HaveOccurred())
		regions := obj(do("GET", "/stats/"+id+"/region-statuses", key("team", "read-only"), nil))["regions"].([]any)
		Expect(regions).To(HaveLen(1))
		Expect(regions[0].(map[string]any)["region"]).To(Equal("eu-1"))
	})
})
