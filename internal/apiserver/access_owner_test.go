package apiserver_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver"
)

var _ = Describe("Owner-only endpoints", Ordered, func() {
	const ns = "owner-ws"
	owner := asUser(ns, "owner")
	BeforeAll(func() { newWorkspace(ns, "pro") })

	DescribeTable("refuse every API key and non-owner users with 403 WORKSPACE_OWNER_REQUIRED",
		func(method, path string) {
			for _, level := range []string{"standard", "automation"} {
				rec := do(method, path, key(ns, level), map[string]any{})
				Expect(rec.Code).To(Equal(http.StatusForbidden), rec.Body.String())
				Expect(obj(rec)["code"]).To(Equal("WORKSPACE_OWNER_REQUIRED"))
			}
			rec := do(method, path, "", map[string]any{}, asUser(ns, "automation"))
			Expect(rec.Code).To(Equal(http.StatusForbidden))
			Expect(obj(rec)["code"]).To(Equal("WORKSPACE_OWNER_REQUIRED"))
		},
		Entry("snooze", "POST", "/incidents/x/snooze"),
		Entry("maintenance create", "POST", "/maintenance"),
		Entry("maintenance update", "PATCH", "/maintenance/x"),
		Entry("maintenance delete", "DELETE", "/maintenance/x"),
		Entry("page access", "PUT", "/status/pages/x/access"),
		Entry("revoke sessions", "POST", "/status/pages/x/access/revoke-sessions"),
		Entry("rotate signing secret", "POST", "/integrations/connections/x/rotate-secret"),
		Entry("add a recipient", "POST", "/alert-recipients"),
		Entry("remove a recipient", "DELETE", "/alert-recipients/a@example.com"),
	)

	It("adds and removes recipients through the workspace's alert-recipients email channel", func() {
		rec := do("POST", "/alert-recipients", "", map[string]any{"email": "Ops@example.com"}, owner)
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		Expect(obj(rec)).To(SatisfyAll(HaveKeyWithValue("email", "Ops@example.com"), HaveKeyWithValue("status", "unconfirmed"),
			HaveKeyWithValue("alert_channel", "alert-recipients")))
		channel := func() *monv1.AlertChannel {
			var ch monv1.AlertChannel
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "alert-recipients"}, &ch); err != nil {
				return nil
			}
			return &ch
		}
		Expect(channel().Spec.Type).To(Equal(monv1.ChannelEmail))
		Expect(channel().Spec.Emails).To(Equal([]string{"Ops@example.com"}))
		Expect(do("POST", "/alert-recipients", "", map[string]any{"email": "second@example.com"}, owner).Code).To(Equal(http.StatusCreated))
		Expect(channel().Spec.Emails).To(Equal([]string{"Ops@example.com", "second@example.com"}))

		rec = do("POST", "/alert-recipients", "", map[string]any{"email": "ops@EXAMPLE.com"}, owner)
		Expect(rec.Code).To(Equal(http.StatusConflict))
		Expect(obj(rec)["code"]).To(Equal("CONFLICT"))
		Expect(validationFields(obj(do("POST", "/alert-recipients", "", map[string]any{"email": "nope"}, owner)))).To(Equal([]string{"email"}))
		Expect(do("POST", "/alert-recipients", "", map[string]any{"email": "a@example.com", "extra": 1}, owner).Code).To(Equal(http.StatusBadRequest))
		Eventually(func() string { return do("GET", "/alert-recipients", key(ns, "read-only"), nil).Body.String() }).
			Should(ContainSubstring("second@example.com"))

		// An address named by another resource is removed there.
		createGroupCR(ns, "recipient-group", "group-only@example.com")
		Eventually(func() int { return do("DELETE", "/alert-recipients/group-only@example.com", "", nil, owner).Code }).
			Should(Equal(http.StatusConflict))
		Expect(do("DELETE", "/alert-recipients/nobody@example.com", "", nil, owner).Code).To(Equal(http.StatusNotFound))

		Expect(do("DELETE", "/alert-recipients/OPS@example.com", "", nil, owner).Code).To(Equal(http.StatusNoContent))
		Expect(channel().Spec.Emails).To(Equal([]string{"second@example.com"}))
		Expect(do("DELETE", "/alert-recipients/second%40example.com", "", nil, owner).Code).To(Equal(http.StatusNoContent))
		Expect(channel()).To(BeNil(), "the channel goes with its last address")
		Expect(do("DELETE", "/alert-recipients/second@example.com", "", nil, owner).Code).To(Equal(http.StatusNotFound))
	})

	It("reports the owner role in whoami", func() {
		Expect(obj(do("GET", "/automation/whoami", "", nil, owner))["workspace_role"]).To(Equal("owner"))
		Expect(do("GET", "/account/profile", "", nil, owner).Code).To(Equal(http.StatusForbidden))
	})

	It("manages monitor dependencies as the child's spec.dependsOn", func() {
		parent := createMonitor(ns, map[string]any{"name": "dep-parent", "url": "https://example.com/db"})["id"].(string)
		child := createMonitor(ns, map[string]any{"name": "dep-child", "url": "https://example.com/app"})["id"].(string)
		rec := do("POST", "/reliability/dependencies", "", map[string]any{"parent_monitor_id": parent, "child_monitor_id": child,
			"suppression_mode": "suppress_child_if_parent_down"}, owner)
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		id := obj(rec)["id"].(string)
		Eventually(func() string {
			var list monv1.MonitorList
			_ = k8s.List(ctx, &list, client.InNamespace(ns))
			for _, m := range list.Items {
				if string(m.UID) == child && len(m.Spec.DependsOn) == 1 {
					return m.Spec.DependsOn[0].Name
				}
			}
			return ""
		}).ShouldNot(BeEmpty())
		Eventually(func() string { return do("GET", "/reliability/dependencies", key(ns, "standard"), nil).Body.String() }).Should(ContainSubstring(id))
		rec = do("POST", "/reliability/dependencies", "", map[string]any{"parent_monitor_id": parent, "child_monitor_id": parent}, owner)
		Expect(validationFields(obj(rec))).To(ConsistOf("child_monitor_id"))
		Expect(do("POST", "/reliability/dependencies", key(ns, "automation"), map[string]any{"parent_monitor_id": parent, "child_monitor_id": child}).Code).
			To(Equal(http.StatusForbidden))
		Expect(do("DELETE", "/reliability/dependencies/"+id, "", nil, owner).Code).To(Equal(http.StatusNoContent))
		Eventually(func() int { return do("DELETE", "/reliability/dependencies/"+id, "", nil, owner).Code }).Should(Equal(http.StatusNotFound))
	})

	It("snoozes an incident until a time or for minutes", func() {
		_, inc := openIncident(ns, "snoozed")
		id := inc["id"].(string)
		rec := do("POST", "/incidents/"+id+"/snooze", "", map[string]any{"minutes": 30}, owner)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["snoozed_until"]).NotTo(BeNil())
		until := clk.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
		rec = do("POST", "/incidents/"+id+"/snooze", "", map[string]any{"until": until}, owner)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["snoozed_until"]).To(HavePrefix(until[:19]))

		rec = do("POST", "/incidents/"+id+"/snooze", "", map[string]any{}, owner)
		Expect(validationFields(obj(rec))).To(ConsistOf("until"))
		rec = do("POST", "/incidents/"+id+"/snooze", "", map[string]any{"minutes": 0}, owner)
		Expect(validationFields(obj(rec))).To(ConsistOf("minutes"))
		rec = do("POST", "/incidents/"+id+"/snooze", "", map[string]any{"until": "2001-01-01T00:00:00Z"}, owner)
		Expect(validationFields(obj(rec))).To(ConsistOf("until"))
		// Unsnoozing is allowed to keys.
		Expect(do("DELETE", "/incidents/"+id+"/snooze", key(ns, "standard"), nil).Code).To(Equal(http.StatusOK))
		Expect(do("POST", "/incidents/"+id+"/resolve", key(ns, "standard"), nil).Code).To(Equal(http.StatusOK))
		rec = do("POST", "/incidents/"+id+"/snooze", "", map[string]any{"minutes": 5}, owner)
		Expect(rec.Code).To(Equal(http.StatusConflict))
		Expect(obj(rec)["code"]).To(Equal("INCIDENT_RESOLVED"))
	})

	It("creates, updates and deletes maintenance windows as MaintenanceWindow CRs", func() {
		mid := createMonitor(ns, map[string]any{"name": "maint-target", "url": "https://example.com"})["id"].(string)
		start := clk.Now().Add(time.Hour).UTC().Truncate(time.Second)
		rec := do("POST", "/maintenance", "", map[string]any{"title": "DB upgrade", "description": "minor version",
			"starts_at": start.Format(time.RFC3339), "ends_at": start.Add(time.Hour).Format(time.RFC3339),
			"time_zone": "Europe/Berlin", "recurrence": "weekly", "monitor_ids": []string{mid}, "impact": "high"}, owner)
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		mw := obj(rec)
		Expect(mw["scope"]).To(Equal("monitors"))
		Expect(mw["monitor_ids"]).To(Equal([]any{mid}))
		Expect(mw["recurrence"]).To(Equal("weekly"))
		id := mw["id"].(string)

		var list monv1.MaintenanceWindowList
		Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
		cr := list.Items[0]
		Expect(string(cr.UID)).To(Equal(id))
		Expect(cr.Spec.Monitors).To(HaveLen(1))
		Expect(cr.Spec.TimeZone).To(Equal("Europe/Berlin"))
		Expect(cr.Spec.StartsAt.Time.Equal(start)).To(BeTrue())

		rec = do("POST", "/maintenance", "", map[string]any{"title": "", "starts_at": "soon", "ends_at": start.Format(time.RFC3339),
			"scope": "monitors", "monitor_ids": []string{"nope"}, "time_zone": "Mars/Olympus"}, owner)
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(ContainElements("title", "starts_at", "monitor_ids[0]", "time_zone"))

		rec = do("PATCH", "/maintenance/"+id, "", map[string]any{"scope": "all", "cancelled": true}, owner)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["state"]).To(Equal("cancelled"))
		Expect(obj(rec)["title"]).To(Equal("DB upgrade"))
		rec = do("PUT", "/maintenance/"+id, "", map[string]any{"ends_at": start.Add(-time.Hour).Format(time.RFC3339)}, owner)
		Expect(validationFields(obj(rec))).To(ConsistOf("ends_at"))

		Eventually(func() []any { return arr(do("GET", "/maintenance", key(ns, "read-only"), nil)) }).Should(HaveLen(1))
		Expect(do("DELETE", "/maintenance/"+id, "", nil, owner).Code).To(Equal(http.StatusNoContent))
		Expect(do("DELETE", "/maintenance/"+id, "", nil, owner).Code).To(Equal(http.StatusNotFound))
	})

	It("sets status page access with a password Secret and revokes sessions", func() {
		rec := do("POST", "/status/pages", key(ns, "standard"), map[string]any{"title": "Owner page"})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		id := obj(rec)["id"].(string)
		path := "/status/pages/" + id + "/access"

		rec = do("PUT", path, "", map[string]any{"mode": "password"}, owner)
		Expect(validationFields(obj(rec))).To(ConsistOf("password"))
		rec = do("PUT", path, "", map[string]any{"mode": "password", "password": "correct horse"}, owner)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).To(HaveKeyWithValue("has_password", true))
		Expect(obj(rec)["sessions_revoked_at"]).NotTo(BeNil())

		var pages monv1.StatusPageList
		Expect(k8s.List(ctx, &pages, client.InNamespace(ns))).To(Succeed())
		var page monv1.StatusPage
		for _, p := range pages.Items {
			if string(p.UID) == id {
				page = p
			}
		}
		Expect(page.Spec.Access.Mode).To(Equal(monv1.AccessPassword))
		var sec corev1.Secret
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: page.Spec.Access.PasswordSecretRef.Name}, &sec)).To(Succeed())
		Expect(string(sec.Data["password"])).To(Equal("correct horse"))

		clk.SetTime(clk.Now().Add(time.Minute))
		rec = do("POST", path+"/revoke-sessions", "", nil, owner)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(do("GET", path, key(ns, "read-only"), nil))["sessions_revoked_at"]).To(Equal(obj(rec)["sessions_revoked_at"]))

		rec = do("PUT", path, "", map[string]any{"mode": "public"}, owner)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).To(HaveKeyWithValue("has_password", false))
		Expect(do("PUT", path, "", map[string]any{"mode": "public", "extra": 1}, owner).Code).To(Equal(http.StatusBadRequest))

		By("sso needs rules, and a provider the suite's install does not have")
		rec = do("PUT", path, "", map[string]any{"mode": "sso", "sso": map[string]any{"allowed_groups": []string{"sre"}}}, owner)
		Expect(rec.Code).To(Equal(http.StatusBadRequest), rec.Body.String())
		Expect(validationFields(obj(rec))).To(ConsistOf("mode"))
		Expect(rec.Body.String()).To(ContainSubstring("--oidc-issuer-url"))
		rec = do("PUT", path, "", map[string]any{"mode": "public", "sso": map[string]any{"allowed_groups": []string{"sre"}}}, owner)
		Expect(validationFields(obj(rec))).To(ConsistOf("sso"))
		Expect(obj(do("GET", path, key(ns, "read-only"), nil))).To(HaveKeyWithValue("sso", BeNil()))
	})

	// The AlertChannel controller writes the signing Secret of a webhook
	// channel applied without one; a rotation can meet it at any moment.
	It("rotates the signing secret of a webhook channel applied without one, also while the controller writes the same Secret", func() {
		ch := &monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Name: "applied-hook", Namespace: ns},
			Spec: monv1.AlertChannelSpec{Type: monv1.ChannelWebhook, WebhookURL: "https://93.184.216.34/applied"}}
		Expect(k8s.Create(ctx, ch)).To(Succeed())
		path := "/integrations/connections/" + string(ch.UID) + "/rotate-secret"
		secretKey := client.ObjectKey{Namespace: ns, Name: monv1.SigningSecretName(ch.Name)}
		signingSecret := func(g Gomega) string {
			var sec corev1.Secret
			g.Expect(k8s.Get(ctx, secretKey, &sec)).To(Succeed())
			g.Expect(metav1.GetControllerOf(&sec)).To(HaveField("UID", ch.UID), "the controller accepts only a Secret the channel controls")
			return string(sec.Data[monv1.SigningSecretKey])
		}

		// Right after the apply: whoever creates the Secret first, the
		// rotation answers 200 and the controller ends Ready with the
		// rotated value, under the key it signs with.
		var fresh string
		Eventually(func(g Gomega) {
			rec := do("POST", path, "", nil, owner)
			g.Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
			fresh = obj(rec)["signing_secret"].(string)
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			var got monv1.AlertChannel
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ch), &got)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, monv1.ConditionReady)).To(BeTrue(), "%v", got.Status.Conditions)
			g.Expect(signingSecret(g)).To(Equal(fresh))
		}).WithTimeout(30 * time.Second).Should(Succeed())

		// The controller creates the Secret between the handler's read and
		// its create (AlreadyExists), or changes it between the read and the
		// update (Conflict): the rotation is redone on the fresh Secret.
		controllerWrites := func(ctx context.Context) {
			var sec corev1.Secret
			err := k8s.Get(ctx, secretKey, &sec)
			if apierrors.IsNotFound(err) {
				sec = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: secretKey.Name}, Type: corev1.SecretTypeOpaque,
					Data: map[string][]byte{monv1.SigningSecretKey: []byte("whsec_from_the_controller")}}
				Expect(controllerutil.SetControllerReference(ch, &sec, k8s.Scheme())).To(Succeed())
				Expect(k8s.Create(ctx, &sec)).To(Succeed())
				return
			}
			Expect(err).NotTo(HaveOccurred())
			sec.Data[monv1.SigningSecretKey] = []byte("whsec_from_the_controller")
			Expect(k8s.Update(ctx, &sec)).To(Succeed())
		}
		for _, verb := range []string{"create", "update"} {
			if verb == "create" {
				var sec corev1.Secret
				Expect(k8s.Get(ctx, secretKey, &sec)).To(Succeed())
				Expect(k8s.Delete(ctx, &sec)).To(Succeed())
				Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, secretKey, &sec)) }).Should(BeTrue())
			}
			opts := suiteOptions()
			racing := &racingClient{Client: opts.Client, verb: verb, secret: secretKey, race: controllerWrites}
			opts.Client = racing
			rec := doOn(apiserver.New(opts), "POST", path, "", nil, owner)
			Expect(racing.raced.Load()).To(BeTrue(), "the controller wrote between the handler's read and its %s", verb)
			Expect(rec.Code).To(Equal(http.StatusOK), "%s race: %s", verb, rec.Body.String())
			fresh = obj(rec)["signing_secret"].(string)
			Expect(signingSecret(Default)).To(Equal(fresh), "%s race: the rotated value is stored", verb)
		}
	})

	It("rotates a webhook's signing secret: the new one is returned once and replaces the old", func() {
		rec := do("POST", "/integrations/webhook/connections", key(ns, "automation"), map[string]any{"webhook_url": "https://93.184.216.34/hook"})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		old := obj(rec)["signing_secret"].(string)
		id := obj(rec)["connection_id"].(string)

		rec = do("POST", "/integrations/connections/"+id+"/rotate-secret", "", nil, owner)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		fresh := obj(rec)["signing_secret"].(string)
		Expect(fresh).To(HavePrefix("whsec_"))
		Expect(fresh).NotTo(Equal(old))

		var chans monv1.AlertChannelList
		Expect(k8s.List(ctx, &chans, client.InNamespace(ns))).To(Succeed())
		var name string
		for _, ch := range chans.Items {
			if string(ch.UID) == id {
				name = ch.Name
			}
		}
		var sec corev1.Secret
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-signing"}, &sec)).To(Succeed())
		Expect(string(sec.Data[monv1.SigningSecretKey])).To(Equal(fresh))

		rec = do("POST", "/integrations/pagerduty/connections", key(ns, "automation"), map[string]any{"integration_key": "pd"})
		Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
		Expect(do("POST", "/integrations/connections/"+obj(rec)["connection_id"].(string)+"/rotate-secret", "", nil, owner).Code).
			To(Equal(http.StatusBadRequest))
	})
})

// racingClient is the API's client with a writer that comes in between:
// right before the handler's first <verb> ("create" or "update") of the
// Secret named secret, race runs once, as the AlertChannel controller
// writing the same Secret at that moment would.
type racingClient struct {
	client.Client
	verb   string
	secret client.ObjectKey
	race   func(context.Context)
	raced  atomic.Bool
}

func (c *racingClient) before(ctx context.Context, verb string, obj client.Object) {
	if _, ok := obj.(*corev1.Secret); ok && verb == c.verb && client.ObjectKeyFromObject(obj) == c.secret && c.raced.CompareAndSwap(false, true) {
		c.race(ctx)
	}
}

func (c *racingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.before(ctx, "create", obj)
	return c.Client.Create(ctx, obj, opts...)
}

func (c *racingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.before(ctx, "update", obj)
	return c.Client.Update(ctx, obj, opts...)
}
