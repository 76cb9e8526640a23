package trust_test

import (
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/testutil"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// TestBundleTrustsPrivateCA checks, against a real TLS server whose
// certificate a private CA signed, that a client with ClientConfig refuses
// it on the system roots alone and accepts it once the bundle is loaded,
// and that the system roots stay in the pool.
func TestBundleTrustsPrivateCA(t *testing.T) {
	srv, caPEM := testutil.PrivateCAServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("internal"))
	}))
	get := func() error {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: trust.ClientConfig()}}
		resp, err := c.Get(srv.URL)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	var unknown x509.UnknownAuthorityError
	if err := get(); !errors.As(err, &unknown) {
		t.Fatalf("without the bundle: err = %v, want an unknown authority", err)
	}

	path := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(path, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	defer trust.Use(nil)()
	if err := trust.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	if err := get(); err != nil {
		t.Fatalf("with the bundle: %v", err)
	}
	if sys, err := x509.SystemCertPool(); err == nil && len(sys.Subjects()) > 0 { //nolint:staticcheck // counting, not matching
		if got, want := len(trust.Roots().Subjects()), len(sys.Subjects())+1; got != want { //nolint:staticcheck
			t.Errorf("pool has %d subjects, want the system roots plus the CA (%d)", got, want)
		}
	}
}

// TestLoadFileRefusesBadBundles checks that a bundle that would trust
// nothing is an error, and that an empty path keeps the system roots.
func TestLoadFileRefusesBadBundles(t *testing.T) {
	defer trust.Use(nil)()
	if err := trust.LoadFile(""); err != nil || trust.Roots() != nil {
		t.Fatalf("empty path: %v, roots %v", err, trust.Roots())
	}
	dir := t.TempDir()
	for name, tc := range map[string]struct{ content, want string }{
		"empty":       {"", "no PEM certificate found"},
		"private key": {"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", `"PRIVATE KEY", not a CERTIFICATE`},
		"garbage":     {"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "certificate 1:"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := trust.LoadFile(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
	if err := trust.LoadFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file is an error")
	}
	if trust.Roots() != nil {
		t.Error("a refused bundle must not change the pool")
	}
}
