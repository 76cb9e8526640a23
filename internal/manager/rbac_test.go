package manager_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/localcp"
	"github.com/uptime-operator/uptime-operator/internal/manager"
)

// TestManagerRunsOnItsGeneratedRBAC (issue 27 row 8): the manager, run as
// its ServiceAccount with exactly the RBAC of config/rbac (generated from
// the kubebuilder markers, copied into the chart), starts, syncs its caches
// and creates a region's probe Deployment in the probe namespace; and that
// RBAC no longer lets it create Deployments or ServiceAccounts in any other
// namespace. Before, both were granted cluster-wide.
func TestManagerRunsOnItsGeneratedRBAC(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	cp, err := localcp.New(localcp.Options{WebhookHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := cp.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	k8s, err := client.New(admin, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}

	const ns, sa = "uptime-operator-system", "uptime-operator-manager"
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}},
	} {
		if err := k8s.Create(ctx, o); err != nil {
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
		{"create", "apps", "deployments", "team", false},
		{"list", "apps", "deployments", "", false},
		{"create", "", "serviceaccounts", "kube-system", false},
		{"list", "monitoring.uptime-operator.io", "monitors", "", true},
	} {
		if got := can(c.verb, c.group, c.resource, c.namespace); got != c.want {
			t.Errorf("%s %s.%s in %q: allowed=%v, want %v", c.verb, c.resource, c.group, c.namespace, got, c.want)
		}
	}

	// The manager as that ServiceAccount.
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	wo := cp.WebhookInstallOptions
	m, err := manager.New(cfg, manager.Options{
		Namespace: ns, ProbeImage: "example.invalid/uptime-operator:test", ProbeServerURL: "http://uptime-operator.example:8080",
		WebhookHost: wo.LocalServingHost, WebhookPort: wo.LocalServingPort, WebhookCertDir: wo.LocalServingCertDir,
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
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err == nil && len(list.Items) == 1 {
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
