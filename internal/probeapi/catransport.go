package probeapi

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"
)

// caRecheck is how often CATransport looks at its CA file again.
const caRecheck = 30 * time.Second

// CATransport returns a transport that verifies the manager's serving
// certificate against the PEM CA bundle at path, and only against it: the
// probe API's certificate comes from the cluster's own CA (the chart's, or
// cert-manager's), never from a public one. The file is looked at again
// every 30 s and a changed bundle replaces the transport, so a CA rotated in
// a mounted Secret is used without restarting the agent.
func CATransport(path string) (http.RoundTripper, error) {
	t := &caTransport{path: path}
	if err := t.load(time.Now()); err != nil {
		return nil, err
	}
	return t, nil
}

// caTransport is a transport whose roots follow a CA file.
type caTransport struct {
	path string

	mu      sync.Mutex
	raw     []byte
	checked time.Time
	current *http.Transport
}

// RoundTrip implements http.RoundTripper.
func (t *caTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	now := time.Now()
	t.mu.Lock()
	stale := now.Sub(t.checked) >= caRecheck
	t.mu.Unlock()
	if stale {
		// An unreadable file keeps the bundle read before: the Secret
		// volume is swapped atomically, so this is a passing state.
		_ = t.load(now)
	}
	t.mu.Lock()
	cur := t.current
	t.mu.Unlock()
	return cur.RoundTrip(req)
}

// load reads the file and, when it changed, builds the transport on it.
func (t *caTransport) load(now time.Time) error {
	raw, err := os.ReadFile(t.path)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.checked = now
	if err != nil {
		return fmt.Errorf("read probe API CA: %w", err)
	}
	if t.current != nil && bytes.Equal(raw, t.raw) {
		return nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(raw) {
		return fmt.Errorf("probe API CA %s: no PEM certificate found", t.path)
	}
	next := http.DefaultTransport.(*http.Transport).Clone()
	next.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if t.current != nil {
		t.current.CloseIdleConnections()
	}
	t.raw, t.current = raw, next
	return nil
}
