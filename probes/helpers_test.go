package probes

import (
	"context"
	"crypto/x509"
	"net/http/httptest"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// testEnv allows private targets so checks can reach loopback servers.
func testEnv() *Env {
	return &Env{Guard: netguard.Guard{AllowPrivate: true}, Region: "test"}
}

// tlsEnv trusts the certificate of a httptest TLS server.
func tlsEnv(ts *httptest.Server) *Env {
	env := testEnv()
	env.RootCAs = x509.NewCertPool()
	env.RootCAs.AddCert(ts.Certificate())
	return env
}

func run(t *testing.T, a probeapi.Assignment, env *Env) probeapi.Result {
	t.Helper()
	if a.ID == "" {
		a.ID = "11111111-2222-3333-4444-555555555555"
	}
	return Run(context.Background(), &a, env)
}

func wantStatus(t *testing.T, res probeapi.Result, want probeapi.Status) {
	t.Helper()
	if res.Status != want {
		t.Fatalf("status %s (%s: %s), want %s", res.Status, res.ErrorType, res.ErrorMessage, want)
	}
}
