package aggregated_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// TestMonitorsChecksRegionsAsResources drives uptimemonitors (with its
// explanation), uptimechecks and uptimeregions through kube-apiserver with
// the real kubectl, as carol, who holds only the rules the chart adds to
// Kubernetes' view role, and erin, who holds those of view and edit (envtest
// runs no aggregation controller, so they are bound to the chart's
// aggregate roles directly). Neither has an access level: the REST paths
// stay closed to them.
func TestMonitorsChecksRegionsAsResources(t *testing.T) {
	env, admin, base, ws := startAggregated(t)
	ctx := context.Background()
	dir := t.TempDir()
	kubeconfig := func(name string, groups ...string) string {
		path, err := env.Kubeconfig(dir, name, groups...)
		must(t, err)
		return path
	}
	adminKC, carolKC, erinKC := kubeconfig("root", "system:masters"), kubeconfig("carol"), kubeconfig("erin")
	// The control plane installs the aggregate roles (localcp).
	bind(t, ctx, env.Client, ws, "crd-view-carol", "carol", "uptime-operator-crd-view")
	bind(t, ctx, env.Client, ws, "crd-view-erin", "erin", "uptime-operator-crd-view")
	bind(t, ctx, env.Client, ws, "crd-edit-erin", "erin", "uptime-operator-crd-edit")
	must(t, env.Client.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "eu-west"}, Spec: monv1.ProbeRegionSpec{DisplayName: "EU West"}}))

	out := kubectl(t, adminKC, "api-resources", "--api-group=api.uptime-operator.io", "-o", "wide")
	for _, want := range []string{"uptimemonitors", "UptimeMonitor", "uptimechecks", "UptimeCheck", "uptimeregions", "UptimeRegion"} {
		if !strings.Contains(out, want) {
			t.Fatalf("api-resources lacks %q:\n%s", want, out)
		}
	}

	// A monitor of a closed port, created by the admin through the REST path.
	code, body := do(t, admin, http.MethodPost, base+"/namespaces/"+ws+"/monitors", map[string]any{"name": "Checkout", "url": "http://127.0.0.1:9/", "interval_seconds": 60})
	if code != http.StatusCreated {
		t.Fatalf("create monitor: %d %s", code, body)
	}
	var mon struct{ ID string }
	must(t, json.Unmarshal([]byte(body), &mon))

	// The view rules read monitors; the REST path stays closed to them.
	out = kubectl(t, carolKC, "get", "uptimemonitors", "-n", ws, "-o", "wide")
	for _, want := range []string{"NAME", "DISPLAY NAME", "STATUS", "REGIONS", "UPTIME 24H", "LAST CHECK", "OPEN INCIDENT", "URL", mon.ID, "Checkout", "http://127.0.0.1:9/"} {
		if !strings.Contains(out, want) {
			t.Fatalf("kubectl get uptimemonitors -o wide lacks %q:\n%s", want, out)
		}
	}
	if code, body := do(t, httpFor(t, env.Config, "carol"), http.MethodGet, base+"/namespaces/"+ws+"/monitors", nil); code != http.StatusForbidden {
		t.Fatalf("REST monitors with the view rules: %d %s", code, body)
	}
	if out := kubectl(t, carolKC, "get", "uptimemonitors", "-n", ws, "--field-selector", "spec.displayName=Nope"); strings.Contains(out, mon.ID) {
		t.Fatalf("field selector:\n%s", out)
	}
	if out, err := kubectlErr(carolKC, "get", "uptimemonitors", "-n", ws, "--field-selector", "spec.colour=red"); err == nil || !strings.Contains(out, "field label not supported") {
		t.Fatalf("unknown field: %v\n%s", err, out)
	}
	var obj map[string]any
	must(t, json.Unmarshal([]byte(kubectl(t, carolKC, "get", "uptimemonitor", mon.ID, "-n", ws, "-o", "json")), &obj))
	if obj["kind"] != "UptimeMonitor" || obj["spec"].(map[string]any)["displayName"] != "Checkout" || obj["metadata"].(map[string]any)["resourceVersion"] == "" {
		t.Fatalf("uptimemonitor: %v", obj)
	}
	if out, err := kubectlErr(carolKC, "get", "uptimemonitor", "no-such-monitor", "-n", ws); err == nil || !strings.Contains(out, "not found") {
		t.Fatalf("missing monitor: %v\n%s", err, out)
	}
	monPath := "/apis/api.uptime-operator.io/v1/namespaces/" + ws + "/uptimemonitors/" + mon.ID
	must(t, json.Unmarshal([]byte(kubectl(t, carolKC, "get", "--raw", monPath+"/explanation")), &obj))
	if obj["kind"] != "MonitorExplanation" || obj["displayName"] != "Checkout" || obj["quorumRule"] == "" {
		t.Fatalf("explanation: %v", obj)
	}
	// Someone with no role at all reads nothing.
	if out, err := kubectlErr(kubeconfig("mallory"), "get", "uptimemonitors", "-n", ws); err == nil || !strings.Contains(out, "forbidden") {
		t.Fatalf("no role: %v\n%s", err, out)
	}

	// Regions: the namespaced view of the cluster's ProbeRegions.
	eventually(t, func() error {
		out := kubectl(t, carolKC, "get", "uptimeregions", "-n", ws, "--field-selector", "status.online=false")
		if !strings.Contains(out, "eu-west") || !strings.Contains(out, "EU West") || !strings.Contains(out, "false") {
			return fmt.Errorf("kubectl get uptimeregions:\n%s", out)
		}
		return nil
	})
	if out := kubectl(t, carolKC, "get", "uptimeregions", "-n", ws, "--field-selector", "status.online=true"); strings.Contains(out, "eu-west") {
		t.Fatalf("online selector lists an offline region:\n%s", out)
	}

	// Checks: the view rules may not create one; edit may, by id or name.
	check := filepath.Join(dir, "check.json")
	must(t, os.WriteFile(check, []byte(`{"apiVersion":"api.uptime-operator.io/v1","kind":"UptimeCheck","metadata":{"generateName":"now-"},"spec":{"monitor":"checkout"}}`), 0o600))
	checks := "/apis/api.uptime-operator.io/v1/namespaces/" + ws + "/uptimechecks"
	if out, err := kubectlErr(carolKC, "create", "--raw", checks, "-f", check); err == nil || !strings.Contains(out, "forbidden") {
		t.Fatalf("view creates a check: %v\n%s", err, out)
	}
	var chk struct {
		Kind     string
		Metadata struct{ Name, Namespace string }
		Status   struct {
			MonitorID, DisplayName, Verdict string
			Results                         []struct{ Region, Status, Error string }
		}
	}
	must(t, json.Unmarshal([]byte(kubectl(t, erinKC, "create", "--raw", checks, "-f", check)), &chk))
	if chk.Kind != "UptimeCheck" || !strings.HasPrefix(chk.Metadata.Name, "now-") || chk.Metadata.Namespace != ws ||
		chk.Status.MonitorID != mon.ID || chk.Status.DisplayName != "Checkout" || len(chk.Status.Results) != 1 || chk.Status.Verdict != "failed" {
		t.Fatalf("check: %+v", chk)
	}
	must(t, os.WriteFile(check, []byte(`{"spec":{}}`), 0o600))
	if out, err := kubectlErr(erinKC, "create", "--raw", checks, "-f", check); err == nil || !strings.Contains(out, "spec.monitor is required") {
		t.Fatalf("check without a monitor: %v\n%s", err, out)
	}
	must(t, os.WriteFile(check, []byte(`{"spec":{"monitor":"no-such-monitor"}}`), 0o600))
	if out, err := kubectlErr(erinKC, "create", "--raw", checks, "-f", check); err == nil || !strings.Contains(out, "not found") {
		t.Fatalf("check of an unknown monitor: %v\n%s", err, out)
	}
	// A watch of monitors starts with the monitor and reports its change:
	// paused by the admin.
	w := startKubectl(t, carolKC, "get", "uptimemonitors", "-n", ws, "-w")
	if !strings.Contains(w.String(), mon.ID) {
		t.Fatalf("kubectl get uptimemonitors -w:\n%s", w)
	}
	if code, body := do(t, admin, http.MethodPost, base+"/namespaces/"+ws+"/monitors/"+mon.ID+"/pause", nil); code != http.StatusOK {
		t.Fatalf("pause: %d %s", code, body)
	}
	w.waitFor(t, mon.ID)
	t.Logf("kubectl get uptimemonitors -w:\n%s", w)
}
