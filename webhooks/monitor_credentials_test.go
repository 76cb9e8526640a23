package webhooks_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/manager"
)

// clientAs is a client that impersonates user (authenticated, no groups
// that grant anything).
func clientAs(user string) client.Client {
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: manager.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// grant binds user to a Role of namespace ns with rules.
func grant(ns, user string, rules ...rbacv1.PolicyRule) {
	name := "creds-" + user
	Expect(k8s.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: rules})).To(Succeed())
	Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}})).To(Succeed())
}

// patch changes the Monitor m as mutate says, with a merge patch sent by
// c (no resourceVersion: the controller's status writes do not conflict).
func patch(c client.Client, m *monv1.Monitor, mutate func(*monv1.Monitor)) error {
	var cur monv1.Monitor
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), &cur)).To(Succeed())
	base := cur.DeepCopy()
	mutate(&cur)
	return c.Patch(ctx, &cur, client.MergeFrom(base))
}

// ownCredentials creates m with an Authorization header read from its own
// credentials Secret, as the REST API leaves it: the Secret labelled with
// the monitor's name and owned by its UID.
func ownCredentials(ns, name, url string) *monv1.Monitor {
	secret := name + "-credentials"
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: monv1.MonitorSpec{
		Type: monv1.MonitorHTTP, URL: url, HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{
			{Name: "Authorization", ValueFrom: &monv1.SecretKeySelector{Name: secret, Key: "http.authorization"}}}}}}
	Expect(k8s.Create(ctx, m)).To(Succeed())
	Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: ns,
		Labels:          map[string]string{monv1.CredentialsOfLabel: name},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: monv1.GroupVersion.String(), Kind: "Monitor", Name: name, UID: m.UID}}},
		StringData: map[string]string{"http.authorization": "Bearer prod-billing-token"}})).To(Succeed())
	return m
}

var _ = Describe("Monitor admission of stored credentials (issue 36, row 1)", func() {
	monitorsRule := rbacv1.PolicyRule{APIGroups: []string{monv1.GroupVersion.Group}, Resources: []string{"monitors"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}
	secretsRule := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}

	It("refuses an editor who may not read the Secret to send a stored credential elsewhere, and lets one who may", func() {
		grant("team", "eve-editor", monitorsRule)
		grant("team", "sam-secrets", monitorsRule, secretsRule)
		eve, sam := clientAs("eve-editor"), clientAs("sam-secrets")
		m := ownCredentials("team", "billing", "https://billing.example.com/health")

		retarget := func(c client.Client, mutate func(*monv1.Monitor)) error { return patch(c, m, mutate) }
		err := retarget(eve, func(cur *monv1.Monitor) { cur.Spec.URL = "https://collector.example.net/" })
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("spec.http.headers[0].valueFrom: Forbidden: the url moves from https://billing.example.com:443 to https://collector.example.net:443"))
		Expect(err.Error()).To(ContainSubstring(`user "eve-editor" may not read (get secrets/billing-credentials): supply the credential again`))
		// Another scheme or port is another origin too.
		err = retarget(eve, func(cur *monv1.Monitor) { cur.Spec.URL = "http://billing.example.com/health" })
		Expect(err).To(MatchError(ContainSubstring("may not read")))

		// The same origin is where the credential was stored for.
		Expect(retarget(eve, func(cur *monv1.Monitor) { cur.Spec.URL = "https://BILLING.example.com:443/v2/health" })).To(Succeed())

		// Dropping the header and adding it back under another url is the
		// same move in two writes.
		Expect(retarget(eve, func(cur *monv1.Monitor) { cur.Spec.HTTP.Headers = nil })).To(Succeed())
		Expect(retarget(eve, func(cur *monv1.Monitor) { cur.Spec.URL = "https://collector.example.net/" })).To(Succeed())
		err = retarget(eve, func(cur *monv1.Monitor) {
			cur.Spec.HTTP.Headers = []monv1.HTTPHeader{{Name: "Authorization", ValueFrom: &monv1.SecretKeySelector{Name: "billing-credentials", Key: "http.authorization"}}}
		})
		Expect(err).To(MatchError(ContainSubstring("the monitor's own credentials")))

		// Whoever may read the Secret may send it where they like.
		Expect(retarget(sam, func(cur *monv1.Monitor) {
			cur.Spec.URL = "https://billing.example.com/health"
			cur.Spec.HTTP.Headers = []monv1.HTTPHeader{{Name: "Authorization", ValueFrom: &monv1.SecretKeySelector{Name: "billing-credentials", Key: "http.authorization"}}}
		})).To(Succeed())
		Expect(retarget(sam, func(cur *monv1.Monitor) { cur.Spec.URL = "https://billing-v2.example.com/health" })).To(Succeed())
	})

	It("applies the rule to each multistep step's url", func() {
		grant("team", "eve-steps", monitorsRule)
		eve := clientAs("eve-steps")
		opt := map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "orders-token", Namespace: "team", Labels: opt},
			StringData: map[string]string{"token": "Bearer t"}})).To(Succeed())
		m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "team"}, Spec: monv1.MonitorSpec{
			Type: monv1.MonitorMultistep, Multistep: &monv1.MultistepConfig{Steps: []monv1.MultistepStep{
				{Name: "login", URL: "https://shop.example.com/login"},
				{Name: "orders", URL: "https://api.example.com/orders", Headers: []monv1.HTTPHeader{
					{Name: "Authorization", ValueFrom: &monv1.SecretKeySelector{Name: "orders-token", Key: "token"}}}},
			}}}}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Expect(patch(eve, m, func(cur *monv1.Monitor) { cur.Spec.Multistep.Steps[0].URL = "https://elsewhere.example.net/login" })).
			To(Succeed(), "step 0 carries no credential")
		err := patch(eve, m, func(cur *monv1.Monitor) { cur.Spec.Multistep.Steps[1].URL = "{{base}}/orders" })
		Expect(err).To(MatchError(ContainSubstring(
			`spec.multistep.steps[1].headers[0].valueFrom: Forbidden: the step's url moves from https://api.example.com:443 to {{base}}/orders`)))
	})

	It("does not give a Monitor re-created under a name the Secret of the one deleted with --cascade=orphan", func() {
		old := ownCredentials("team", "ledger", "https://ledger.example.com/")
		Expect(k8s.Delete(ctx, old)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(old), &monv1.Monitor{}))).To(BeTrue())
		}).Should(Succeed())
		// What the garbage collector does to the dependents of an owner
		// deleted with --cascade=orphan (envtest runs no garbage
		// collector): it removes their owner reference.
		var sec corev1.Secret
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "team", Name: "ledger-credentials"}, &sec)).To(Succeed())
		sec.OwnerReferences = nil
		Expect(k8s.Update(ctx, &sec)).To(Succeed())

		again := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "ledger", Namespace: "team"}, Spec: monv1.MonitorSpec{
			Type: monv1.MonitorHTTP, URL: "https://collector.example.net/", HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{
				{Name: "Authorization", ValueFrom: &monv1.SecretKeySelector{Name: "ledger-credentials", Key: "http.authorization"}}}}}}
		err := k8s.Create(ctx, again)
		Expect(err).To(MatchError(ContainSubstring("it holds the credentials of an earlier monitor named ledger and is not owned by this one")))
	})
})
