package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/uptime-operator/uptime-operator/internal/localcp"
	"github.com/uptime-operator/uptime-operator/probes"
)

// TestProbeMetricsSecure: with --metrics-listen an agent serves /metrics as
// the manager's --metrics-secure serves its own: over TLS only, and only to
// a bearer token that kube-apiserver authenticates (401 without one) and
// authorizes for get on /metrics (403 for a ServiceAccount without that
// rule, 200 with it). /healthz stays on --listen, and /metrics is no longer
// served there without authentication.
func TestProbeMetricsSecure(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" && os.Getenv("CI") != "true" {
		t.Skip("KUBEBUILDER_ASSETS is not set (make test sets it)")
	}
	cp, err := localcp.New(localcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := cp.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	token := func(name string, reader bool) string {
		t.Helper()
		if _, err := kube.CoreV1().ServiceAccounts("default").Create(ctx,
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if reader {
			// The chart's metrics-reader ClusterRole.
			if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
				Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: "default"}},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		tr, err := kube.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	reader, stranger := token("probe-scraper", true), token("stranger", false)

	health, metrics := freeAddr(t), freeAddr(t)
	// No manager: the agent's polls fail, which does not matter here.
	o := probes.AgentOptions{Region: "eu", ServerURL: "http://" + freeAddr(t), Listen: health, MetricsListen: metrics, Log: logr.Discard()}
	if err := secureMetrics(&o, cfg); err != nil {
		t.Fatal(err)
	}
	agentCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- probes.RunAgent(agentCtx, o) }()
	defer func() { stop(); <-done }()

	https := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	scrape := func(c *http.Client, url, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if code, _ := scrape(https, "https://"+metrics+"/metrics", ""); code != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the metrics listener does not answer")
		}
		time.Sleep(100 * time.Millisecond)
	}

	plain := &http.Client{Timeout: 10 * time.Second}
	if code, body := scrape(plain, "http://"+metrics+"/metrics", reader); code == http.StatusOK || strings.Contains(body, "uptime_probe_") {
		t.Errorf("plain HTTP scrape: %d, want TLS only", code)
	}
	if code, _ := scrape(https, "https://"+metrics+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("scrape without a token: %d, want 401", code)
	}
	if code, body := scrape(https, "https://"+metrics+"/metrics", "not-a-token"); code == http.StatusOK || strings.Contains(body, "uptime_probe_") {
		t.Errorf("scrape with a token kube-apiserver does not know: %d, want a refusal", code)
	}
	if code, _ := scrape(https, "https://"+metrics+"/metrics", stranger); code != http.StatusForbidden {
		t.Errorf("scrape by a ServiceAccount without the metrics-reader rule: %d, want 403", code)
	}
	if code, body := scrape(https, "https://"+metrics+"/metrics", reader); code != http.StatusOK || !strings.Contains(body, "uptime_probe_in_flight 0") {
		t.Errorf("scrape by a metrics reader: %d, want 200 with the agent's series; body starts %.300q", code, body)
	}
	if code, _ := scrape(plain, "http://"+health+"/healthz", ""); code != http.StatusOK {
		t.Errorf("/healthz on --listen: %d, want 200", code)
	}
	if code, body := scrape(plain, "http://"+health+"/metrics", ""); code == http.StatusOK || strings.Contains(body, "uptime_probe_") {
		t.Errorf("/metrics on --listen without authentication: %d, want not served", code)
	}
}

// freeAddr is a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprintf("127.0.0.1:%d", ln.Addr().(*net.TCPAddr).Port)
}
