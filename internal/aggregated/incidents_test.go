package aggregated_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestIncidentsAsResources drives the incidents resource through
// kube-apiserver with the real kubectl, each user with a client certificate
// of its own: discovery, the Table kubectl prints, typed objects, field
// selectors, a watch that reports an acknowledgement and a resolution, the
// action subresources for an editor and their refusal for a viewer.
func TestIncidentsAsResources(t *testing.T) {
	env, admin, base, ws := startAggregated(t)
	ctx := context.Background()
	dir := t.TempDir()
	kubeconfig := func(name string, groups ...string) string {
		path, err := env.Kubeconfig(dir, name, groups...)
		must(t, err)
		return path
	}
	adminKC, aliceKC, bobKC, carolKC := kubeconfig("root", "system:masters"), kubeconfig("alice"), kubeconfig("bob"), kubeconfig("carol")
	// carol holds only the chart's aggregate-to-view rules, as the built-in
	// view role does in a cluster (envtest runs no aggregation controller):
	// no access level, yet she reads incidents.
	// The control plane installs the aggregate roles (localcp).
	bind(t, ctx, env.Client, ws, "crd-view-carol", "carol", "uptime-operator-crd-view")

	// Discovery lists incidents and its actions, nothing of the REST API
	// (uptimemonitors is a resource of its own, resources_test.go).
	out := kubectl(t, adminKC, "api-resources", "--api-group=api.uptime-operator.io", "-o", "wide")
	if !strings.Contains(out, "uptimeincidents") || !strings.Contains(out, "Incident") || strings.Contains(out, "\nmonitors ") {
		t.Fatalf("api-resources:\n%s", out)
	}

	// An open incident of a monitor, opened by the editor through the REST path.
	bob := httpFor(t, env.Config, "bob")
	code, body := do(t, bob, http.MethodPost, base+"/namespaces/"+ws+"/monitors", map[string]any{"name": "Checkout", "url": "http://127.0.0.1:9/", "interval_seconds": 60})
	if code != http.StatusCreated {
		t.Fatalf("create monitor: %d %s", code, body)
	}
	var mon struct{ ID string }
	must(t, json.Unmarshal([]byte(body), &mon))
	var incID string
	eventually(t, func() error {
		code, body := do(t, bob, http.MethodPost, base+"/namespaces/"+ws+"/incidents", map[string]any{"monitor_id": mon.ID})
		if code != http.StatusCreated && code != http.StatusOK {
			return fmt.Errorf("open incident: %d %s", code, body)
		}
		var inc struct{ ID string }
		must(t, json.Unmarshal([]byte(body), &inc))
		incID = inc.ID
		return nil
	})

	// kubectl prints the Table.
	out = kubectl(t, aliceKC, "get", "incidents", "-n", ws)
	for _, want := range []string{"NAME", "MONITOR", "STATE", "STARTED", "DURATION", "CONFIRMED BY", "ACKNOWLEDGED", incID, "Checkout", "open"} {
		if !strings.Contains(out, want) {
			t.Fatalf("kubectl get incidents lacks %q:\n%s", want, out)
		}
	}
	if out := kubectl(t, carolKC, "get", "incidents", "-n", ws); !strings.Contains(out, incID) {
		t.Fatalf("aggregate-to-view user:\n%s", out)
	}
	if out := kubectl(t, adminKC, "get", "incidents", "-A"); !strings.Contains(out, "NAMESPACE") || !strings.Contains(out, ws) || !strings.Contains(out, incID) {
		t.Fatalf("kubectl get incidents -A:\n%s", out)
	}
	// The Table itself, as kube-apiserver passes it on.
	table := getJSON(t, admin, base+"/namespaces/"+ws+"/uptimeincidents", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	if table["kind"] != "Table" || len(table["columnDefinitions"].([]any)) < 7 || len(table["rows"].([]any)) != 1 {
		t.Fatalf("table: %v", table)
	}

	// Typed objects.
	var inc map[string]any
	must(t, json.Unmarshal([]byte(kubectl(t, aliceKC, "get", "incident", incID, "-n", ws, "-o", "json")), &inc))
	meta := inc["metadata"].(map[string]any)
	if inc["apiVersion"] != "api.uptime-operator.io/v1" || inc["kind"] != "Incident" || meta["namespace"] != ws || meta["uid"] != incID ||
		meta["resourceVersion"] == "" || meta["creationTimestamp"] == nil || inc["status"].(map[string]any)["state"] != "open" {
		t.Fatalf("incident: %v", inc)
	}
	list := getJSON(t, admin, base+"/namespaces/"+ws+"/uptimeincidents", "application/json")
	if list["kind"] != "IncidentList" || list["apiVersion"] != "api.uptime-operator.io/v1" || len(list["items"].([]any)) != 1 {
		t.Fatalf("list: %v", list)
	}
	// {base_url}/incidents through the aggregated API is still the REST API
	// of the specification: its list and detail answers, not Kubernetes objects.
	restList := getJSON(t, admin, base+"/namespaces/"+ws+"/incidents", "application/json")
	if _, ok := restList["counts"].(map[string]any); !ok || restList["kind"] != nil {
		t.Fatalf("REST list through the aggregated API: %v", restList)
	}
	if detail := getJSON(t, admin, base+"/namespaces/"+ws+"/incidents/"+incID, "application/json"); detail["id"] != incID || detail["kind"] != nil {
		t.Fatalf("REST detail through the aggregated API: %v", detail)
	}

	// Field selectors.
	if out := kubectl(t, aliceKC, "get", "incidents", "-n", ws, "--field-selector", "status.state=resolved"); strings.Contains(out, incID) {
		t.Fatalf("resolved selector lists the open incident:\n%s", out)
	}
	if out := kubectl(t, aliceKC, "get", "incidents", "-n", ws, "--field-selector", "status.state=open,spec.monitor.name=Checkout"); !strings.Contains(out, incID) {
		t.Fatalf("open selector:\n%s", out)
	}
	if out, err := kubectlErr(aliceKC, "get", "incidents", "-n", ws, "--field-selector", "spec.colour=red"); err == nil || !strings.Contains(out, "field label not supported") {
		t.Fatalf("unknown field: %v\n%s", err, out)
	}

	// A watch, as kubectl -w runs it.
	w := startKubectl(t, aliceKC, "get", "incidents", "-n", ws, "-w")

	// A viewer cannot acknowledge; kube-apiserver refuses her.
	path := "/apis/api.uptime-operator.io/v1/namespaces/" + ws + "/uptimeincidents/" + incID
	empty := filepath.Join(dir, "empty.json")
	must(t, os.WriteFile(empty, []byte("{}"), 0o600))
	if out, err := kubectlErr(aliceKC, "create", "--raw", path+"/acknowledge", "-f", empty); err == nil || !strings.Contains(out, "forbidden") {
		t.Fatalf("viewer acknowledge: %v\n%s", err, out)
	}
	// Nor can carol with the view rules only.
	if out, err := kubectlErr(carolKC, "create", "--raw", path+"/acknowledge", "-f", empty); err == nil || !strings.Contains(out, "forbidden") {
		t.Fatalf("view-role acknowledge: %v\n%s", err, out)
	}
	// The editor can, and gets the acknowledged Incident back.
	var acked map[string]any
	must(t, json.Unmarshal([]byte(kubectl(t, bobKC, "create", "--raw", path+"/acknowledge", "-f", empty)), &acked))
	if st := acked["status"].(map[string]any); st["acknowledgedBy"] != "bob" || acked["kind"] != "Incident" {
		t.Fatalf("acknowledged: %v", acked)
	}
	w.waitFor(t, "bob")

	note := filepath.Join(dir, "note.json")
	must(t, os.WriteFile(note, []byte(`{"body":"rolling back the deploy"}`), 0o600))
	kubectl(t, bobKC, "create", "--raw", path+"/notes", "-f", note)
	if out := kubectl(t, aliceKC, "get", "incident", incID, "-n", ws, "-o", "jsonpath={.status.notes[0].body}"); out != "rolling back the deploy" {
		t.Fatalf("note: %q", out)
	}

	resolve := filepath.Join(dir, "resolve.json")
	must(t, os.WriteFile(resolve, []byte(`{"note":"fixed"}`), 0o600))
	kubectl(t, bobKC, "create", "--raw", path+"/resolve", "-f", resolve)
	w.waitFor(t, "resolved")
	t.Logf("kubectl get incidents -w:\n%s", w)
	if out, err := kubectlErr(bobKC, "create", "--raw", path+"/resolve", "-f", resolve); err == nil || !strings.Contains(out, "INCIDENT_RESOLVED") {
		t.Fatalf("second resolve: %v\n%s", err, out)
	}
	if out := kubectl(t, aliceKC, "get", "incidents", "-n", ws, "--field-selector", "status.state=resolved"); !strings.Contains(out, incID) {
		t.Fatalf("resolved selector:\n%s", out)
	}
	if out, err := kubectlErr(aliceKC, "get", "incident", "no-such-incident", "-n", ws); err == nil || !strings.Contains(out, "not found") {
		t.Fatalf("missing incident: %v\n%s", err, out)
	}
}

func kubectlPath(t *testing.T) string {
	p := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no kubectl in KUBEBUILDER_ASSETS: %v", err)
	}
	return p
}

func kubectlErr(kubeconfig string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func kubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	kubectlPath(t)
	out, err := kubectlErr(kubeconfig, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// stream is the output of a running kubectl.
type stream struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *stream) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor waits until a line printed after the first one contains want.
func (s *stream) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		lines := strings.Split(s.String(), "\n")
		for _, l := range lines[min(2, len(lines)):] {
			if strings.Contains(l, want) {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the watch printed no line with %q:\n%s", want, s.String())
}

func startKubectl(t *testing.T, kubeconfig string, args ...string) *stream {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, kubectlPath(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out := &stream{}
	cmd.Stdout, cmd.Stderr = out, out
	must(t, cmd.Start())
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	// The first line (the header and the current rows) comes from the list.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "\n") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	return out
}

func getJSON(t *testing.T, hc *http.Client, url, accept string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	must(t, err)
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	must(t, err)
	defer resp.Body.Close()
	var out map[string]any
	must(t, json.NewDecoder(resp.Body).Decode(&out))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, out)
	}
	return out
}
