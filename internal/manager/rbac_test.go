package manager_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// TestManagerRunsOnItsGeneratedRBAC (issue 27 row 8): the manager, run as
// its ServiceAccount with exactly the RBAC of config/rbac (generated from
// the kubebuilder markers, copied into the chart), starts, syncs its caches
// and creates a region's probe Deployment in the probe namespace; and that
// RBAC no longer lets it create Deployments or ServiceAccounts in any other
// namespace. Before, both were granted cluster-wide.
func TestManagerRunsOnItsGeneratedRBAC(t *testing.T) {
	// Its subject is the manager's start-up as that ServiceAccount: the
	// test runs its own managers, each serving the webhooks.
	env := testenv.Use(t, env)
	env.StopForTest(t)
	admin := env.Config
	webhookHost, webhookPort := env.WebhookAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	k8s, err := client.New(admin, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}

	const ns, sa, team = "uptime-operator-system", "uptime-operator-manager", "rbac-team"
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}},
	} {
		// The probe namespace may be there from another test of the manager.
		if err := k8s.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	// The generated roles and their bindings, with kustomize's "system"
	// placeholder namespace replaced as config/default does.
	for _, file := range []string{"role.yaml", "role_binding.yaml"} {
		for _, o := range readManifests(t, filepath.Join("..", "..", "config", "rbac", file)) {
			if o.GetNamespace() == "system" {
				o.SetNamespace(ns)
			}
			if subjects, ok, _ := unstructured.NestedSlice(o.Object, "subjects"); ok {
				for _, s := range subjects {
					s.(map[string]any)["namespace"] = ns
				}
				_ = unstructured.SetNestedSlice(o.Object, subjects, "subjects")
			}
			if err := k8s.Create(ctx, o); err != nil {
				t.Fatalf("create %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}

	// What the role allows, asked of kube-apiserver's authorizer.
	user := "system:serviceaccount:" + ns + ":" + sa
	can := func(verb, group, resource, namespace string) bool {
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{User: user,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authzv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Namespace: namespace}}}
		if err := k8s.Create(ctx, sar); err != nil {
			t.Fatal(err)
		}
		return sar.Status.Allowed
	}
	// RBAC objects reach the authorizer through its informers: wait until
	// both roles are in effect.
	for !can("create", "apps", "deployments", ns) || !can("list", "monitoring.uptime-operator.io", "monitors", "") {
		select {
		case <-ctx.Done():
			t.Fatal("the generated roles never took effect")
		case <-time.After(100 * time.Millisecond):
		}
	}
	for _, c := range []struct {
		verb, group, resource, namespace string
		want                             bool
	}{
		{"create", "apps", "deployments", ns, true},
		{"watch", "apps", "deployments", ns, true},
		{"create", "", "serviceaccounts", ns, true},
		{"create", "apps", "deployments", team, false},
		{"list", "apps", "deployments", "", false},
		{"create", "", "serviceaccounts", "kube-system", false},
		{"list", "monitoring.uptime-operator.io", "monitors", "", true},
		// The product's own Secrets: a Role of the probe namespace, which
		// stays when rbac.secretNamespaces takes Secrets off the ClusterRole.
		{"create", "", "secrets", ns, true},
	} {
		if got := can(c.verb, c.group, c.resource, c.namespace); got != c.want {
			t.Errorf("%s %s.%s in %q: allowed=%v, want %v", c.verb, c.resource, c.group, c.namespace, got, c.want)
		}
	}

	// The manager as that ServiceAccount.
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	m, err := manager.New(cfg, manager.Options{
		Namespace: ns, ProbeImage: "example.invalid/uptime-operator:test", ProbeServerURL: "http://uptime-operator.example:8080",
		WebhookHost: webhookHost, WebhookPort: webhookPort, WebhookCertDir: env.WebhookCertDir(),
		Store: filepath.Join(t.TempDir(), "uptime.db"), MetricsAddr: "0", HealthAddr: "0", SkipNameValidation: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	var startErr error
	go func() { startErr = m.Start(runCtx); close(done) }()
	defer func() { stop(); <-done }()

	region := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "rbac-test"}}
	for {
		err := k8s.Create(ctx, region.DeepCopy())
		if err == nil {
			break
		}
		select {
		case <-done:
			t.Fatalf("the manager stopped: %v", startErr)
		case <-ctx.Done():
			t.Fatalf("the webhooks never answered: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	var dep appsv1.Deployment
	for {
		var list appsv1.DeploymentList
		// The region's own: other tests' regions share the control plane.
		err := k8s.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"uptime-operator.io/region": region.Name})
		if err == nil && len(list.Items) == 1 {
			dep = list.Items[0]
			break
		}
		select {
		case <-done:
			t.Fatalf("the manager stopped (missing permissions make its caches fail to sync): %v", startErr)
		case <-ctx.Done():
			t.Fatal("no probe Deployment in the probe namespace: the manager could not create it with its RBAC")
		case <-time.After(200 * time.Millisecond):
		}
	}
	if dep.Spec.Template.Spec.ServiceAccountName == "" {
		t.Fatalf("probe Deployment %s has no ServiceAccount", dep.Name)
	}
	var probeSA corev1.ServiceAccount
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: dep.Spec.Template.Spec.ServiceAccountName}, &probeSA); err != nil {
		t.Fatalf("probe ServiceAccount: %v", err)
	}
	stop()
	<-done

	// rbac.secretNamespaces: Secrets off the ClusterRole (as the chart
	// renders it), a Role in the one served namespace.
	var cr rbacv1.ClusterRole
	if err := k8s.Get(ctx, client.ObjectKey{Name: "uptime-operator-manager"}, &cr); err != nil {
		t.Fatal(err)
	}
	var kept []rbacv1.PolicyRule
	for _, r := range cr.Rules {
		r.Resources = slices.DeleteFunc(r.Resources, func(s string) bool { return s == "secrets" })
		if len(r.Resources) > 0 {
			kept = append(kept, r)
		}
	}
	cr.Rules = kept
	secretRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "uptime-operator-manager-secrets"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"},
			Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}}}}
	for _, o := range []client.Object{&cr} {
		if err := k8s.Update(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []client.Object{secretRole, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: secretRole.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: secretRole.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: sa}}}} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for can("list", "", "secrets", "") || !can("list", "", "secrets", team) {
		select {
		case <-ctx.Done():
			t.Fatal("the narrowed Secret grants never took effect")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if can("get", "", "secrets", "kube-system") || !can("get", "", "secrets", ns) {
		t.Fatal("Secrets: want the served namespace and the probe namespace only")
	}

	// The manager watches Secrets in the served namespace only, and a
	// Monitor's header reads a Secret that opts in, end to end to the
	// region's assignments.
	m, err = manager.New(cfg, manager.Options{
		Namespace: ns, SecretNamespaces: []string{team},
		WebhookHost: webhookHost, WebhookPort: webhookPort, WebhookCertDir: env.WebhookCertDir(),
		Store: filepath.Join(t.TempDir(), "uptime.db"), MetricsAddr: "0", HealthAddr: "0", SkipNameValidation: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop = context.WithCancel(ctx)
	done = make(chan struct{})
	go func() { startErr = m.Start(runCtx); close(done) }()
	defer func() { stop(); <-done }()
	optIn := map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "api-token", Labels: optIn}, StringData: map[string]string{"token": "Bearer opted-in"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "db-password"}, StringData: map[string]string{"password": "not-for-monitors"}},
	} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	header := func(name, secret, key string) *monv1.Monitor {
		return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: name},
			Spec: monv1.MonitorSpec{URL: "https://example.com/" + name, Regions: []string{region.Name},
				HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{{Name: "Authorization",
					ValueFrom: &monv1.SecretKeySelector{Name: secret, Key: key}}}}}}
	}
	web := header("web", "api-token", "token")
	for {
		err := k8s.Create(ctx, web)
		if err == nil {
			break
		}
		select {
		case <-done:
			t.Fatalf("the manager stopped (a cluster-wide Secret watch fails on these grants): %v", startErr)
		case <-ctx.Done():
			t.Fatalf("the webhooks never answered: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err := k8s.Create(ctx, header("db", "db-password", "password")); err == nil ||
		!strings.Contains(err.Error(), "does not opt in with the label") {
		t.Fatalf("a header naming an unlabelled Secret: %v, want refused", err)
	}
	for {
		list, err := m.Probes.Assignments(ctx, region.Name, "")
		// Web's: other tests' Monitors without regions share the control
		// plane, and run in every region.
		var ofWeb []probeapi.Assignment
		if err == nil {
			ofWeb = slices.DeleteFunc(list.Assignments, func(a probeapi.Assignment) bool { return a.Namespace != team || a.Name != web.Name })
		}
		if len(ofWeb) == 1 {
			if got := probeapi.HeaderText(ofWeb[0].Config.HTTP.Headers)["Authorization"]; got != "Bearer opted-in" {
				t.Fatalf("assigned Authorization %q, want the opted-in Secret's value", got)
			}
			break
		}
		select {
		case <-done:
			t.Fatalf("the manager stopped: %v", startErr)
		case <-ctx.Done():
			t.Fatalf("no assignment of web in %s: %v", region.Name, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// readManifests decodes every object of a multi-document YAML file.
func readManifests(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(&o.Object); err != nil {
			break
		}
		if len(o.Object) > 0 {
			out = append(out, o)
		}
	}
	return out
}
