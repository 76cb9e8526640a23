package kubectlplugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/kubectlplugin"
	"github.com/uptime-operator/uptime-operator/internal/localcp"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
	"github.com/uptime-operator/uptime-operator/probes"
)

const (
	system = "uptime-operator-system"
	shop   = "shop"
)

// TestPlugin runs `kubectl uptime` against kube-apiserver with the
// aggregated API behind it and a probe agent of region local, as a user
// with Kubernetes' view role (alice) and one with the edit role (bob), each
// with a kubeconfig of its own and no access level: envtest runs no
// aggregation controller, so they are bound to the chart's aggregate-to-view
// and -edit ClusterRoles, the rules the built-in roles gain in a cluster.
// dave holds the access level read-only (uptime-operator-viewer), which
// `page` needs.
func TestPlugin(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set (make test sets it)")
	}
	env, err := testenv.Start(manager.Options{
		AggregatedListen: "127.0.0.1:0", APIListen: "127.0.0.1:0", Namespace: system,
		Store: filepath.Join(t.TempDir(), "uptime.db"), AllowPrivateTargets: true,
	})
	must(t, err)
	t.Cleanup(env.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := env.Client
	for _, ns := range []string{system, shop} {
		must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	addr, err := env.Manager.AggregatedAddr(ctx)
	must(t, err)
	must(t, localcp.RegisterAPIService(ctx, c, system, addr, env.Manager.AggregatedCA()))
	applyFile(t, ctx, env, "../../config/rbac/access_roles.yaml")
	// The control plane installs the aggregate roles (localcp).
	bind(t, ctx, env, "alice", "alice", "uptime-operator-crd-view")
	bind(t, ctx, env, "bob-view", "bob", "uptime-operator-crd-view")
	bind(t, ctx, env, "bob-edit", "bob", "uptime-operator-crd-edit")
	bind(t, ctx, env, "dave", "dave", "uptime-operator-viewer")
	dir := t.TempDir()
	alice, err := env.Kubeconfig(dir, "alice")
	must(t, err)
	bob, err := env.Kubeconfig(dir, "bob")
	must(t, err)
	dave, err := env.Kubeconfig(dir, "dave")
	must(t, err)
	startAgent(t, ctx, env, dir)

	// A healthy target, a monitor of it, and an incident opened by hand.
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	t.Cleanup(target.Close)
	admin := adminHTTP(t, env.Config)
	base := strings.TrimSuffix(env.Config.Host, "/") + "/apis/api.uptime-operator.io/v1/namespaces/" + shop
	var mon struct{ ID string }
	eventually(t, func() error {
		return post(admin, base+"/monitors", map[string]any{"name": "Storefront", "url": target.URL, "interval_seconds": 60, "regions": []string{"local"}}, &mon)
	})
	var inc struct{ ID string }
	eventually(t, func() error { return post(admin, base+"/incidents", map[string]any{"monitor_id": mon.ID}, &inc) })

	run := func(kubeconfig string, args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := kubectlplugin.Main(ctx, append(args, "--kubeconfig", kubeconfig, "-n", shop), &out, &errOut)
		return out.String() + errOut.String(), err
	}
	mustRun := func(kubeconfig string, args ...string) string {
		t.Helper()
		out, err := run(kubeconfig, args...)
		if err != nil {
			t.Fatalf("kubectl uptime %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	// The agent of region local connects in the background: wait until
	// the region is online before reading the summary.
	var out string
	eventually(t, func() error {
		out = mustRun(alice, "status")
		if !strings.Contains(out, "Regions offline: none") {
			return fmt.Errorf("status:\n%s", out)
		}
		return nil
	})
	t.Logf("kubectl uptime status:\n%s", out)
	for _, want := range []string{"Workspace shop: 1 monitors", "1 open incidents", "Regions offline: none", inc.ID, "Storefront"} {
		if !strings.Contains(out, want) {
			t.Fatalf("status lacks %q:\n%s", want, out)
		}
	}
	out = mustRun(alice, "incidents")
	if !strings.Contains(out, "CONFIRMED BY") || !strings.Contains(out, inc.ID) || !strings.Contains(out, "open") {
		t.Fatalf("incidents:\n%s", out)
	}

	// The viewer may not acknowledge; the editor may. --as impersonates as
	// kubectl's does: a cluster admin acting as alice is refused like her,
	// and bob may not impersonate at all.
	if out, err := run(alice, "ack", inc.ID); err == nil || !strings.Contains(out+err.Error(), "forbidden") {
		t.Fatalf("viewer ack: %v\n%s", err, out)
	}
	root, err := env.Kubeconfig(dir, "root", "system:masters")
	must(t, err)
	if out, err := run(root, "ack", inc.ID, "--as", "alice"); err == nil || !strings.Contains(out+err.Error(), "forbidden") {
		t.Fatalf("ack as alice: %v\n%s", err, out)
	}
	if out := mustRun(root, "incidents", "--as", "alice"); !strings.Contains(out, inc.ID) {
		t.Fatalf("incidents as alice:\n%s", out)
	}
	if out, err := run(bob, "incidents", "--as", "alice"); err == nil || !strings.Contains(out+err.Error(), "impersonate") {
		t.Fatalf("bob impersonating alice: %v\n%s", err, out)
	}
	if out := mustRun(bob, "ack", inc.ID); !strings.Contains(out, "acknowledged by bob") {
		t.Fatalf("ack:\n%s", out)
	}
	if out := mustRun(bob, "note", inc.ID, "looking", "into", "it"); !strings.Contains(out, "it has 1 notes") {
		t.Fatalf("note:\n%s", out)
	}
	if out := mustRun(bob, "resolve", inc.ID, "--note", "false alarm"); !strings.Contains(out, "resolved") {
		t.Fatalf("resolve:\n%s", out)
	}
	if _, err := run(bob, "resolve", inc.ID); err == nil || !strings.Contains(err.Error(), "INCIDENT_RESOLVED") {
		t.Fatalf("second resolve: %v", err)
	}
	if out := mustRun(alice, "incidents"); !strings.Contains(out, "No open incidents in shop") {
		t.Fatalf("incidents after resolve:\n%s", out)
	}
	if out := mustRun(alice, "incidents", "--all"); !strings.Contains(out, inc.ID) || !strings.Contains(out, "resolved") {
		t.Fatalf("incidents --all:\n%s", out)
	}

	// A check now, in region local, by the editor (a run-check is a write).
	eventually(t, func() error {
		out, err := run(bob, "check", "Storefront")
		if err != nil || !strings.Contains(out, "local") || !strings.Contains(out, "up") || !strings.Contains(out, "200") {
			return fmt.Errorf("check: %v\n%s", err, out)
		}
		t.Logf("kubectl uptime check Storefront:\n%s", out)
		return nil
	})
	if out, err := run(alice, "check", "Storefront"); err == nil || !strings.Contains(err.Error(), "the edit role") || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("viewer check: %v\n%s", err, out)
	}
	out = mustRun(alice, "why", mon.ID)
	t.Logf("kubectl uptime why:\n%s", out)
	if !strings.Contains(out, "Storefront") || !strings.Contains(out, "Quorum") {
		t.Fatalf("why:\n%s", out)
	}
	if _, err := run(alice, "why", "no-such-monitor"); err == nil || !strings.Contains(err.Error(), "no monitor") {
		t.Fatalf("why of an unknown monitor: %v", err)
	}

	// A status page's address.
	var page struct{ URL string }
	eventually(t, func() error {
		return post(admin, base+"/status/pages", map[string]any{"title": "Shop status", "slug": "shop-status", "monitor_ids": []string{mon.ID}}, &page)
	})
	if out := mustRun(dave, "page", "shop-status"); strings.TrimSpace(out) != page.URL || page.URL == "" {
		t.Fatalf("page: %q, want %q", out, page.URL)
	}
	// The view role reaches no REST path: page says what it needs.
	if out, err := run(alice, "page", "shop-status"); err == nil || !strings.Contains(err.Error(), "uptime-operator-viewer") {
		t.Fatalf("page with the view role: %v\n%s", err, out)
	}
}

// startAgent runs a probe agent of a local ProbeRegion in this process.
func startAgent(t *testing.T, ctx context.Context, env *testenv.Env, dir string) {
	token := engine.NewHeartbeatToken() + engine.NewHeartbeatToken()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "uptime-probe-local", Namespace: system},
		Data: map[string][]byte{probeserver.RegionTokenKey: []byte(token)}}
	must(t, env.Client.Create(ctx, secret))
	tokenFile := filepath.Join(dir, "probe-token")
	must(t, os.WriteFile(tokenFile, []byte(token), 0o600))
	must(t, env.Client.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Spec: monv1.ProbeRegionSpec{
		DisplayName: "Local", Placement: monv1.ProbePlacement{Mode: monv1.PlacementLocal, Namespace: system,
			TokenSecretRef: &monv1.SecretKeySelector{Name: secret.Name, Key: probeserver.RegionTokenKey}}}}))
	apiAddr, err := env.Manager.APIAddr(ctx)
	must(t, err)
	actx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = probes.RunAgent(actx, probes.AgentOptions{Region: "local", ServerURL: "http://" + apiAddr, TokenFile: tokenFile,
			AllowPrivate: true, BufferDir: filepath.Join(dir, "buffer"), Listen: "", Log: ctrl.Log.WithName("probe")})
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func adminHTTP(t *testing.T, cfg *rest.Config) *http.Client {
	hc, err := rest.HTTPClientFor(cfg)
	must(t, err)
	return hc
}

func post(hc *http.Client, url string, body, out any) error {
	raw, _ := json.Marshal(body)
	resp, err := hc.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, answer)
	}
	return json.Unmarshal(answer, out)
}

func applyFile(t *testing.T, ctx context.Context, env *testenv.Env, path string) {
	raw, err := os.ReadFile(path)
	must(t, err)
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if err == io.EOF {
				return
			}
			t.Fatal(err)
		}
		if obj.GetKind() != "" {
			must(t, env.Client.Create(ctx, obj))
		}
	}
}

func bind(t *testing.T, ctx context.Context, env *testenv.Env, name, user, role string) {
	must(t, env.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: shop},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}))
}

func eventually(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
