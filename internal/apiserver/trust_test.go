package apiserver_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
)

// The trust boundaries of issue 27 that the REST API keeps: a monitor
// writer reads no Secret it could not read itself, a stored credential
// stays with its origin, and a delete removes only the Secrets the deleted
// object owns.
var _ = Describe("Secrets a caller does not control", Ordered, func() {
	const ns = "trust"
	owner := asUser(ns, "owner")
	optIn := map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}
	secret := func(name string, labels map[string]string, data map[string]string) {
		ExpectWithOffset(1, k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			StringData: data})).To(Succeed())
	}
	exists := func(name string) bool {
		var sec corev1.Secret
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &sec) == nil
	}
	refBody := func(name, url, secret, key string) map[string]any {
		return map[string]any{"name": name, "url": url, "config": map[string]any{"headers": map[string]any{
			"X-Db": map[string]any{"secret_ref": map[string]any{"name": secret, "key": key}}}}}
	}
	BeforeAll(func() {
		newWorkspace(ns, "pro")
		secret("app-db", nil, map[string]string{"password": "db-password-1"})
		secret("api-token", optIn, map[string]string{"token": "tok-1"})
		secret("stripe-credentials", nil, map[string]string{"api-key": "sk_live_1"})
		secret("stripe-signing", optIn, map[string]string{"secret": "whsec_1"})
		secret("db-access", nil, map[string]string{"password": "db-admin"})
	})

	It("refuses secret_ref below the owner level, on create, test and update (row 1)", func() {
		count := func() int {
			var list monv1.MonitorList
			Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			return len(list.Items)
		}
		before := count()
		for _, level := range []string{"standard", "automation"} {
			for _, path := range []string{"/monitors/test", "/monitors"} {
				rec := do("POST", path, key(ns, level), refBody("Leak", "https://93.184.216.34/", "app-db", "password"))
				Expect(rec.Code).To(Equal(http.StatusBadRequest), "%s %s: %s", level, path, rec.Body.String())
				Expect(obj(rec)["code"]).To(Equal("VALIDATION_ERROR"))
				Expect(validationFields(obj(rec))).To(ConsistOf("config.headers.X-Db"))
			}
		}
		Expect(count()).To(Equal(before), "nothing was created")
		eng.mu.Lock()
		runs := append([]string(nil), eng.runs...)
		eng.mu.Unlock()
		Expect(runs).NotTo(ContainElement(HavePrefix("Leak/")), "no check ran")

		// The owner may reference a Secret that opts in, not one that does not.
		rec := do("POST", "/monitors", "", refBody("Owner ref", "https://93.184.216.34/", "app-db", "password"), owner)
		Expect(rec.Code).To(Equal(http.StatusBadRequest), rec.Body.String())
		Expect(obj(rec)["errors"]).To(ContainElement(HaveKeyWithValue("message", ContainSubstring("does not opt in"))))
		rec = do("POST", "/monitors", "", refBody("Owner ref", "https://93.184.216.34/", "api-token", "token"), owner)
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		id := obj(rec)["id"].(string)

		// A Standard key may change the monitor; the reference stays while
		// its origin does, and the key cannot add one.
		rec = do("PUT", "/monitors/"+id, key(ns, "standard"), map[string]any{"name": "Renamed", "url": "https://93.184.216.34/other"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["config"].(map[string]any)["headers"]).To(HaveKey("X-Db"))
		rec = do("PUT", "/monitors/"+id, key(ns, "standard"), map[string]any{"config": map[string]any{"headers": map[string]any{
			"X-Db":    map[string]any{"secret_ref": map[string]any{"name": "api-token", "key": "token"}},
			"X-Other": map[string]any{"secret_ref": map[string]any{"name": "app-db", "key": "password"}}}}})
		Expect(rec.Code).To(Equal(http.StatusBadRequest), rec.Body.String())
		Expect(validationFields(obj(rec))).To(ConsistOf("config.headers.X-Other"))
		// Nor send the reference it has to a server of its own.
		rec = do("PUT", "/monitors/"+id, key(ns, "standard"), map[string]any{"url": "https://198.51.100.7/collect",
			"config": map[string]any{"headers": map[string]any{"X-Db": map[string]any{"secret_ref": map[string]any{"name": "api-token", "key": "token"}}}}})
		Expect(rec.Code).To(Equal(http.StatusBadRequest), rec.Body.String())
		Expect(validationFields(obj(rec))).To(ConsistOf("config.headers.X-Db"))
	})

	It("drops a stored credential when an update moves the target to another origin, and says so (row 2)", func() {
		rec := do("POST", "/monitors", key(ns, "standard"), map[string]any{"name": "Billing", "url": "https://93.184.216.34/billing",
			"config": map[string]any{"headers": map[string]any{"Authorization": "Bearer prod-billing-token"}}})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		id := obj(rec)["id"].(string)
		name := monitorCR(ns, id).Name
		headers := func(rec any) map[string]any {
			cfg, _ := rec.(map[string]any)["config"].(map[string]any)
			h, _ := cfg["headers"].(map[string]any)
			return h
		}

		// Same origin: kept, no warning.
		rec = do("PUT", "/monitors/"+id, key(ns, "standard"), map[string]any{"url": "https://93.184.216.34:443/billing/v2"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).NotTo(HaveKey("warnings"))
		Expect(headers(obj(rec))).To(HaveKeyWithValue("Authorization", "[REDACTED]"))

		// Another origin, [REDACTED] sent back: dropped, and the answer says so.
		rec = do("PUT", "/monitors/"+id, key(ns, "standard"), map[string]any{"url": "https://198.51.100.7/collect",
			"config": map[string]any{"headers": map[string]any{"Authorization": "[REDACTED]"}}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["warnings"]).To(ConsistOf(HavePrefix("config.headers.Authorization: the stored credential was dropped")))
		Expect(headers(obj(rec))).NotTo(HaveKey("Authorization"))
		var sec corev1.Secret
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: credentials.SecretName(name)}, &sec)
		if err == nil {
			for _, v := range sec.Data {
				Expect(string(v)).NotTo(ContainSubstring("prod-billing-token"), "the dropped value is gone from the Secret")
			}
		}

		// A credential sent again with the move is kept.
		rec = do("PUT", "/monitors/"+id, key(ns, "standard"), map[string]any{"url": "https://93.184.216.34/billing",
			"config": map[string]any{"headers": map[string]any{"Authorization": "Bearer fresh-token-1"}}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).NotTo(HaveKey("warnings"))
		Expect(headers(obj(rec))).To(HaveKeyWithValue("Authorization", "[REDACTED]"))

		// Another origin, config not sent at all: dropped too.
		rec = do("PUT", "/monitors/"+id, key(ns, "standard"), map[string]any{"url": "http://93.184.216.34/billing"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["warnings"]).To(ConsistOf(HavePrefix("config.headers.Authorization:")))
		Expect(headers(obj(rec))).To(BeEmpty())
	})

	It("deletes only the Secrets a connection or page owns (row 6)", func() {
		ch := &monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Name: "stripe", Namespace: ns},
			Spec: monv1.AlertChannelSpec{Type: monv1.ChannelWebhook, WebhookURL: "https://93.184.216.34/hook",
				SigningSecretRef: &monv1.SecretKeySelector{Name: "stripe-signing", Key: "secret"}}}
		Expect(k8s.Create(ctx, ch)).To(Succeed())
		Eventually(func() int { // once the cache has the channel
			return do("DELETE", "/integrations/connections/"+string(ch.UID), key(ns, "automation"), nil).Code
		}).Should(Equal(http.StatusNoContent))
		Expect(exists("stripe-credentials")).To(BeTrue(), "an unrelated Secret with the connection's credentials name stays")
		Expect(exists("stripe-signing")).To(BeTrue(), "a signing secret the connection does not own stays")

		page := &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: monv1.StatusPageSpec{Title: "DB", Slug: "db-status",
			Access: &monv1.StatusPageAccess{Mode: monv1.AccessPassword, PasswordSecretRef: &monv1.SecretKeySelector{Name: "db-access", Key: "password"}}}}
		Expect(k8s.Create(ctx, page)).To(Succeed())
		path := "/status/pages/" + string(page.UID) + "/access"
		Eventually(func() int { return do("GET", path, key(ns, "read-only"), nil).Code }).Should(Equal(http.StatusOK))
		rec := do("PUT", path, "", map[string]any{"mode": "public"}, owner)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(exists("db-access")).To(BeTrue(), "the page's password Secret, made by its user, stays")

		rec = do("PUT", path, "", map[string]any{"mode": "password", "password": "correct horse"}, owner)
		Expect(rec.Code).To(Equal(http.StatusConflict), rec.Body.String())
		var sec corev1.Secret
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-access"}, &sec)).To(Succeed())
		Expect(string(sec.Data["password"])).To(Equal("db-admin"), "a Secret the page does not own is not written either")

		// A password the REST API stored for a page is the page's own: it goes.
		rec = do("POST", "/status/pages", key(ns, "standard"), map[string]any{"title": "Own password"})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		path = "/status/pages/" + obj(rec)["id"].(string) + "/access"
		Expect(do("PUT", path, "", map[string]any{"mode": "password", "password": "correct horse"}, owner).Code).To(Equal(http.StatusOK))
		var pages monv1.StatusPageList
		Expect(k8s.List(ctx, &pages, client.InNamespace(ns))).To(Succeed())
		var own string
		for _, p := range pages.Items {
			if p.Spec.Title == "Own password" {
				own = p.Spec.Access.PasswordSecretRef.Name
			}
		}
		Expect(own).NotTo(BeEmpty())
		Expect(exists(own)).To(BeTrue())
		Expect(do("PUT", path, "", map[string]any{"mode": "public"}, owner).Code).To(Equal(http.StatusOK))
		Expect(exists(own)).To(BeFalse(), "the page's own password Secret is deleted with password mode")
	})
})
