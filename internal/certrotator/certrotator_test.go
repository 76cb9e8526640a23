package certrotator

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const ns = "uptime-operator-system"

// TestRotator (issue 28 row 3): the serving CA and certificates are made
// at runtime, kept in Secrets, written for the listeners and injected into
// the webhook configurations and the APIService; a restarted rotator keeps
// a valid certificate; certificates and the CA are renewed in their last
// third, the previous CA staying trusted; a bundle someone removed comes
// back.
func TestRotator(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	// As the chart renders them: no caBundle.
	hook := func() (admissionregistrationv1.WebhookClientConfig, admissionregistrationv1.RuleWithOperations) {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "webhook", Path: ptr.To("/x")}},
			admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}
	}
	cc, rule := hook()
	none := admissionregistrationv1.SideEffectClassNone
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "uptime-mutating"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "a.example.com", ClientConfig: cc, Rules: []admissionregistrationv1.RuleWithOperations{rule},
			SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}, {Name: "b.example.com", ClientConfig: cc,
			Rules: []admissionregistrationv1.RuleWithOperations{rule}, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "uptime-validating"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "a.example.com", ClientConfig: cc, Rules: []admissionregistrationv1.RuleWithOperations{rule},
			SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "v1.widgets.example.com"},
		"spec": map[string]any{"group": "widgets.example.com", "version": "v1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"service": map[string]any{"namespace": ns, "name": "aggregated", "port": int64(443)}},
	}}
	apiService.SetGroupVersionKind(APIServiceGVK)
	for _, o := range []client.Object{mutating, validating, apiService} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	dir := t.TempDir()
	webhookDNS := []string{"webhook." + ns + ".svc", "webhook." + ns + ".svc.cluster.local"}
	now := time.Now()
	opts := Options{
		Namespace: ns, CASecret: "uptime-ca",
		Certs: []Cert{
			{Secret: "uptime-webhook-cert", DNSNames: webhookDNS, Dir: filepath.Join(dir, "webhook")},
			{Secret: "uptime-api-cert", DNSNames: []string{"api." + ns + ".svc"}, Dir: filepath.Join(dir, "api")},
		},
		MutatingWebhooks: []string{"uptime-mutating", "absent"}, ValidatingWebhooks: []string{"uptime-validating"},
		APIServices:  []string{"v1.widgets.example.com"},
		CertValidity: 90 * 24 * time.Hour, CAValidity: 3 * 365 * 24 * time.Hour,
		Now: func() time.Time { return now }, Log: logr.Discard(),
	}
	r := New(k8s, opts)
	if r.Ready() == nil {
		t.Fatal("ready before any certificate")
	}
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Ready(); err != nil {
		t.Fatal(err)
	}
	secret := func(name string) *corev1.Secret {
		var s corev1.Secret
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	ca := secret("uptime-ca")
	bundle := ca.Data["ca.crt"]
	web := secret("uptime-webhook-cert")
	if web.Type != corev1.SecretTypeTLS || !bytes.Equal(web.Data["ca.crt"], bundle) {
		t.Fatalf("webhook Secret: type %s, its bundle is not the CA's", web.Type)
	}
	// The certificate on disk verifies against the bundle for its names.
	verify := func(certDir, dnsName string, bundle []byte) *x509.Certificate {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(certDir, "tls.crt"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := pem.Decode(raw)
		leaf, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(bundle)
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: dnsName, Roots: pool, CurrentTime: now}); err != nil {
			t.Fatalf("%s does not verify for %s: %v", certDir, dnsName, err)
		}
		return leaf
	}
	first := verify(filepath.Join(dir, "webhook"), webhookDNS[0], bundle)
	verify(filepath.Join(dir, "api"), "api."+ns+".svc", bundle)
	// The bundle everywhere.
	injected := func(want []byte) {
		t.Helper()
		var m admissionregistrationv1.MutatingWebhookConfiguration
		if err := k8s.Get(ctx, client.ObjectKey{Name: "uptime-mutating"}, &m); err != nil {
			t.Fatal(err)
		}
		for _, w := range m.Webhooks {
			if !bytes.Equal(w.ClientConfig.CABundle, want) {
				t.Fatalf("mutating webhook %s: caBundle is not the CA bundle", w.Name)
			}
		}
		var v admissionregistrationv1.ValidatingWebhookConfiguration
		if err := k8s.Get(ctx, client.ObjectKey{Name: "uptime-validating"}, &v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(v.Webhooks[0].ClientConfig.CABundle, want) {
			t.Fatal("validating webhook: caBundle is not the CA bundle")
		}
		a := &unstructured.Unstructured{}
		a.SetGroupVersionKind(APIServiceGVK)
		if err := k8s.Get(ctx, client.ObjectKey{Name: "v1.widgets.example.com"}, a); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedString(a.Object, "spec", "caBundle"); got != base64.StdEncoding.EncodeToString(want) {
			t.Fatal("APIService: caBundle is not the CA bundle")
		}
	}
	injected(bundle)

	// A restart (another rotator, a later day) keeps what is valid: no
	// write at all.
	now = now.Add(24 * time.Hour)
	if err := New(k8s, opts).Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if again := secret("uptime-ca"); again.ResourceVersion != ca.ResourceVersion {
		t.Fatal("a restart rewrote the valid CA")
	}
	if again := secret("uptime-webhook-cert"); again.ResourceVersion != web.ResourceVersion {
		t.Fatal("a restart rewrote the valid serving certificate")
	}

	// Someone removes a bundle: the next pass puts it back.
	var m admissionregistrationv1.MutatingWebhookConfiguration
	if err := k8s.Get(ctx, client.ObjectKey{Name: "uptime-mutating"}, &m); err != nil {
		t.Fatal(err)
	}
	m.Webhooks[1].ClientConfig.CABundle = nil
	if err := k8s.Update(ctx, &m); err != nil {
		t.Fatal(err)
	}
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	injected(bundle)

	// 61 days in, less than a third of the 90 days is left: renewed, same CA.
	now = now.Add(60 * 24 * time.Hour)
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	renewed := verify(filepath.Join(dir, "webhook"), webhookDNS[0], bundle)
	if renewed.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Fatal("the serving certificate was not renewed in its last third")
	}
	if secret("uptime-ca").ResourceVersion != ca.ResourceVersion {
		t.Fatal("renewing a serving certificate changed the CA")
	}

	// Two years in, the CA is in its last third: a new CA, the old one still
	// trusted beside it, every certificate reissued by the new one.
	now = now.Add(2 * 365 * 24 * time.Hour)
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	newCA := secret("uptime-ca")
	if bytes.Equal(newCA.Data["tls.crt"], ca.Data["tls.crt"]) {
		t.Fatal("the CA was not renewed in its last third")
	}
	newBundle := newCA.Data["ca.crt"]
	if !bytes.Contains(newBundle, ca.Data["tls.crt"]) || !bytes.HasPrefix(newBundle, newCA.Data["tls.crt"]) {
		t.Fatal("the new bundle must hold the new CA first and the previous one")
	}
	leaf := verify(filepath.Join(dir, "webhook"), webhookDNS[0], newCA.Data["tls.crt"])
	if leaf.SerialNumber.Cmp(renewed.SerialNumber) == 0 {
		t.Fatal("the serving certificate was not reissued by the new CA")
	}
	injected(newBundle)
}
