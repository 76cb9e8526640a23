// Package certrotator keeps the manager's serving certificates (admission
// webhooks, aggregated API, probe API) at runtime: a CA and the serving
// certificates in Secrets of the manager's namespace, made when missing and
// renewed before they expire, written to the directories the listeners
// read, and the CA bundle patched into the webhook configurations and the
// APIService.
//
// The chart used to make them at render time (genCA, kept with lookup), so
// two offline `helm template` renders differed and a GitOps tool showed a
// permanent diff. Made here, the rendered manifests carry no key material
// and are identical from render to render; cert-manager remains the other
// way (the chart's certManager.enabled).
//
// Every replica runs a rotator. They agree through the Secrets: whoever
// writes first wins (creates fail with AlreadyExists, updates with a
// conflict), the others read what was written and use it.
package certrotator

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/internal/certs"
)

// Secret keys: tls.crt and tls.key as kubernetes.io/tls Secrets have them,
// ca.crt the bundle of CAs to trust (the current one first, a previous one
// while certificates it signed may still be in use).
const (
	keyCert   = corev1.TLSCertKey
	keyKey    = corev1.TLSPrivateKeyKey
	keyBundle = "ca.crt"
)

// Defaults of the Options durations.
const (
	DefaultCAValidity   = 10 * 365 * 24 * time.Hour
	DefaultCertValidity = 365 * 24 * time.Hour
	DefaultInterval     = time.Minute
)

// Cert is one serving certificate.
type Cert struct {
	// Secret names the kubernetes.io/tls Secret that keeps it.
	Secret string
	// DNSNames are the names it serves (the first is its common name).
	DNSNames []string
	// IPs are addresses it serves too (a local control plane calls its
	// webhooks at 127.0.0.1; in a cluster, none).
	IPs []net.IP
	// Dir receives tls.crt, tls.key and ca.crt for the listener to read
	// (empty: the Secret only).
	Dir string
}

// Options configure a Rotator.
type Options struct {
	// Namespace holds the Secrets (the manager's).
	Namespace string
	// CASecret names the Secret of the CA.
	CASecret string
	// Certs are the serving certificates.
	Certs []Cert
	// MutatingWebhooks, ValidatingWebhooks and APIServices name the objects
	// whose CA bundle is kept equal to the CA's; missing ones are skipped
	// (an install without the aggregated API).
	MutatingWebhooks, ValidatingWebhooks, APIServices []string
	// CAValidity and CertValidity: zero takes the defaults. A certificate
	// is renewed once less than a third of its validity is left (as
	// cert-manager does by default), the CA likewise; a renewed CA is
	// trusted beside the previous one until the latter expires.
	CAValidity, CertValidity time.Duration
	// Interval is how often Start checks everything again (zero:
	// DefaultInterval): renewals, a bundle someone removed, a certificate
	// another replica renewed.
	Interval time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	Log logr.Logger
}

// Rotator keeps the certificates; see the package documentation.
type Rotator struct {
	c    client.Client
	opts Options

	mu    sync.Mutex
	ready bool
}

// New returns a Rotator that reads and writes through c (uncached: it
// runs before the manager's caches start).
func New(c client.Client, opts Options) *Rotator {
	if opts.CAValidity == 0 {
		opts.CAValidity = DefaultCAValidity
	}
	if opts.CertValidity == 0 {
		opts.CertValidity = DefaultCertValidity
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Rotator{c: c, opts: opts}
}

// Start checks the certificates every Interval until ctx ends. A failed
// pass is logged and tried again; the listeners keep the files they have.
func (r *Rotator) Start(ctx context.Context) error {
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	for {
		if err := r.Ensure(ctx); err != nil && ctx.Err() == nil {
			r.opts.Log.Error(err, "serving certificates")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// NeedLeaderElection is false: every replica serves with the certificates
// and writes its own files.
func (r *Rotator) NeedLeaderElection() bool { return false }

// Ready is a readiness check: nil once a pass has written every
// certificate's files and bundles.
func (r *Rotator) Ready() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.ready {
		return errors.New("the serving certificates are not in place yet")
	}
	return nil
}

// EnsureWithin runs Ensure until it succeeds or timeout passes: the manager
// calls it before its listeners start, which need the files.
func (r *Rotator) EnsureWithin(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := r.Ensure(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("serving certificates: %w", err)
		case <-time.After(time.Second):
		}
	}
}

// Ensure makes one pass: the CA, then the CA bundles of the webhook
// configurations and APIServices, then each serving certificate and its
// files. The bundle goes first: a certificate signed by a new CA is issued
// and served only once kube-apiserver trusts that CA, so no replica, and
// no two replicas renewing at the same moment, serves a certificate the
// injected bundle does not trust (a failed injection stops the pass before
// any certificate changes).
func (r *Rotator) Ensure(ctx context.Context) error {
	ca, bundle, err := r.ensureCA(ctx)
	if err != nil {
		return err
	}
	if err := r.inject(ctx, bundle); err != nil {
		return err
	}
	for _, c := range r.opts.Certs {
		if err := r.ensureCert(ctx, c, ca, bundle); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.ready = true
	r.mu.Unlock()
	return nil
}

// ensureCA returns the CA and the bundle to trust, making or renewing the
// CA when it is missing, unreadable or in its last third.
func (r *Rotator) ensureCA(ctx context.Context) (*certs.CA, []byte, error) {
	now := r.opts.Now()
	var sec corev1.Secret
	err := r.c.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: r.opts.CASecret}, &sec)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, nil, fmt.Errorf("read ca secret: %w", err)
	}
	exists := err == nil
	if exists {
		if ca, err := certs.ParseCA(sec.Data[keyCert], sec.Data[keyKey]); err == nil && fresh(ca.Cert, now) {
			bundle := sec.Data[keyBundle]
			if len(bundle) == 0 {
				bundle = ca.CertPEM
			}
			return ca, bundle, nil
		}
	}
	ca, err := certs.NewCAValid(r.opts.CASecret, now, r.opts.CAValidity)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := ca.KeyPEM()
	if err != nil {
		return nil, nil, err
	}
	// The previous CA stays trusted while it is valid: certificates it
	// signed are served until each replica has the new ones.
	bundle := append(slices.Clone(ca.CertPEM), unexpired(sec.Data[keyBundle], now)...)
	data := map[string][]byte{keyCert: ca.CertPEM, keyKey: keyPEM, keyBundle: bundle}
	if err := r.write(ctx, &sec, exists, r.opts.CASecret, data); err != nil {
		return nil, nil, fmt.Errorf("write ca secret: %w", err)
	}
	r.opts.Log.Info("made a serving CA", "secret", r.opts.CASecret, "notAfter", ca.Cert.NotAfter)
	return ca, bundle, nil
}

