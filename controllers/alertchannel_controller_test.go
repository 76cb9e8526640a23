package controllers_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/controllers"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

func TestReadyReason(t *testing.T) {
	for _, tc := range []struct {
		ready, disabled bool
		msg, reason     string
	}{
		{true, false, "", monv1.ReasonReconciled},
		{true, true, "", monv1.ReasonReconciled},
		{false, false, "secret s not found", monv1.ReasonSecretNotFound},
		{false, false, "secret s may not be used by this channel", monv1.ReasonSecretNotAllowed},
	} {
		reason, msg := controllers.ReadyReason(tc.ready, tc.reason, tc.msg, tc.disabled)
		if reason != tc.reason || msg == "" || (!tc.ready && msg != tc.msg) {
			t.Errorf("ReadyReason(%v, %q, %v) = %s, %q", tc.ready, tc.msg, tc.disabled, reason, msg)
		}
	}
}

func TestAlertChannelSecretRefs(t *testing.T) {
	s := monv1.AlertChannelSpec{
		WebhookURLFrom:   &monv1.SecretKeySelector{Name: "a", Key: "url"},
		SigningSecretRef: &monv1.SecretKeySelector{Name: "b", Key: "k"},
	}
	if got := s.SecretRefs(); len(got) != 2 || got[0].Ref.Name != "a" || got[0].Field != "webhookURLFrom" ||
		got[1].Ref.Name != "b" || got[1].Field != "signingSecretRef" {
		t.Errorf("SecretRefs = %v", got)
	}
}

