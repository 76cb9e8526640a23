package certrotator

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/uptime-operator/uptime-operator/internal/certs"
)

// TestMergeBundle: a stale bundle does not take a newer CA out of the
// injected one; an expired CA goes; the same set in another order is no
// change.
func TestMergeBundle(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	mk := func(name string, from time.Time, valid time.Duration) []byte {
		ca, err := certs.NewCAValid(name, from, valid)
		if err != nil {
			t.Fatal(err)
		}
		return ca.CertPEM
	}
	old, renewed, expired := mk("old", now.Add(-time.Hour), 24*time.Hour), mk("new", now, 48*time.Hour), mk("gone", now.Add(-48*time.Hour), time.Hour)
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	if got, changed := mergeBundle(old, cat(renewed, old), now); changed || !bytes.Equal(got, cat(old, renewed)) {
		t.Fatalf("a stale replica's bundle: changed %v; the newer CA must stay", changed)
	}
	if _, changed := mergeBundle(cat(renewed, old), cat(old, renewed), now); changed {
		t.Fatal("the same CAs in another order are no change")
	}
	if got, changed := mergeBundle(cat(renewed, old), old, now); !changed || !bytes.Equal(got, cat(renewed, old)) {
		t.Fatal("the renewed CA is added")
	}
	if got, changed := mergeBundle(cat(renewed, old), cat(renewed, old, expired), now); !changed || !bytes.Equal(got, cat(renewed, old)) {
		t.Fatal("an expired CA is dropped")
	}
	if got, changed := mergeBundle(old, nil, now); !changed || !bytes.Equal(got, old) {
		t.Fatal("a removed bundle comes back")
	}
}

// TestBundleBeforeCertificates: when the CA bundle cannot be injected, a
// pass issues no certificate and writes no file, so nothing is served that
// kube-apiserver does not trust; on 6d85b7e certificates came first.
func TestBundleBeforeCertificates(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	none := admissionregistrationv1.SideEffectClassNone
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "uptime-validating"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "a.example.com", SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}
	refuse := errors.New("conflict with another replica")
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).WithObjects(cfg).Build(), interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration); ok {
				return refuse
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	dir := t.TempDir()
	r := New(c, Options{Namespace: ns, CASecret: "uptime-ca", ValidatingWebhooks: []string{"uptime-validating"},
		Certs: []Cert{{Secret: "uptime-webhook-cert", DNSNames: []string{"webhook." + ns + ".svc"}, Dir: dir}}, Log: logr.Discard()})
	if err := r.Ensure(context.Background()); !errors.Is(err, refuse) {
		t.Fatalf("Ensure: %v, want the injection's error", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tls.crt")); !os.IsNotExist(err) {
		t.Fatalf("a certificate was written before its CA was trusted: %v", err)
	}
	if r.Ready() == nil {
		t.Fatal("ready without a trusted certificate")
	}
}
