package manager_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/certrotator"
	"github.com/uptime-operator/uptime-operator/internal/localcp"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// TestWebhooksServeFromTheFirstStartWithRotatedCerts (issue 28 row 3): with
// --cert-rotation and nothing in place (no certificate files, no Secrets,
// webhook configurations trusting another CA), the manager makes its CA and
// serving certificate before its webhook server starts and injects the CA
// into the webhook configurations, so kube-apiserver's first admission
// call after the start succeeds.
func TestWebhooksServeFromTheFirstStartWithRotatedCerts(t *testing.T) {
	// Its subject is the manager's first start: the test runs its own.
	env := testenv.Use(t, env)
	env.StopForTest(t)
	admin := env.Config
	webhookHost, webhookPort := env.WebhookAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k8s, err := client.New(admin, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// The probe namespace may be there from another test of the manager.
	const ns, team = "uptime-operator-system", "certrotation-team"
	for _, n := range []string{ns, team} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	rot := &certrotator.Options{Namespace: ns, CASecret: "uptime-operator-ca",
		Certs: []certrotator.Cert{{Secret: "uptime-operator-webhook-cert", DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP(webhookHost)}, Dir: filepath.Join(t.TempDir(), "webhook")}}}
	mutating, validating, err := localcp.Webhooks()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range mutating {
		rot.MutatingWebhooks = append(rot.MutatingWebhooks, w.Name)
	}
	for _, w := range validating {
		rot.ValidatingWebhooks = append(rot.ValidatingWebhooks, w.Name)
	}
	m, err := manager.New(admin, manager.Options{
		Namespace: ns, CertRotation: rot,
		WebhookHost: webhookHost, WebhookPort: webhookPort, WebhookCertDir: rot.Certs[0].Dir,
		Store: filepath.Join(t.TempDir(), "uptime.db"), MetricsAddr: "0", HealthAddr: "0", SkipNameValidation: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	var startErr error
	go func() { startErr = m.Start(runCtx); close(done) }()
	defer func() { stop(); <-done }()

	// The validating webhook answers: it refuses a header naming a Secret
	// that does not opt in (the CRD schema alone would admit it).
	if err := k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "db-password"},
		StringData: map[string]string{"password": "p"}}); err != nil {
		t.Fatal(err)
	}
	mon := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "web"},
		Spec: monv1.MonitorSpec{URL: "https://example.com/", HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{{Name: "X-Db",
			ValueFrom: &monv1.SecretKeySelector{Name: "db-password", Key: "password"}}}}}}
	for {
		err := k8s.Create(ctx, mon.DeepCopy())
		if err != nil && strings.Contains(err.Error(), "does not opt in") {
			break
		}
		select {
		case <-done:
			t.Fatalf("the manager stopped: %v", startErr)
		case <-ctx.Done():
			t.Fatalf("the webhooks never answered with the rotated certificate: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	var sec corev1.Secret
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "uptime-operator-webhook-cert"}, &sec); err != nil || len(sec.Data["tls.crt"]) == 0 {
		t.Fatalf("the serving certificate's Secret: %v", err)
	}
}