// TestAlertChannelController runs the reconciler and the delivery worker
// against a real API server (envtest).
func TestAlertChannelController(t *testing.T) {
	env := testenv.Use(t, env)
	g := NewWithT(t)
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	k8s := env.Client
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	// The reconciler runs in a manager of its own, so the test does not
	// depend on how the main manager is assembled; its cache strips
	// managedFields as the manager's does.
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Cache:                  cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		Scheme:                 manager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect((&controllers.AlertChannelReconciler{Client: mgr.GetClient(), Secrets: mgr.GetAPIReader()}).SetupWithManager(mgr)).To(Succeed())
	go func() { _ = mgr.Start(ctx) }()

	ns := env.Namespace(t, nil)
	get := func(g Gomega, name string) *monv1.AlertChannel {
		var ch monv1.AlertChannel
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &ch)).To(Succeed())
		return &ch
	}

	t.Run("generates the signing secret", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hook-url", Labels: map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}},
			StringData: map[string]string{"url": "https://hooks.example.com/x"},
		})).To(Succeed())
		ch := &monv1.AlertChannel{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hook"},
			Spec: monv1.AlertChannelSpec{Type: monv1.ChannelWebhook,
				WebhookURLFrom: &monv1.SecretKeySelector{Name: "hook-url", Key: "url"}},
		}
		g.Expect(k8s.Create(ctx, ch)).To(Succeed())
		g.Eventually(func(g Gomega) {
			got := get(g, "hook")
			g.Expect(got.Status.ConnectionID).To(Equal(string(got.UID)))
			g.Expect(got.Status.SigningSecretName).To(Equal("hook-signing"))
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, monv1.ConditionReady)).To(BeTrue())
			g.Expect(got.Spec.SigningSecretRef).To(BeNil(), "the spec is never written")
		}).WithTimeout(30 * time.Second).Should(Succeed())

		var s corev1.Secret
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hook-signing"}, &s)).To(Succeed())
		v := string(s.Data[monv1.SigningSecretKey])
		g.Expect(v).To(HavePrefix("whsec_"), "the form of monv1.NewSigningSecret, as the REST API generates it")
		raw, err := hex.DecodeString(strings.TrimPrefix(v, "whsec_"))
		g.Expect(raw).To(HaveLen(32))
		g.Expect(err).NotTo(HaveOccurred())
		owner := metav1.GetControllerOf(&s)
		g.Expect(owner).NotTo(BeNil())
		g.Expect(owner.UID).To(Equal(get(g, "hook").UID))
	})

	t.Run("reports a missing secret", func(t *testing.T) {
		g := NewWithT(t)
		ch := &monv1.AlertChannel{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pd"},
			Spec: monv1.AlertChannelSpec{Type: monv1.ChannelPagerDuty,
				IntegrationKeyFrom: &monv1.SecretKeySelector{Name: "pd-key", Key: "key"}},
		}
		g.Expect(k8s.Create(ctx, ch)).To(Succeed())
		g.Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(get(g, "pd").Status.Conditions, monv1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(monv1.ReasonSecretNotFound))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		g.Expect(get(g, "pd").Status.SigningSecretName).To(BeEmpty())

		g.Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pd-key", Labels: map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}},
			StringData: map[string]string{"key": "k"},
		})).To(Succeed())
		// A spec change reconciles at once (otherwise the 30 s recheck does).
		cur := get(g, "pd")
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Spec.Name = "PagerDuty"
		g.Expect(k8s.Patch(ctx, cur, patch)).To(Succeed())
		g.Eventually(func(g Gomega) {
			g.Expect(meta.IsStatusConditionTrue(get(g, "pd").Status.Conditions, monv1.ConditionReady)).To(BeTrue())
		}).WithTimeout(30 * time.Second).Should(Succeed())
	})

	t.Run("reports a Secret the channel may not read as SecretNotAllowed", func(t *testing.T) {
		g := NewWithT(t)
		// The channel first: admission passes a Secret that does not exist
		// yet; the controller then finds one that does not opt in.
		ch := &monv1.AlertChannel{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-hook"},
			Spec: monv1.AlertChannelSpec{Type: monv1.ChannelPagerDuty,
				IntegrationKeyFrom: &monv1.SecretKeySelector{Name: "app-password", Key: "password"}},
		}
		g.Expect(k8s.Create(ctx, ch)).To(Succeed())
		g.Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-password"},
			StringData: map[string]string{"password": "hunter2"},
		})).To(Succeed())
		cur := get(g, "app-hook")
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Spec.Name = "App"
		g.Expect(k8s.Patch(ctx, cur, patch)).To(Succeed())
		g.Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(get(g, "app-hook").Status.Conditions, monv1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.ObservedGeneration).To(Equal(get(g, "app-hook").Generation))
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(monv1.ReasonSecretNotAllowed), c.Message)
			g.Expect(c.Message).To(ContainSubstring("app-password"))
		}).WithTimeout(30 * time.Second).Should(Succeed())
	})

	t.Run("Failing after 3 failed deliveries, cleared by a success", func(t *testing.T) {
		g := NewWithT(t)
		var fail atomic.Bool
		fail.Store(true)
		var hits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			hits.Add(1)
			if fail.Load() {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			w.WriteHeader(http.StatusOK)
		}))
		t.Cleanup(srv.Close)
		g.Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "flaky-url", Labels: map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}},
			StringData: map[string]string{"url": srv.URL},
		})).To(Succeed())
		g.Expect(k8s.Create(ctx, &monv1.AlertChannel{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "flaky"},
			Spec: monv1.AlertChannelSpec{Type: monv1.ChannelWebhook,
				WebhookURLFrom: &monv1.SecretKeySelector{Name: "flaky-url", Key: "url"}},
		})).To(Succeed())
		g.Eventually(func(g Gomega) {
			g.Expect(get(g, "flaky").Status.SigningSecretName).NotTo(BeEmpty())
		}).WithTimeout(30 * time.Second).Should(Succeed())
		uid := string(get(g, "flaky").UID)

		st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "store.db"), sqlite.Options{})
		g.Expect(err).NotTo(HaveOccurred())
		t.Cleanup(func() { _ = st.Close() })
		w := &alerting.Worker{Store: st, Client: k8s, Owner: "test", AllowPrivateTargets: true,
			PollInterval: 20 * time.Millisecond}
		wctx, stop := context.WithCancel(ctx)
		t.Cleanup(stop)
		go func() { _ = w.Run(wctx) }()

		send := func() {
			ev, err := alerting.TestEvent(ns, uid, time.Now())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(st.EnqueueEvents(ctx, ev)).To(Succeed())
			g.Eventually(func(g Gomega) {
				ds, err := st.ListDeliveries(ctx, store.DeliveryQuery{EventID: ev.ID})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(ds).To(HaveLen(1))
				g.Expect(ds[0].Status).NotTo(Equal(store.DeliveryPending))
			}).WithTimeout(30 * time.Second).Should(Succeed())
		}
		for i := int32(1); i <= 3; i++ {
			send()
			g.Eventually(func(g Gomega) {
				g.Expect(get(g, "flaky").Status.ConsecutiveFailures).To(Equal(i))
			}).WithTimeout(30 * time.Second).Should(Succeed())
			g.Expect(meta.IsStatusConditionTrue(get(g, "flaky").Status.Conditions, monv1.AlertChannelConditionFailing)).To(Equal(i == 3))
		}
		// The owner notice is recorded right after the status patch.
		g.Eventually(func(g Gomega) {
			g.Expect(get(g, "flaky").Annotations).To(HaveKey(alerting.FailingNoticeAnnotation))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		got := get(g, "flaky")
		c := meta.FindStatusCondition(got.Status.Conditions, monv1.AlertChannelConditionFailing)
		g.Expect(c.Reason).To(Equal(monv1.ReasonDeliveriesFailing))
		g.Expect(got.Status.LastDeliveryStatus).To(Equal("400"))
		g.Expect(got.Status.LastDeliveryAt).NotTo(BeNil())
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, monv1.ConditionReady)).To(BeTrue(), "the controller's condition survives")
		g.Expect(got.Spec.Disabled).To(BeFalse())

		fail.Store(false)
		send()
		g.Eventually(func(g Gomega) {
			got := get(g, "flaky")
			g.Expect(got.Status.ConsecutiveFailures).To(BeZero())
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, monv1.AlertChannelConditionFailing)).To(BeFalse())
			g.Expect(got.Status.LastDeliveryStatus).To(Equal("200"))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		g.Expect(hits.Load()).To(Equal(int32(4)))

		// Each writer applies its own fields as a field manager of its own.
		owners := statusOwners(g, get(g, "flaky"))
		g.Expect(owners[monv1.DeliveryFieldOwner]).To(ConsistOf("consecutiveFailures", "lastDeliveryAt", "lastDeliveryStatus", "conditions/Failing"))
		g.Expect(owners[monv1.AlertChannelControllerFieldOwner]).To(ContainElements("observedGeneration", "connectionID", "signingSecretName", "conditions/Ready"))
		g.Expect(owners[monv1.AlertChannelControllerFieldOwner]).NotTo(ContainElement("conditions/Failing"))
		g.Expect(owners).NotTo(HaveKey(monv1.FieldOwner))
	})

	t.Run("adopts the status fields of the one field owner of earlier releases", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(k8s.Create(ctx, &monv1.AlertChannel{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy"},
			Spec: monv1.AlertChannelSpec{Type: monv1.ChannelPagerDuty,
				IntegrationKeyFrom: &monv1.SecretKeySelector{Name: "pd-key", Key: "key"}},
		})).To(Succeed())
		g.Eventually(func(g Gomega) {
			g.Expect(meta.IsStatusConditionTrue(get(g, "legacy").Status.Conditions, monv1.ConditionReady)).To(BeTrue())
		}).WithTimeout(30 * time.Second).Should(Succeed())
		// An earlier release merge-patched status as the operator's one
		// owner: a delivery result and a Reconciling condition that no
		// longer holds.
		ch := get(g, "legacy")
		before := ch.DeepCopy()
		ch.Status.ConsecutiveFailures = 2
		ch.Status.LastDeliveryStatus = "500"
		meta.SetStatusCondition(&ch.Status.Conditions, metav1.Condition{Type: monv1.ConditionReconciling, Status: metav1.ConditionTrue,
			Reason: "Old", Message: "left over", ObservedGeneration: ch.Generation})
		g.Expect(k8s.Status().Patch(ctx, ch, client.MergeFrom(before), client.FieldOwner(monv1.FieldOwner))).To(Succeed())
		g.Expect(statusOwners(g, get(g, "legacy"))).To(HaveKey(monv1.FieldOwner))

		// The first reconcile of a new process (a fresh reconciler) adopts.
		fresh := &controllers.AlertChannelReconciler{Client: k8s, Secrets: k8s}
		g.Eventually(func(g Gomega) {
			_, err := fresh.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "legacy"}})
			g.Expect(err).NotTo(HaveOccurred())
			got := get(g, "legacy")
			g.Expect(statusOwners(g, got)).NotTo(HaveKey(monv1.FieldOwner))
			g.Expect(meta.FindStatusCondition(got.Status.Conditions, monv1.ConditionReconciling)).To(BeNil(), "the stale condition is removed")
			g.Expect(got.Status.ConsecutiveFailures).To(Equal(int32(2)), "the worker's fields are kept")
			g.Expect(got.Status.LastDeliveryStatus).To(Equal("500"))
			g.Expect(statusOwners(g, got)[monv1.DeliveryFieldOwner]).To(ConsistOf("consecutiveFailures", "lastDeliveryStatus"))
		}).WithTimeout(30 * time.Second).Should(Succeed())
	})
}

// statusOwners lists, per field manager, the status fields it owns
// ("conditions/<type>" for a condition).
func statusOwners(g Gomega, ch *monv1.AlertChannel) map[string][]string {
	out := map[string][]string{}
	for _, e := range ch.ManagedFields {
		if e.Subresource != "status" || e.FieldsV1 == nil {
			continue
		}
		var f struct {
			Status map[string]json.RawMessage `json:"f:status"`
		}
		g.Expect(json.Unmarshal(e.FieldsV1.Raw, &f)).To(Succeed())
		for k, v := range f.Status {
			switch {
			case k == "f:conditions":
				var items map[string]json.RawMessage
				g.Expect(json.Unmarshal(v, &items)).To(Succeed())
				for ik := range items {
					var key struct{ Type string }
					if rest, ok := strings.CutPrefix(ik, "k:"); ok && json.Unmarshal([]byte(rest), &key) == nil {
						out[e.Manager] = append(out[e.Manager], "conditions/"+key.Type)
					}
				}
			case strings.HasPrefix(k, "f:"):
				out[e.Manager] = append(out[e.Manager], strings.TrimPrefix(k, "f:"))
			}
		}
	}
	return out
}