// ensureCert keeps one serving certificate: reissued when missing, not
// signed by the current CA, for other names or in its last third; its
// Secret's bundle kept current; its files written.
func (r *Rotator) ensureCert(ctx context.Context, c Cert, ca *certs.CA, bundle []byte) error {
	now := r.opts.Now()
	var sec corev1.Secret
	err := r.c.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: c.Secret}, &sec)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("read secret %s: %w", c.Secret, err)
	}
	exists := err == nil
	data := sec.Data
	if !exists || !valid(sec.Data, c, ca, now) {
		certPEM, keyPEM, err := ca.IssueValid(c.DNSNames[0], c.DNSNames, c.IPs, false, now, r.opts.CertValidity)
		if err != nil {
			return err
		}
		data = map[string][]byte{keyCert: certPEM, keyKey: keyPEM, keyBundle: bundle}
		if err := r.write(ctx, &sec, exists, c.Secret, data); err != nil {
			return fmt.Errorf("write secret %s: %w", c.Secret, err)
		}
		r.opts.Log.Info("issued a serving certificate", "secret", c.Secret, "dnsNames", c.DNSNames)
	} else if !bytes.Equal(sec.Data[keyBundle], bundle) {
		data = map[string][]byte{keyCert: sec.Data[keyCert], keyKey: sec.Data[keyKey], keyBundle: bundle}
		if err := r.write(ctx, &sec, true, c.Secret, data); err != nil {
			return fmt.Errorf("write secret %s: %w", c.Secret, err)
		}
	}
	if c.Dir == "" {
		return nil
	}
	return writeFiles(c.Dir, data)
}

// write creates the Secret name with data, or updates sec (read before,
// so a replica that wrote in between makes this a conflict).
func (r *Rotator) write(ctx context.Context, sec *corev1.Secret, exists bool, name string, data map[string][]byte) error {
	if exists {
		sec.Data = data
		return r.c.Update(ctx, sec)
	}
	*sec = corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.opts.Namespace, Name: name, Labels: map[string]string{
			"app.kubernetes.io/managed-by": "uptime-operator", "app.kubernetes.io/component": "serving-certificates"}},
		Type: corev1.SecretTypeTLS, Data: data,
	}
	return r.c.Create(ctx, sec)
}

