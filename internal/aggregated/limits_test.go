package aggregated_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLimitsFollowTheKubernetesUser (issue 27 row 5): through kube-apiserver
// every request reaches the manager from one address, so the per-address
// limits count the Kubernetes user: bob's 120 monitor writes use up bob's
// budget, and carol's first write in another workspace is still served.
// Before, carol got 429.
func TestLimitsFollowTheKubernetesUser(t *testing.T) {
	env, _, base, ws := startAggregated(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	must(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}}))
	must(t, env.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "editor-carol", Namespace: "team-b"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "uptime-operator-editor"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "carol"}},
	}))
	bob, carol := httpFor(t, env.Config, "bob"), httpFor(t, env.Config, "carol")
	// An empty body fails validation (400) after the write limit counted it.
	write := func(hc *http.Client, ns string) (int, string) {
		return do(t, hc, http.MethodPost, base+"/namespaces/"+ns+"/monitors", map[string]any{})
	}
	eventually(t, func() error { // carol's binding takes effect
		if code, body := write(carol, "team-b"); code != http.StatusBadRequest {
			return fmt.Errorf("carol's write: %d %s", code, body)
		}
		return nil
	})
	for i := range 120 {
		if code, body := write(bob, ws); code != http.StatusBadRequest {
			t.Fatalf("bob's write %d: %d %s, want 400", i+1, code, body)
		}
	}
	if code, _ := write(bob, ws); code != http.StatusTooManyRequests {
		t.Fatalf("bob's 121st write: %d, want 429", code)
	}
	if code, body := write(carol, "team-b"); code != http.StatusBadRequest {
		t.Fatalf("carol's write in another workspace after bob's 120: %d %s, want 400 (not 429)", code, body)
	}
}
