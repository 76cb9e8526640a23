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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
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
	env, admin, base, ws := startAggregated(t)
	monitors := base + "/namespaces/" + ws + "/monitors"

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
	code, body = do(t, alice, http.MethodGet, base+"/namespaces/"+ws+"/automation/whoami", nil)
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
	req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/apis/api.uptime-operator.io/v1/namespaces/"+ws+"/monitors", nil)
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

// applyFile creates the objects of a manifest file, keeping those already
// there (the control plane is the package's).
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
			if err := c.Create(ctx, obj); !apierrors.IsAlreadyExists(err) {
				must(t, err)
			}
		}
	}
}

// bind gives user role in namespace ns (kept if bound already).
func bind(t *testing.T, ctx context.Context, c client.Client, ns, name, user, role string) {
	err := c.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	})
	if !apierrors.IsAlreadyExists(err) {
		must(t, err)
	}
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

// shared is the package's control plane (TestMain); each test runs its own
// manager on it (startAggregated).
var shared *testenv.Env

// aggregatedOptions are the manager's options of these tests.
func aggregatedOptions(storePath string) manager.Options {
	return manager.Options{AggregatedListen: "127.0.0.1:0", APIListen: "127.0.0.1:0", Namespace: ns,
		Store: storePath, AllowPrivateTargets: true}
}

func TestMain(m *testing.M) {
	testenv.Main(m, aggregatedOptions(""), func(e *testenv.Env) error {
		shared = e
		return e.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
}

// startAggregated runs a manager of the test's own on the package's control
// plane (a fresh store, fresh per-user limits), registers the APIService
// for its aggregated listener and the access roles, binds alice as viewer
// and bob as editor in a workspace of the test's own, and returns the
// environment, an admin HTTP client, the aggregated API's base URL and the
// workspace.
func startAggregated(t *testing.T) (*testenv.Env, *http.Client, string, string) {
	t.Helper()
	return startAggregatedWith(t, filepath.Join(t.TempDir(), "uptime.db"))
}

// startAggregatedWith is startAggregated with the manager's SQLite store at
// storePath, for tests that record history in it.
func startAggregatedWith(t *testing.T, storePath string) (*testenv.Env, *http.Client, string, string) {
	t.Helper()
	env := testenv.Use(t, shared)
	env.RunManager(t, aggregatedOptions(storePath))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := env.Client
	addr, err := env.Manager.AggregatedAddr(ctx)
	must(t, err)
	// kube-apiserver writes the APIService's status as the previous test's
	// manager goes: retry the update on a conflict.
	must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		return localcp.RegisterAPIService(ctx, c, ns, addr, env.Manager.AggregatedCA())
	}))
	applyFile(t, ctx, c, "../../config/rbac/access_roles.yaml")
	ws := env.Namespace(t, nil)
	bind(t, ctx, c, ws, "viewer-alice", "alice", "uptime-operator-viewer")
	bind(t, ctx, c, ws, "editor-bob", "bob", "uptime-operator-editor")

	admin := httpFor(t, env.Config, "")
	base := strings.TrimSuffix(env.Config.Host, "/") + "/apis/api.uptime-operator.io/v1"
	// The workspace answers: kube-apiserver reaches this test's manager
	// (the previous test's is stopped) with its CA.
	eventually(t, func() error {
		code, body := do(t, admin, http.MethodGet, base+"/namespaces/"+ws+"/monitors", nil)
		if code != http.StatusOK {
			return fmt.Errorf("list monitors: %d %s", code, body)
		}
		return nil
	})
	return env, admin, base, ws
}
