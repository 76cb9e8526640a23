package probeapi

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

// TestCATransport: an agent with --server-ca-file reaches a manager whose
// certificate that CA signed, and refuses one signed by another CA (the
// system roots are not consulted); a CA file replaced on disk is used from
// the next check on.
func TestCATransport(t *testing.T) {
	mem := &MemoryServer{Region: "eu1", Token: "secret"}
	srv, caPEM := testutil.PrivateCAServer(t, NewHandler(mem))
	other, otherPEM := testutil.PrivateCAServer(t, NewHandler(mem))
	path := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(path, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := CATransport(path)
	if err != nil {
		t.Fatal(err)
	}
	c := func(url string) *Client {
		return &Client{BaseURL: url, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1,
			Token: func() (string, error) { return "secret", nil }}
	}
	ctx := context.Background()
	if _, err := c(srv.URL).Assignments(ctx, "eu1", "", time.Millisecond); err != nil {
		t.Fatalf("manager signed by the CA: %v", err)
	}
	var unknown x509.UnknownAuthorityError
	if _, err := c(other.URL).Assignments(ctx, "eu1", "", time.Millisecond); !errors.As(err, &unknown) {
		t.Fatalf("manager signed by another CA: %v, want an unknown authority", err)
	}
	// Rotation: the file now holds the other CA.
	if err := os.WriteFile(path, otherPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	ct := rt.(*caTransport)
	ct.mu.Lock()
	ct.checked = time.Time{} // the 30 s recheck is due
	ct.mu.Unlock()
	if _, err := c(other.URL).Assignments(ctx, "eu1", "", time.Millisecond); err != nil {
		t.Fatalf("after the CA file changed: %v", err)
	}
	if _, err := CATransport(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "probe API CA") {
		t.Fatalf("a missing CA file: %v", err)
	}
}
