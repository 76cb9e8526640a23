package aggregated_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/internal/localcp"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

const ns = "uptime-operator-system"

// TestThroughKubeAPIServer drives the REST API through kube-apiserver's
// aggregation layer, as kubectl users do: the APIService becomes Available,
// kube-apiserver authenticates and authorizes the user, and the manager
// maps RBAC onto the access levels with SubjectAccessReviews.
func TestThroughKubeAPIServer(t *testing.T) {
	env, admin, base := startAggregated(t)
	monitors := base + "/namespaces/default/monitors"

	code, body := do(t, admin, http.MethodGet, monitors, nil)
	if code != http.StatusOK || strings.TrimSpace(body) != "[]" {
		t.Fatalf("admin list: %d %s", code, body)
	}

	bob := httpFor(t, env.Config, "bob")
	code, body = do(t, bob, http.MethodPost, monitors, map[string]any{"name": "Via kubectl", "url": "http://127.0.0.1:9/", "interval_seconds": 60})
	if code != http.StatusCreated {
		t.Fatalf("editor create: %d %s", code, body)
	}
	var created struct{ ID, Name string }
	must(t, json.Unmarshal([]byte(body), &created))

	alice := httpFor(t, env.Config, "alice")
	eventually(t, func() error {
		code, body := do(t, alice, http.MethodGet, monitors+"/"+created.ID, nil)
		if code != http.StatusOK || !strings.Contains(body, "Via kubectl") {
			return fmt.Errorf("viewer get: %d %s", code, body)
		}
		return nil
	})
	code, body = do(t, alice, http.MethodGet, base+"/namespaces/default/automation/whoami", nil)
	if code != http.StatusOK || !strings.Contains(body, `"read_only":true`) {
		t.Fatalf("viewer whoami: %d %s", code, body)
	}
	// kube-apiserver refuses the viewer's write before it reaches the manager.
	code, _ = do(t, alice, http.MethodPost, monitors, map[string]any{"name": "nope", "url": "http://127.0.0.1:9/"})
	if code != http.StatusForbidden {
		t.Fatalf("viewer create: %d, want 403", code)
	}
	// A user without any binding is refused too.
	code, _ = do(t, httpFor(t, env.Config, "mallory"), http.MethodGet, monitors, nil)
	if code != http.StatusForbidden {
		t.Fatalf("unbound user: %d, want 403", code)
	}

	// Straight to the manager's port, without kube-apiserver's front-proxy
	// certificate, identity headers claim nothing.
	addr, err := env.Manager.AggregatedAddr(context.Background())
	must(t, err)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(env.Manager.AggregatedCA())
	direct := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost"}}}
	req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/apis/api.uptime-operator.io/v1/namespaces/default/monitors", nil)
	must(t, err)
	req.Header.Set("X-Remote-User", "bob")
	req.Header.Set("X-Remote-Group", "system:masters")
	resp, err := direct.Do(req)
	must(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(raw), "no front-proxy client certificate") {
		t.Fatalf("direct request claiming bob: %d %s, want 401", resp.StatusCode, raw)
	}
}

func httpFor(t *testing.T, cfg *rest.Config, user string) *http.Client {
	c := rest.CopyConfig(cfg)
	if user != "" {
		c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	}
	hc, err := rest.HTTPClientFor(c)
	must(t, err)
	return hc
}

func do(t *testing.T, hc *http.Client, method, url string, body any) (int, string) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	must(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	must(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func applyFile(t *testing.T, ctx context.Context, c client.Client, path string) {
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
			must(t, c.Create(ctx, obj))
		}
	}
}

func bind(t *testing.T, ctx context.Context, c client.Client, name, user, role string) {
	must(t, c.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}))
}

func eventually(t *testing.T, f func() error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// startAggregated starts a control plane with the manager, registers the
// APIService, binds alice as a viewer and bob as an editor, and waits until
// kube-apiserver serves the group. It returns the environment, the admin's
// HTTP client and the group's base URL.
func startAggregated(t *testing.T) (*testenv.Env, *http.Client, string) {
	t.Helper()
	return startAggregatedWith(t, filepath.Join(t.TempDir(), "uptime.db"))
}

// startAggregatedWith is startAggregated with the manager's SQLite store at
// storePath, for tests that record history in it.
func startAggregatedWith(t *testing.T, storePath string) (*testenv.Env, *http.Client, string) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" && os.Getenv("CI") != "true" {
		t.Skip("KUBEBUILDER_ASSETS is not set (make test sets it)")
	}
	env, err := testenv.Start(manager.Options{
		AggregatedListen: "127.0.0.1:0", APIListen: "127.0.0.1:0", Namespace: ns,
		Store: storePath, AllowPrivateTargets: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := env.Client
	must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	addr, err := env.Manager.AggregatedAddr(ctx)
	must(t, err)
	must(t, localcp.RegisterAPIService(ctx, c, ns, addr, env.Manager.AggregatedCA()))
	applyFile(t, ctx, c, "../../config/rbac/access_roles.yaml")
	bind(t, ctx, c, "viewer-alice", "alice", "uptime-operator-viewer")
	bind(t, ctx, c, "editor-bob", "bob", "uptime-operator-editor")

	admin := httpFor(t, env.Config, "")
	base := strings.TrimSuffix(env.Config.Host, "/") + "/apis/api.uptime-operator.io/v1"
	eventually(t, func() error {
		code, body := do(t, admin, http.MethodGet, base, nil)
		if code != http.StatusOK || !strings.Contains(body, "APIResourceList") {
			return fmt.Errorf("discovery: %d %s", code, body)
		}
		return nil
	})
	return env, admin, base
}
