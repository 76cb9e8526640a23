package localcp_test

import (
	"context"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/internal/localcp"
)

// TestBuiltInRolesAreFilled (issue 36, row 8): the local control plane of
// `make run` installs the product's aggregate roles and fills Kubernetes'
// view and edit from them, as kube-controller-manager's aggregation
// controller does in a cluster, so docs/kubectl.md's "view is enough" can
// be tried there: a user bound to view in a namespace reads Monitors and
// the aggregated API's uptimemonitors and incidents, and not Secrets; edit
// writes Monitors. Before, view and edit were empty there.
func TestBuiltInRolesAreFilled(t *testing.T) {
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
	t.Cleanup(func() { _ = cp.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(admin, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct{ user, role string }{{"vera", "view"}, {"ed", "edit"}} {
		if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: b.user + "-" + b.role},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: b.user}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	can := func(user, verb, group, resource string) bool {
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:authenticated"},
			ResourceAttributes: &authzv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Namespace: "team"}}}
		if err := c.Create(ctx, sar); err != nil {
			t.Fatal(err)
		}
		return sar.Status.Allowed
	}
	for _, c := range []struct {
		user, verb, group, resource string
		want                        bool
	}{
		{"vera", "list", "monitoring.uptime-operator.io", "monitors", true},
		{"vera", "get", "monitoring.uptime-operator.io", "alertchannels", true},
		{"vera", "list", "api.uptime-operator.io", "uptimemonitors", true},
		{"vera", "list", "api.uptime-operator.io", "uptimeincidents", true},
		{"vera", "create", "monitoring.uptime-operator.io", "monitors", false},
		{"vera", "get", "", "secrets", false},
		{"ed", "create", "monitoring.uptime-operator.io", "monitors", true},
		{"ed", "create", "monitoring.uptime-operator.io", "proberegions", false},
	} {
		if got := can(c.user, c.verb, c.group, c.resource); got != c.want {
			t.Errorf("%s may %s %s.%s: %v, want %v", c.user, c.verb, c.resource, c.group, got, c.want)
		}
	}

	// A role changed later is aggregated again by the next pass.
	if err := c.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "extra-view", Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"get"}}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := localcp.AggregateClusterRoles(ctx, c); err != nil {
		t.Fatal(err)
	}
	if !can("vera", "get", "example.com", "widgets") || !can("vera", "list", "monitoring.uptime-operator.io", "monitors") {
		t.Error("a second pass did not add the new role's rules, or lost the earlier ones")
	}
}
