package probes

import (
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// TestTrustedCABundle checks http, api, multistep and mcp monitors of an
// HTTPS service whose certificate a private CA signed: down with a TLS error
// on the system roots, up once the trusted CA bundle holds the CA (the
// agent's --trusted-ca-file), with verification still on.
func TestTrustedCABundle(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "internal-mcp", Version: "0.1"}, nil)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	srv, caPEM := testutil.PrivateCAServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			mcpHandler.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	assignments := map[string]probeapi.Assignment{
		"http": {Type: probeapi.TypeHTTP, URL: srv.URL + "/health", TimeoutMs: 5000},
		"api": {Type: probeapi.TypeAPI, URL: srv.URL + "/health", TimeoutMs: 5000, Config: monv1.MonitorSpec{HTTP: &monv1.HTTPConfig{
			Assertions: []monv1.Assertion{{Source: probeapi.SourceJSONBody, Property: "$.ok", Operator: probeapi.OpEquals, Target: "true"}}}}},
		"multistep": {Type: probeapi.TypeMultistep, TimeoutMs: 5000, Config: monv1.MonitorSpec{Multistep: &monv1.MultistepConfig{
			Steps: []monv1.MultistepStep{{Name: "health", URL: srv.URL + "/health"}}}}},
		"mcp": {Type: probeapi.TypeMCP, URL: srv.URL + "/mcp", TimeoutMs: 5000},
	}
	for name, a := range assignments {
		res := run(t, a, testEnv())
		if res.Status != probeapi.StatusDown || res.ErrorType != probeapi.ErrorTLS && name != "multistep" {
			t.Errorf("%s without the bundle: %s %s (%s), want down with a TLS error", name, res.Status, res.ErrorType, res.ErrorMessage)
		}
	}
	pool, err := trust.Pool(caPEM)
	if err != nil {
		t.Fatal(err)
	}
	defer trust.Use(pool)()
	for name, a := range assignments {
		res := run(t, a, testEnv())
		if res.Status != probeapi.StatusUp {
			t.Errorf("%s with the bundle: %s %s (%s), want up", name, res.Status, res.ErrorType, res.ErrorMessage)
		}
	}
}
