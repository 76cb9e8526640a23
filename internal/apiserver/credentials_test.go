package apiserver_test

import (
	"encoding/json"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
)

var _ = Describe("Monitor credentials", Ordered, func() {
	const ns = "creds"
	const password = "Basic YWxpY2U6czNjcjN0LXBhc3N3b3Jk"
	BeforeAll(func() { newWorkspace(ns, "pro") })

	// ownSecret reads the credentials Secret of the Monitor named name.
	ownSecret := func(name string) *corev1.Secret {
		var sec corev1.Secret
		ExpectWithOffset(1, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: credentials.SecretName(name)}, &sec)).To(Succeed())
		return &sec
	}
	// headerOf is the Authorization header of a CR's http config.
	headerOf := func(m *monv1.Monitor) monv1.HTTPHeader {
		for _, h := range m.Spec.HTTP.Headers {
			if h.Name == "Authorization" {
				return h
			}
		}
		Fail("no Authorization header")
		return monv1.HTTPHeader{}
	}
	// plain is the Monitor as kubectl get -o json prints it.
	plain := func(m *monv1.Monitor) string {
		raw, err := json.Marshal(m)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		return string(raw)
	}

	var id, name string

	It("stores a credential sent on create in a Secret owned by the Monitor, not in its spec", func() {
		// The owner, since a reference to another Secret needs the owner level.
		rec := do("POST", "/monitors", "", map[string]any{
			"name": "Private API", "url": "https://93.184.216.34/private",
			"config": map[string]any{"headers": map[string]any{
				"Authorization": password,
				"X-Tenant":      map[string]any{"secret_ref": map[string]any{"name": "tenant", "key": "id"}},
			}},
		}, asUser(ns, "owner"))
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		Expect(rec.Body.String()).NotTo(ContainSubstring("s3cr3t"))
		m := obj(rec)
		id = m["id"].(string)
		Expect(m["config"].(map[string]any)["headers"]).To(Equal(map[string]any{
			"Authorization": "[REDACTED]",
			"X-Tenant":      map[string]any{"secret_ref": map[string]any{"name": "tenant", "key": "id"}},
		}), "a reference to the user's own Secret holds no value and is shown")

		cr := monitorCR(ns, id)
		name = cr.Name
		Expect(plain(cr)).NotTo(ContainSubstring("YWxpY2U6czNjcjN0LXBhc3N3b3Jk"), "kubectl get shows no plaintext")
		h := headerOf(cr)
		Expect(h.Value).To(BeNil())
		Expect(h.ValueFrom).To(Equal(&monv1.SecretKeySelector{Name: name + "-credentials", Key: "http.authorization"}))

		sec := ownSecret(name)
		Expect(string(sec.Data["http.authorization"])).To(Equal(password))
		Expect(sec.Data).To(HaveLen(1))
		Expect(sec.OwnerReferences).To(ConsistOf(HaveField("UID", cr.UID)), "garbage-collected with the Monitor")
		Expect(sec.OwnerReferences[0].Kind).To(Equal("Monitor"))
		Expect(sec.Annotations).NotTo(HaveKey(monv1.CredentialsPendingAnnotation), "owned by the UID, no longer pending")
	})

	It("shows [REDACTED] to every key and keeps the value when [REDACTED] is sent back", func() {
		rec := do("GET", "/monitors/"+id, key(ns, "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(rec.Body.String()).NotTo(ContainSubstring("YWxpY2U6czNjcjN0LXBhc3N3b3Jk"))
		Expect(obj(rec)["config"].(map[string]any)["headers"]).To(HaveKeyWithValue("Authorization", "[REDACTED]"))

		rec = do("PUT", "/monitors/"+id, key(ns, "standard"), map[string]any{"config": map[string]any{
			"method": "HEAD", "headers": map[string]any{"authorization": "[REDACTED]"}}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		cr := monitorCR(ns, id)
		Expect(cr.Spec.HTTP.Method).To(Equal(monv1.HTTPMethod("HEAD")))
		Expect(cr.Spec.HTTP.Headers).To(HaveLen(1), "X-Tenant was left out of the new headers object")
		Expect(cr.Spec.HTTP.Headers[0].ValueFrom).To(Equal(&monv1.SecretKeySelector{Name: name + "-credentials", Key: "http.authorization"}))
		Expect(string(ownSecret(name).Data["http.authorization"])).To(Equal(password), "the stored value is kept")

		rec = do("PUT", "/monitors/"+id, key(ns, "standard"), map[string]any{"config": map[string]any{
			"headers": map[string]any{"Authorization": "Bearer rotated", "X-Other": "[REDACTED]"}}})
		Expect(rec.Code).To(Equal(http.StatusBadRequest), "nothing stored to keep for X-Other")
		Expect(validationFields(obj(rec))).To(ConsistOf("config"))

		rec = do("PUT", "/monitors/"+id, key(ns, "standard"), map[string]any{"config": map[string]any{
			"headers": map[string]any{"Authorization": "Bearer rotated"}}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		sec := ownSecret(name)
		Expect(sec.Data).To(Equal(map[string][]byte{"http.authorization": []byte("Bearer rotated")}))
		Expect(plain(monitorCR(ns, id))).NotTo(ContainSubstring("rotated"))
	})

	It("refuses [REDACTED] on create", func() {
		rec := do("POST", "/monitors", key(ns, "standard"), map[string]any{"name": "x", "url": "https://93.184.216.34/",
			"config": map[string]any{"headers": map[string]any{"Authorization": "[REDACTED]"}}})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ConsistOf("config"))
	})

	It("keeps multistep and mcp credentials out of the spec too", func() {
		rec := do("POST", "/monitors", key(ns, "standard"), map[string]any{"name": "Login flow", "type": "multistep",
			"config": map[string]any{"steps": []any{
				map[string]any{"name": "login", "method": "POST", "url": "https://93.184.216.34/login",
					"headers": map[string]any{"Cookie": "session=abc123"}},
			}}})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		cr := monitorCR(ns, obj(rec)["id"].(string))
		Expect(plain(cr)).NotTo(ContainSubstring("abc123"))
		Expect(string(ownSecret(cr.Name).Data["step0.cookie"])).To(Equal("session=abc123"))

		rec = do("POST", "/monitors", key(ns, "standard"), map[string]any{"name": "Tools", "type": "mcp",
			"url": "https://93.184.216.34/mcp", "config": map[string]any{"headers": map[string]any{"Authorization": "Bearer mcp-token"}}})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		cr = monitorCR(ns, obj(rec)["id"].(string))
		Expect(plain(cr)).NotTo(ContainSubstring("mcp-token"))
		Expect(string(ownSecret(cr.Name).Data["mcp.authorization"])).To(Equal("Bearer mcp-token"))
	})

	It("keeps a login step's secrets in the Secret and refuses a password written into its body", func() {
		rec := do("POST", "/monitors", key(ns, "standard"), map[string]any{"name": "Login with secrets", "type": "multistep",
			"config": map[string]any{"steps": []any{
				map[string]any{"name": "login", "method": "POST", "url": "https://93.184.216.34/login",
					"body": `{"user":"ops","password":"{{pw}}"}`, "secrets": map[string]any{"pw": "hunter2-login"}},
			}}})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		Expect(rec.Body.String()).NotTo(ContainSubstring("hunter2-login"))
		step := obj(rec)["config"].(map[string]any)["steps"].([]any)[0].(map[string]any)
		Expect(step["secrets"]).To(Equal(map[string]any{"pw": "[REDACTED]"}))
		Expect(step["body"]).To(Equal(`{"user":"ops","password":"{{pw}}"}`))
		cr := monitorCR(ns, obj(rec)["id"].(string))
		Expect(plain(cr)).NotTo(ContainSubstring("hunter2-login"))
		Expect(cr.Spec.Multistep.Steps[0].Secrets[0].ValueFrom).To(Equal(&monv1.SecretKeySelector{Name: cr.Name + "-credentials", Key: "step0.secret.pw"}))
		Expect(string(ownSecret(cr.Name).Data["step0.secret.pw"])).To(Equal("hunter2-login"))

		rec = do("POST", "/monitors", key(ns, "standard"), map[string]any{"name": "Login in the clear", "type": "multistep",
			"config": map[string]any{"steps": []any{
				map[string]any{"name": "login", "method": "POST", "url": "https://93.184.216.34/login",
					"body": `{"user":"ops","password":"hunter2-clear"}`},
			}}})
		Expect(rec.Code).To(Equal(http.StatusBadRequest), rec.Body.String())
		Expect(rec.Body.String()).To(ContainSubstring("secrets"))
		Expect(rec.Body.String()).NotTo(ContainSubstring("hunter2-clear"))
	})

	It("moves the inline value of an existing Monitor on its next REST write", func() {
		cr := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy"},
			Spec: monv1.MonitorSpec{Name: "Legacy", URL: "https://93.184.216.34/legacy",
				HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{{Name: "X-Tenant", Value: ptr.To("old-inline")}}}}}
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(func() int { return do("GET", "/monitors/"+string(cr.UID), key(ns, "read-only"), nil).Code }).Should(Equal(http.StatusOK))
		rec := do("GET", "/monitors/"+string(cr.UID), key(ns, "read-only"), nil)
		Expect(rec.Body.String()).NotTo(ContainSubstring("old-inline"))
		Expect(obj(rec)["config"].(map[string]any)["headers"]).To(HaveKeyWithValue("X-Tenant", "[REDACTED]"))

		rec = do("PUT", "/monitors/"+string(cr.UID), key(ns, "standard"), map[string]any{"name": "Legacy API"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		got := monitorCR(ns, string(cr.UID))
		Expect(plain(got)).NotTo(ContainSubstring("old-inline"))
		Expect(string(ownSecret("legacy").Data["http.x-tenant"])).To(Equal("old-inline"))
	})

	It("never writes over a Secret of the same name that is not the Monitor's", func() {
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken-credentials"},
			Data: map[string][]byte{"mine": []byte("keep")}})).To(Succeed())
		cr := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken"},
			Spec: monv1.MonitorSpec{Name: "Taken", URL: "https://93.184.216.34/taken",
				HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{{Name: "X-Tenant", Value: ptr.To("x")}}}}}
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(func() int { return do("GET", "/monitors/"+string(cr.UID), key(ns, "read-only"), nil).Code }).Should(Equal(http.StatusOK))
		rec := do("PUT", "/monitors/"+string(cr.UID), key(ns, "standard"), map[string]any{"name": "Taken 2"})
		Expect(rec.Code).To(Equal(http.StatusBadRequest), rec.Body.String())
		var sec corev1.Secret
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "taken-credentials"}, &sec)).To(Succeed())
		Expect(sec.Data).To(Equal(map[string][]byte{"mine": []byte("keep")}))
	})

	// A Monitor deleted with --cascade=orphan leaves its Secret labelled
	// with its name and without owner: a Monitor of the same name is
	// another Monitor (issue 36, row 1).
	It("neither writes over nor uses the orphaned credentials Secret of an earlier Monitor of the same name", func() {
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reborn-credentials",
			Labels: map[string]string{monv1.CredentialsOfLabel: "reborn"}},
			Data: map[string][]byte{"http.x-tenant": []byte("earlier-tenant")}})).To(Succeed())
		cr := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reborn"},
			Spec: monv1.MonitorSpec{Name: "Reborn", URL: "https://93.184.216.34/reborn",
				HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{{Name: "X-Tenant", Value: ptr.To("new")}}}}}
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(func() int { return do("GET", "/monitors/"+string(cr.UID), key(ns, "read-only"), nil).Code }).Should(Equal(http.StatusOK))
		rec := do("PUT", "/monitors/"+string(cr.UID), key(ns, "standard"), map[string]any{"name": "Reborn 2"})
		Expect(rec.Code).To(Equal(http.StatusBadRequest), rec.Body.String())
		Expect(rec.Body.String()).To(ContainSubstring("does not hold this monitor's credentials"))
		var sec corev1.Secret
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "reborn-credentials"}, &sec)).To(Succeed())
		Expect(string(sec.Data["http.x-tenant"])).To(Equal("earlier-tenant"))
		Expect(sec.OwnerReferences).To(BeEmpty())
	})

	It("keeps credentials of monitors written as code in the Secret, and plans without showing them", func() {
		rec := do("PUT", keyPath("creds/api"), key(ns, "standard"), map[string]any{"name": "Coded", "url": "https://93.184.216.34/coded",
			"config": map[string]any{"headers": map[string]any{"Authorization": "Bearer coded-secret"}}})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		Expect(rec.Body.String()).NotTo(ContainSubstring("coded-secret"))
		crs := monitorsWithKey(ns, "creds/api")
		Expect(crs).To(HaveLen(1))
		Expect(plain(&crs[0])).NotTo(ContainSubstring("coded-secret"))
		Expect(string(ownSecret(crs[0].Name).Data["http.authorization"])).To(Equal("Bearer coded-secret"))

		// Writing the same code again changes nothing.
		rec = do("PUT", keyPath("creds/api"), key(ns, "standard"), map[string]any{"name": "Coded", "url": "https://93.184.216.34/coded",
			"config": map[string]any{"headers": map[string]any{"Authorization": "Bearer coded-secret"}}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		again := monitorsWithKey(ns, "creds/api")
		Expect(again[0].Generation).To(Equal(crs[0].Generation))
	})
})
