package cli

import (
	"bytes"
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// TestApplyTrustedCAFile: `apply` reaches an API served with a private CA's
// certificate only with --trusted-ca-file naming that CA, and refuses a
// bundle that cannot be read, naming the flag. (`mcp` takes the same flag and
// the same client, trustingClient.)
func TestApplyTrustedCAFile(t *testing.T) {
	var hits atomic.Int32
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"invalid API key","code":"UNAUTHORIZED"}`))
	}))
	defer api.Close()
	dir := t.TempDir()
	bundle := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "monitors.yaml")
	if err := os.WriteFile(manifest, []byte("monitors:\n- key: web\n  name: Web\n  type: http\n  url: https://example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	defer trust.Use(nil)()
	apply := func(extra ...string) error {
		args := append([]string{"-f", manifest, "--dry-run", "--api-url", api.URL, "--api-key", "sk_" + strings.Repeat("a", 43)}, extra...)
		return runApply(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
	}

	if err := apply(); err == nil || !strings.Contains(err.Error(), "certificate") || hits.Load() != 0 {
		t.Fatalf("without the CA: err = %v, requests served = %d; want a certificate error and none", err, hits.Load())
	}
	if err := apply("--trusted-ca-file", filepath.Join(dir, "missing.pem")); err == nil || !strings.Contains(err.Error(), "--trusted-ca-file") {
		t.Fatalf("unreadable bundle: err = %v, want one naming --trusted-ca-file", err)
	}
	err := apply("--trusted-ca-file", bundle)
	if hits.Load() == 0 {
		t.Fatalf("with the CA the API was never reached: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "invalid API key") {
		t.Fatalf("with the CA: err = %v, want the API's own answer", err)
	}
}
