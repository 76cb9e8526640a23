package webhooks_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

var _ = Describe("Monitor admission of credentials and heartbeat tokens", func() {
	// A kubectl user whose role has Monitors but not Secrets must not have
	// the manager send a Secret they cannot read (issue 27, row 1).
	It("refuses a valueFrom naming a Secret the Monitor may not read, and accepts one that opts in", func() {
		// Names of their own: other specs of the suite make AlertChannels
		// (and their signing Secrets) in the same namespace.
		optIn := map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}
		for _, s := range []*corev1.Secret{
			{ObjectMeta: metav1.ObjectMeta{Name: "trust-app-db", Namespace: "team"}, StringData: map[string]string{"password": "p"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "trust-api-token", Namespace: "team", Labels: optIn}, StringData: map[string]string{"token": "t"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "trust-hook-signing", Namespace: "team", Labels: optIn, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: monv1.GroupVersion.String(), Kind: "AlertChannel", Name: "trust-hook", UID: "4c1c5a0e-0000-4000-8000-000000000001"}}},
				StringData: map[string]string{"signing-secret": "whsec"}},
		} {
			Expect(k8s.Create(ctx, s)).To(Succeed())
		}
		ref := func(secret, key string) string {
			return monitor("url: https://example.com\nhttp:\n  headers: [{name: X-Db, valueFrom: {name: " + secret + ", key: " + key + "}}]")
		}
		err := create("team", ref("trust-app-db", "password"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.http.headers[0].valueFrom.name: Forbidden"))
		Expect(err.Error()).To(ContainSubstring("does not opt in with the label monitoring.uptime-operator.io/credentials"))
		err = create("team", ref("trust-hook-signing", "signing-secret"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("it belongs to AlertChannel trust-hook"))
		Expect(create("team", ref("trust-api-token", "token"))).To(Succeed())
		Expect(create("team", ref("trust-created-later", "token"))).To(Succeed(), "a Secret that does not exist yet is checked when it is read")
		mstep := monitor("type: multistep\nmultistep:\n  steps: [{name: a, url: 'https://example.com/', headers: [{name: Cookie, valueFrom: {name: trust-app-db, key: password}}]}]")
		err = create("team", mstep)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.multistep.steps[0].headers[0].valueFrom.name: Forbidden"))
	})

	// Heartbeat URLs name no workspace: a token is unique in the cluster
	// and as hard to guess as a minted one (issue 27, row 8).
	It("refuses a heartbeat token another Monitor holds, or one easy to guess", func() {
		tok := monv1.NewHeartbeatToken()
		cron := func(ns, name, token string) *monv1.Monitor {
			return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
				Annotations: map[string]string{monv1.HeartbeatTokenAnnotation: token}},
				Spec: monv1.MonitorSpec{Type: monv1.MonitorCron, IntervalSeconds: 300, Cron: &monv1.CronConfig{CronExpression: "*/5 * * * *"}}}
		}
		Expect(k8s.Create(ctx, cron("team", "nightly", tok))).To(Succeed())
		// Admission finds the holder through the manager's cache index.
		Eventually(func(g Gomega) {
			var list monv1.MonitorList
			g.Expect(env.Manager.GetClient().List(ctx, &list, client.MatchingFields{monv1.HeartbeatTokenIndex: monv1.HashHeartbeatToken(tok)})).To(Succeed())
			g.Expect(list.Items).To(HaveLen(1))
		}).Should(Succeed())
		err := k8s.Create(ctx, cron("limits", "copy", tok))
		Expect(err).To(MatchError(ContainSubstring("Duplicate value")), "another workspace cannot take the token")
		err = k8s.Create(ctx, cron("limits", "weak", "abc"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("at least 32 characters"))
		Expect(err.Error()).NotTo(ContainSubstring(tok))

		// Nor can an update copy it, though the spec does not change.
		other := cron("limits", "later", monv1.NewHeartbeatToken())
		Expect(k8s.Create(ctx, other)).To(Succeed())
		Eventually(func(g Gomega) {
			var fresh monv1.Monitor
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(other), &fresh)).To(Succeed())
			fresh.Annotations[monv1.HeartbeatTokenAnnotation] = tok
			err := k8s.Update(ctx, &fresh)
			g.Expect(err).To(HaveOccurred())
			g.Expect(strings.Contains(err.Error(), "Duplicate value")).To(BeTrue(), err.Error())
		}).Should(Succeed())

		// Nor its hash, which the object shows where the token was.
		Eventually(func(g Gomega) {
			var fresh monv1.Monitor
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(other), &fresh)).To(Succeed())
			delete(fresh.Annotations, monv1.HeartbeatTokenAnnotation)
			fresh.Annotations[monv1.HeartbeatTokenHashAnnotation] = monv1.HashHeartbeatToken(tok)
			err := k8s.Update(ctx, &fresh)
			g.Expect(err).To(HaveOccurred())
			g.Expect(strings.Contains(err.Error(), "Duplicate value")).To(BeTrue(), err.Error())
		}).Should(Succeed())
		var fresh monv1.Monitor
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(other), &fresh)).To(Succeed())
		delete(fresh.Annotations, monv1.HeartbeatTokenAnnotation)
		fresh.Annotations[monv1.HeartbeatTokenHashAnnotation] = "not-a-hash"
		Expect(k8s.Update(ctx, &fresh)).To(MatchError(ContainSubstring("hex SHA-256")))
	})
})
