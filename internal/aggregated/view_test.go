package aggregated_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/localcp"
)

// TestViewReadsNoCredential (issue 36, row 4): a user bound only to
// Kubernetes' built-in view ClusterRole, filled from the product's
// aggregate roles the way kube-controller-manager's aggregation
// controller does (localcp.AggregateClusterRoles; envtest runs no
// controller manager), reads Monitors, AlertChannels, status pages, SLOs,
// the aggregated API's resources and events, and none of them holds a
// credential written through the REST API: not a cron monitor's heartbeat
// token, not a header value, not a token-bearing webhook URL. Secrets stay
// out of reach.
func TestViewReadsNoCredential(t *testing.T) {
	env, admin, base, ws := startAggregated(t)
	ctx := context.Background()
	// The control plane installed the aggregate roles and filled view
	// from them; one more pass changes nothing.
	must(t, localcp.AggregateClusterRoles(ctx, env.Client))
	var view rbacv1.ClusterRole
	must(t, env.Client.Get(ctx, client.ObjectKey{Name: "view"}, &view))
	if !viewGrants(view.Rules, monv1.GroupVersion.Group, "monitors") {
		t.Fatalf("view was not filled from the aggregate roles: %v", view.Rules)
	}
	bind(t, ctx, env.Client, ws, "view-vera", "vera", "view")

	// Credentials written the ways a workspace writes them.
	const header = "Bearer view-must-not-read-this-0123456789"
	const hookToken = "hooktoken0123456789abcdefVIEW"
	code, body := do(t, admin, http.MethodPost, base+"/namespaces/"+ws+"/monitors", map[string]any{
		"name": "Nightly backup", "type": "cron", "config": map[string]any{"cron_expression": "0 3 * * *"}})
	if code != http.StatusCreated {
		t.Fatalf("create cron monitor: %d %s", code, body)
	}
	var cron struct {
		HeartbeatURL string `json:"heartbeat_url"`
	}
	must(t, json.Unmarshal([]byte(body), &cron))
	token := cron.HeartbeatURL[strings.LastIndex(cron.HeartbeatURL, "/")+1:]
	if len(token) < 32 {
		t.Fatalf("heartbeat_url %q", cron.HeartbeatURL)
	}
	code, body = do(t, admin, http.MethodPost, base+"/namespaces/"+ws+"/monitors", map[string]any{
		"name": "Billing API", "url": "http://127.0.0.1:9/", "interval_seconds": 60,
		"config": map[string]any{"headers": map[string]string{"Authorization": header}}})
	if code != http.StatusCreated {
		t.Fatalf("create monitor with a credential header: %d %s", code, body)
	}
	code, body = do(t, admin, http.MethodPost, base+"/namespaces/"+ws+"/integrations/webhook/connections", map[string]any{
		"name": "Hook", "webhook_url": "http://127.0.0.1:9/in?token=" + hookToken})
	if code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("create webhook connection: %d %s", code, body)
	}
	secrets := []string{token, strings.TrimPrefix(header, "Bearer "), hookToken}

	vera := httpFor(t, env.Config, "vera")
	host := strings.TrimSuffix(env.Config.Host, "/")
	crds := host + "/apis/" + monv1.GroupVersion.String() + "/namespaces/" + ws + "/"
	readable := []string{
		crds + "monitors", crds + "alertchannels", crds + "statuspages", crds + "slos", crds + "monitorgroups",
		crds + "escalationpolicies", crds + "maintenancewindows", crds + "oncallschedules",
		base + "/namespaces/" + ws + "/uptimemonitors", base + "/namespaces/" + ws + "/uptimeincidents",
		base + "/namespaces/" + ws + "/uptimeregions",
		host + "/api/v1/namespaces/" + ws + "/events", host + "/apis/events.k8s.io/v1/namespaces/" + ws + "/events",
		host + "/api/v1/namespaces/" + ws + "/configmaps",
	}
	// Wait until the controller has moved what it moves (and the REST
	// writes are in), then read everything view reads.
	eventually(t, func() error {
		code, body := do(t, vera, http.MethodGet, crds+"monitors", nil)
		if code != http.StatusOK || !strings.Contains(body, monv1.HeartbeatTokenHashAnnotation) || !strings.Contains(body, "billing-api") {
			return fmt.Errorf("view lists monitors: %d %.300s", code, body)
		}
		code, body = do(t, vera, http.MethodGet, crds+"alertchannels", nil)
		if code != http.StatusOK || !strings.Contains(body, "webhookURLFrom") {
			return fmt.Errorf("view lists alert channels: %d %.300s", code, body)
		}
		return nil
	})
	for _, url := range readable {
		code, body := do(t, vera, http.MethodGet, url, nil)
		if code != http.StatusOK {
			t.Errorf("view cannot read %s: %d %.200s", url, code, body)
			continue
		}
		for _, s := range secrets {
			if strings.Contains(body, s) {
				t.Errorf("view reads a credential at %s:\n%.2000s", url, body)
			}
		}
	}
	for _, url := range []string{host + "/api/v1/namespaces/" + ws + "/secrets", host + "/api/v1/namespaces/" + ws + "/secrets/nightly-backup-credentials"} {
		if code, _ := do(t, vera, http.MethodGet, url, nil); code != http.StatusForbidden {
			t.Errorf("view reads Secrets at %s: %d", url, code)
		}
	}
	// The REST API, which view does not reach, still shows the URL to a
	// key holder: the token is in the monitor's credentials Secret.
	code, body = do(t, admin, http.MethodGet, base+"/namespaces/"+ws+"/monitors", nil)
	if code != http.StatusOK || !strings.Contains(body, token) {
		t.Fatalf("REST list lacks the heartbeat URL: %d %.500s", code, body)
	}
}

// viewGrants reports whether rules allow reading resource of group.
func viewGrants(rules []rbacv1.PolicyRule, group, resource string) bool {
	for _, r := range rules {
		if has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, "list") {
			return true
		}
	}
	return false
}

func has(list []string, s string) bool {
	for _, v := range list {
		if v == s || v == "*" {
			return true
		}
	}
	return false
}
