package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/controllers"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

func TestEscalationPolicyReady(t *testing.T) {
	spec := &monv1.EscalationPolicySpec{Steps: []monv1.EscalationStep{
		{DelayMinutes: 0, Channels: []monv1.LocalObjectReference{{Name: "pager"}}},
		{DelayMinutes: 10, Channels: []monv1.LocalObjectReference{{Name: "chat"}, {Name: "pager"}}, Emails: []string{"a@example.com"}},
	}}
	for _, tc := range []struct {
		name     string
		existing map[string]bool
		ready    bool
		reason   string
		mentions []string
	}{
		{"all exist", map[string]bool{"pager": true, "chat": true}, true, monv1.ReasonReconciled, nil},
		{"one missing", map[string]bool{"pager": true}, false, monv1.ReasonReferenceNotFound, []string{"chat (step 2)"}},
		{"none exist", map[string]bool{}, false, monv1.ReasonReferenceNotFound, []string{"pager (step 1)", "chat (step 2)", "pager (step 2)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ready, reason, msg := controllers.EscalationPolicyReady(spec, tc.existing)
			if ready != tc.ready || reason != tc.reason || msg == "" {
				t.Errorf("got %v %s %q", ready, reason, msg)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(msg, m) {
					t.Errorf("message %q does not name %s", msg, m)
				}
			}
		})
	}
}

// TestEscalationPolicyController runs the reconciler against a real API
// server (envtest).
func TestEscalationPolicyController(t *testing.T) {
	env := testenv.Use(t, env)
	g := NewWithT(t)
	k8s := env.Client
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 manager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect((&controllers.EscalationPolicyReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)).To(Succeed())
	go func() { _ = mgr.Start(ctx) }()

	ns := env.Namespace(t, nil)
	g.Expect(k8s.Create(ctx, &monv1.EscalationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "oncall"},
		Spec: monv1.EscalationPolicySpec{Steps: []monv1.EscalationStep{
			{DelayMinutes: 5, Channels: []monv1.LocalObjectReference{{Name: "pager"}}},
			{DelayMinutes: 10, Emails: []string{"boss@example.com"}},
		}},
	})).To(Succeed())
	ready := func(g Gomega) *metav1.Condition {
		var p monv1.EscalationPolicy
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "oncall"}, &p)).To(Succeed())
		c := meta.FindStatusCondition(p.Status.Conditions, monv1.ConditionReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(p.Status.ObservedGeneration).To(Equal(p.Generation))
		return c
	}
	g.Eventually(func(g Gomega) {
		c := ready(g)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(monv1.ReasonReferenceNotFound))
		g.Expect(c.Message).To(ContainSubstring("pager (step 1)"))
	}).WithTimeout(30 * time.Second).Should(Succeed())

	// Creating the channel makes the policy Ready without touching it.
	g.Expect(k8s.Create(ctx, &monv1.AlertChannel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pager"},
		Spec:       monv1.AlertChannelSpec{Type: monv1.ChannelEmail, Emails: []string{"pager@example.com"}},
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := ready(g)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(monv1.ReasonReconciled))
	}).WithTimeout(30 * time.Second).Should(Succeed())

	// Deleting it makes it not Ready again.
	g.Expect(k8s.Delete(ctx, &monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pager"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(ready(g).Status).To(Equal(metav1.ConditionFalse))
	}).WithTimeout(30 * time.Second).Should(Succeed())
}