// inject sets the CA bundle of every webhook of the configurations and of
// the APIServices, where it differs (mergeBundle).
func (r *Rotator) inject(ctx context.Context, bundle []byte) error {
	now := r.opts.Now()
	for _, name := range r.opts.MutatingWebhooks {
		var cfg admissionregistrationv1.MutatingWebhookConfiguration
		if err := r.c.Get(ctx, client.ObjectKey{Name: name}, &cfg); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("read mutating webhook configuration %s: %w", name, err)
		}
		changed := false
		for i := range cfg.Webhooks {
			if merged, ok := mergeBundle(bundle, cfg.Webhooks[i].ClientConfig.CABundle, now); ok {
				cfg.Webhooks[i].ClientConfig.CABundle, changed = merged, true
			}
		}
		if changed {
			if err := r.c.Update(ctx, &cfg); err != nil {
				return fmt.Errorf("inject ca bundle into %s: %w", name, err)
			}
		}
	}
	for _, name := range r.opts.ValidatingWebhooks {
		var cfg admissionregistrationv1.ValidatingWebhookConfiguration
		if err := r.c.Get(ctx, client.ObjectKey{Name: name}, &cfg); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("read validating webhook configuration %s: %w", name, err)
		}
		changed := false
		for i := range cfg.Webhooks {
			if merged, ok := mergeBundle(bundle, cfg.Webhooks[i].ClientConfig.CABundle, now); ok {
				cfg.Webhooks[i].ClientConfig.CABundle, changed = merged, true
			}
		}
		if changed {
			if err := r.c.Update(ctx, &cfg); err != nil {
				return fmt.Errorf("inject ca bundle into %s: %w", name, err)
			}
		}
	}
	for _, name := range r.opts.APIServices {
		// Unstructured: the aggregator's types are not worth a module.
		svc := &unstructured.Unstructured{}
		svc.SetGroupVersionKind(APIServiceGVK)
		if err := r.c.Get(ctx, client.ObjectKey{Name: name}, svc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("read apiservice %s: %w", name, err)
		}
		got, _, _ := unstructured.NestedString(svc.Object, "spec", "caBundle")
		current, _ := base64.StdEncoding.DecodeString(got)
		merged, ok := mergeBundle(bundle, current, now)
		if !ok {
			continue
		}
		if err := unstructured.SetNestedField(svc.Object, base64.StdEncoding.EncodeToString(merged), "spec", "caBundle"); err != nil {
			return err
		}
		if err := r.c.Update(ctx, svc); err != nil {
			return fmt.Errorf("inject ca bundle into apiservice %s: %w", name, err)
		}
	}
	return nil
}

// APIServiceGVK is the kind of kube-apiserver's aggregation registrations.
var APIServiceGVK = schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}

// fresh reports whether cert has more than a third of its validity left.
func fresh(cert *x509.Certificate, now time.Time) bool {
	life := cert.NotAfter.Sub(cert.NotBefore)
	return now.After(cert.NotBefore) && cert.NotAfter.Sub(now) > life/3
}

// valid reports whether data holds a certificate and its key, signed by
// ca, for exactly c's names and addresses, with more than a third of its
// validity left.
func valid(data map[string][]byte, c Cert, ca *certs.CA, now time.Time) bool {
	pair, err := tls.X509KeyPair(data[keyCert], data[keyKey])
	if err != nil {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || !fresh(leaf, now) {
		return false
	}
	if !slices.Equal(slices.Sorted(slices.Values(leaf.DNSNames)), slices.Sorted(slices.Values(c.DNSNames))) ||
		!slices.EqualFunc(leaf.IPAddresses, c.IPs, net.IP.Equal) {
		return false
	}
	return leaf.CheckSignatureFrom(ca.Cert) == nil
}

// unexpired keeps the certificates of a PEM bundle still valid at now.
func unexpired(bundle []byte, now time.Time) []byte {
	var out []byte
	for {
		var b *pem.Block
		b, bundle = pem.Decode(bundle)
		if b == nil {
			return out
		}
		if c, err := x509.ParseCertificate(b.Bytes); err == nil && now.Before(c.NotAfter) {
			out = append(out, pem.EncodeToMemory(b)...)
		}
	}
}

// mergeBundle returns the bundle to inject where current is injected, and
// whether it differs from current as a set of certificates: bundle, then
// every certificate of current still valid at now that bundle lacks. A
// replica that read the CA Secret just before another replica renewed the
// CA must not take the new CA out of the injected bundle (the other
// replica already serves certificates it signed); expired CAs go.
func mergeBundle(bundle, current []byte, now time.Time) ([]byte, bool) {
	ours := pemBlocks(bundle)
	merged := slices.Clone(bundle)
	have := map[string]bool{}
	for _, b := range ours {
		have[string(b)] = true
	}
	kept := pemBlocks(unexpired(current, now))
	for _, b := range kept {
		if !have[string(b)] {
			merged = append(merged, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b})...)
			have[string(b)] = true
		}
	}
	cur := map[string]bool{}
	for _, b := range pemBlocks(current) {
		cur[string(b)] = true
	}
	return merged, len(cur) != len(have) || len(kept) != len(pemBlocks(current)) || !containsAll(cur, ours)
}

// pemBlocks returns the DER bytes of each PEM block of b.
func pemBlocks(b []byte) [][]byte {
	var out [][]byte
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out
		}
		out = append(out, blk.Bytes)
	}
}

func containsAll(set map[string]bool, blocks [][]byte) bool {
	for _, b := range blocks {
		if !set[string(b)] {
			return false
		}
	}
	return true
}

// writeFiles writes the certificate, key and bundle into dir where they
// differ, each through a rename so a reader never sees half a file
// (controller-runtime's certwatcher reloads on the change).
func writeFiles(dir string, data map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// The key before the certificate: a watcher that reloads on the
	// certificate's change then finds the matching key.
	for _, name := range []string{keyKey, keyBundle, keyCert} {
		path := filepath.Join(dir, name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data[name]) {
			continue
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data[name], 0o600); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}
