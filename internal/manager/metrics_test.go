package manager_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// TestMetricsEndpointSecured: served securely, the metrics endpoint speaks
// TLS only and answers a scrape only with a token that kube-apiserver
// authenticates (401 without one) and authorizes for get on /metrics, the
// rule of the chart's metrics-reader ClusterRole (403 without it). With the
// per-monitor series on, a Monitor's series appear while it exists and are
// gone once it is deleted.
func TestMetricsEndpointSecured(t *testing.T) {
	// The package's manager serves its metrics so (TestMain).
	env, addr := testenv.Use(t, env), metricsAddr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	reader := serviceAccountToken(ctx, t, env, "metrics-scraper", true)
	stranger := serviceAccountToken(ctx, t, env, "stranger", false)
	url := "https://" + addr + "/metrics"
	// The certificate is self-signed (no --metrics-cert-dir): what is under
	// test is that the endpoint speaks TLS and who it answers.
	https := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	scrape := func(token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := https.Do(req)
		if err != nil {
			t.Fatalf("scrape: %v", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	waitFor(ctx, t, "the metrics endpoint", func() bool {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	if resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP scrape answered 200, want TLS only")
		}
	}
	if code, _ := scrape(""); code != http.StatusUnauthorized {
		t.Errorf("scrape without a token: %d, want 401", code)
	}
	// kube-apiserver's TokenReview of a malformed token fails rather than
	// answer "unauthenticated"; the filter then answers 500. Refused either way.
	if code, body := scrape("not-a-token"); code == http.StatusOK || strings.Contains(body, "uptime_operator_") {
		t.Errorf("scrape with a token kube-apiserver does not know: %d, want a refusal", code)
	}
	if code, _ := scrape(stranger); code != http.StatusForbidden {
		t.Errorf("scrape with the token of a ServiceAccount without the metrics-reader rule: %d, want 403", code)
	}
	code, body := scrape(reader)
	if code != http.StatusOK || !strings.Contains(body, "uptime_operator_monitor_series_dropped_total 0") {
		t.Fatalf("scrape by a metrics reader: %d, want 200 with the per-monitor series on; body starts %.300q", code, body)
	}

	region := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "metrics-eu"}}
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "scraped", Namespace: "default"},
		Spec: monv1.MonitorSpec{URL: "https://example.com/", IntervalSeconds: 60, Regions: []string{"metrics-eu"}}}
	for _, o := range []client.Object{region, m} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	series := `uptime_operator_monitor_incident_open{monitor="scraped",namespace="default"} 0`
	waitFor(ctx, t, "the new monitor's series", func() bool { _, body := scrape(reader); return strings.Contains(body, series) })

	// A result as an agent of the region pushes it: its response time and
	// certificate become series of the monitor.
	notAfter := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	res := probeapi.Result{ID: "0c3f9d4e-8a4b-4d5e-9f00-000000000001", MonitorID: string(m.UID), Region: "metrics-eu",
		CheckedAt: time.Now(), Status: probeapi.StatusUp, ResponseTimeMs: 120, TLS: &probeapi.TLSInfo{NotAfter: notAfter}}
	if _, err := env.Manager.Engine.Ingest(ctx, []probeapi.Result{res}); err != nil {
		t.Fatal(err)
	}
	_, body = scrape(reader)
	for _, want := range []string{
		`uptime_operator_monitor_response_seconds_bucket{monitor="scraped",namespace="default",region="metrics-eu",le="0.25"} 1`,
		`uptime_operator_monitor_response_seconds_bucket{monitor="scraped",namespace="default",region="metrics-eu",le="0.1"} 0`,
		`uptime_operator_monitor_response_seconds_count{monitor="scraped",namespace="default",region="metrics-eu"} 1`,
		// The text format writes floats the way strconv does.
		`uptime_operator_monitor_certificate_expiry_timestamp_seconds{monitor="scraped",namespace="default"} ` + strconv.FormatFloat(float64(notAfter.Unix()), 'g', -1, 64),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if err := env.Client.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the deleted monitor's series to go", func() bool {
		_, body := scrape(reader)
		return !strings.Contains(body, `monitor="scraped"`)
	})
}

// serviceAccountToken creates a ServiceAccount and returns a token of it;
// with reader, it is bound to a ClusterRole with the rule of the chart's
// metrics-reader ClusterRole.
func serviceAccountToken(ctx context.Context, t *testing.T, env *testenv.Env, name string, reader bool) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	objs := []client.Object{sa}
	if reader {
		objs = append(objs,
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
				Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: "default"}},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}})
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	kube, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := kube.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of %s: %v", name, err)
	}
	return tr.Status.Token
}

// waitFor polls ok until it holds or ctx ends.
func waitFor(ctx context.Context, t *testing.T, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
