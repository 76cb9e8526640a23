package probeserver_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/certs"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// TestRegionsThroughTheManager runs the real manager on envtest, with the
// probe API's TLS listener, managed regions a and b (the ProbeRegion
// controller makes each its ServiceAccount) and remote region partner. It
// shows that a ServiceAccount token of region a speaks for a only, that
// tokens of the old shared ServiceAccount or without the probe audience
// speak for none, that partner's forged results open no incident on
// another workspace's monitor, and that agents reach the TLS listener only
// when they trust its CA.
func TestRegionsThroughTheManager(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" && os.Getenv("CI") != "true" {
		t.Skip("KUBEBUILDER_ASSETS is not set (make test sets it)")
	}
	const ns = "uptime-operator-system"
	certDir := t.TempDir()
	ca, err := certs.NewCA("probe-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	crt, key, err := ca.Issue("localhost", []string{"localhost"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := certs.WriteFiles(certDir, map[string][]byte{"tls.crt": crt, "tls.key": key, "ca.crt": ca.CertPEM}); err != nil {
		t.Fatal(err)
	}
	env, err := testenv.Start(manager.Options{
		Namespace: ns, ProbeImage: "registry.example/uptime-operator:v1", ProbeServerURL: "https://localhost",
		ProbeListen: "127.0.0.1:0", ProbeCertDir: certDir,
		Store: filepath.Join(t.TempDir(), "uptime.db"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	ctx := context.Background()
	c := env.Client
	must := func(err error) {
		t.Helper()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other-team"}}))
	for _, code := range []string{"a", "b"} {
		must(c.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: code},
			Spec: monv1.ProbeRegionSpec{Placement: monv1.ProbePlacement{Mode: monv1.PlacementManaged}}}))
	}
	must(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "partner-token", Namespace: ns},
		Data: map[string][]byte{probeserver.RegionTokenKey: []byte("partner-secret-token-0123456789abcdef")}}))
	must(c.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "partner"},
		Spec: monv1.ProbeRegionSpec{Placement: monv1.ProbePlacement{Mode: monv1.PlacementRemote,
			TokenSecretRef: &monv1.SecretKeySelector{Name: "partner-token", Key: probeserver.RegionTokenKey}}}}))
	mon := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "billing", Namespace: "other-team"},
		Spec: monv1.MonitorSpec{Type: monv1.MonitorHTTP, URL: "https://billing.example.com/", Regions: []string{"a", "b"},
			Confirmation: &monv1.ConfirmationSpec{Regions: 1}}}
	must(c.Create(ctx, mon))

	kube, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	token := func(sa string, audiences ...string) string {
		t.Helper()
		var tr *authv1.TokenRequest
		deadline := time.Now().Add(30 * time.Second)
		for {
			tr, err = kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa,
				&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond) // the controller makes the ServiceAccount
		}
		if err != nil {
			t.Fatalf("token of %s: %v", sa, err)
		}
		return tr.Status.Token
	}
	tokenA := token(monitor.RegionServiceAccount("a"), monitor.ProbeTokenAudience)
	tokenB := token(monitor.RegionServiceAccount("b"), monitor.ProbeTokenAudience)
	tokenAForKube := token(monitor.RegionServiceAccount("a"))
	must(c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "uptime-operator-probe", Namespace: ns}}))
	tokenShared := token("uptime-operator-probe", monitor.ProbeTokenAudience)

	probeAddr, err := env.Manager.ProbeAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(probeAddr)
	rt, err := probeapi.CATransport(filepath.Join(certDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	agent := func(tok string) *probeapi.Client {
		return &probeapi.Client{BaseURL: "https://localhost:" + port, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1,
			Token: func() (string, error) { return tok, nil }}
	}
	status := func(err error) int {
		var se *probeapi.StatusError
		if errors.As(err, &se) {
			return se.StatusCode
		}
		if err != nil {
			t.Fatalf("not an HTTP answer: %v", err)
		}
		return http.StatusOK
	}
	poll := func(c *probeapi.Client, region string) int {
		_, err := c.Assignments(ctx, region, "", time.Millisecond)
		return status(err)
	}
	down := func(id, region string) probeapi.Result {
		return probeapi.Result{ID: id, MonitorID: string(mon.UID), Region: region, Status: probeapi.StatusDown, CheckedAt: time.Now().UTC()}
	}

	t.Run("a region's ServiceAccount speaks for its region only", func(t *testing.T) {
		if code := poll(agent(tokenA), "a"); code != http.StatusOK {
			t.Fatalf("a's token polling a: %d", code)
		}
		if code := poll(agent(tokenB), "b"); code != http.StatusOK {
			t.Fatalf("b's token polling b: %d", code)
		}
		if code := poll(agent(tokenA), "b"); code != http.StatusForbidden {
			t.Fatalf("a's token polling b: %d, want 403", code)
		}
		_, err := agent(tokenA).PushResults(ctx, &probeapi.ResultBatch{Region: "b", Results: []probeapi.Result{down("sa-1", "b")}})
		if code := status(err); code != http.StatusForbidden {
			t.Fatalf("a's token pushing b's results: %d, want 403", code)
		}
		for name, tok := range map[string]string{"the old shared ServiceAccount": tokenShared, "a token for kube-apiserver": tokenAForKube} {
			if code := poll(agent(tok), "a"); code != http.StatusUnauthorized {
				t.Fatalf("%s: %d, want 401", name, code)
			}
		}
	})

	t.Run("partner's forged results open no incident", func(t *testing.T) {
		partner := agent("partner-secret-token-0123456789abcdef")
		for _, batch := range []*probeapi.ResultBatch{
			{Region: "a", Results: []probeapi.Result{down("f-1", "a"), down("f-2", "b")}},
			{Region: "partner", Results: []probeapi.Result{down("f-3", "a"), down("f-4", "b")}},
		} {
			if _, err := partner.PushResults(ctx, batch); status(err) != http.StatusForbidden {
				t.Fatalf("forged batch: %v, want 403", err)
			}
		}
		resp, err := partner.PushResults(ctx, &probeapi.ResultBatch{Region: "partner", Results: []probeapi.Result{down("f-5", "")}})
		if err != nil || resp.Refused != 1 || resp.Accepted != 0 {
			t.Fatalf("partner's result for a monitor it does not check: %+v, %v", resp, err)
		}
		checks, _, err := env.Manager.Store.ListChecks(ctx, store.ChecksQuery{MonitorID: string(mon.UID)})
		if err != nil || len(checks) != 0 {
			t.Fatalf("checks stored from forged results: %+v, %v", checks, err)
		}
		if inc, err := env.Manager.Store.GetOpenIncident(ctx, string(mon.UID)); err == nil {
			t.Fatalf("an incident opened: %+v", inc)
		}
		// Region a's own down result is stored (and may open the incident).
		resp, err = agent(tokenA).PushResults(ctx, &probeapi.ResultBatch{Region: "a", Results: []probeapi.Result{down("own-1", "")}})
		if err != nil || resp.Accepted != 1 {
			t.Fatalf("a's own result: %+v, %v", resp, err)
		}
	})

	t.Run("agents trust the probe API's CA and nothing else", func(t *testing.T) {
		plain := &probeapi.Client{BaseURL: "https://localhost:" + port, MaxRetries: -1, Token: func() (string, error) { return tokenA, nil }}
		var unknown x509.UnknownAuthorityError
		if _, err := plain.Assignments(ctx, "a", "", time.Millisecond); !errors.As(err, &unknown) {
			t.Fatalf("an agent on the system roots: %v, want an unknown authority", err)
		}
		var sa corev1.ServiceAccount
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: monitor.RegionServiceAccount("a")}, &sa); err != nil ||
			len(sa.OwnerReferences) != 1 || sa.OwnerReferences[0].Name != "a" {
			t.Fatalf("region a's ServiceAccount: %+v, %v", sa.ObjectMeta, err)
		}
	})
}
