package probes

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

type greetIn struct {
	Name string `json:"name"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

// startMCP serves an MCP server with one tool over Streamable HTTP on a TLS
// loopback server that requires an API key header.
func startMCP(t *testing.T) *httptest.Server {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "test-mcp", Version: "0.1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "says hello"},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, greetOut, error) {
			if in.Name == "" {
				return nil, greetOut{}, errors.New("name is required")
			}
			return nil, greetOut{Greeting: "hello " + in.Name}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "k" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestMCP(t *testing.T) {
	ts := startMCP(t)
	env := tlsEnv(ts)
	base := func(cfg probeapi.MCPConfig) probeapi.Assignment {
		return probeapi.Assignment{Type: probeapi.TypeMCP, URL: ts.URL + "/mcp", TimeoutMs: 5000, Config: probeapi.Config{
			HTTPConfig: probeapi.HTTPConfig{Headers: map[string]string{"X-Api-Key": "k"}}, MCPConfig: cfg}}
	}
	res := run(t, base(probeapi.MCPConfig{ExpectedTools: []string{"greet"},
		ToolCall: &probeapi.ToolCall{Name: "greet", Arguments: json.RawMessage(`{"name":"probe"}`)}}), env)
	wantStatus(t, res, probeapi.StatusUp)
	var d mcpDetails
	json.Unmarshal(res.Details, &d)
	if d.ServerName != "test-mcp" || len(d.Tools) != 1 || d.ProtocolVersion == "" {
		t.Fatalf("details %+v", d)
	}
	if res.TLS != nil {
		t.Logf("tls %+v", res.TLS)
	}

	res = run(t, base(probeapi.MCPConfig{ExpectedTools: []string{"greet", "missing"}}), env)
	wantStatus(t, res, probeapi.StatusDown)

	res = run(t, base(probeapi.MCPConfig{ToolCall: &probeapi.ToolCall{Name: "greet", Arguments: json.RawMessage(`{"name":""}`)}}), env)
	wantStatus(t, res, probeapi.StatusDown)

	res = run(t, base(probeapi.MCPConfig{ProtocolVersion: "2025-06-18"}), env)
	wantStatus(t, res, probeapi.StatusUp)
	json.Unmarshal(res.Details, &d)
	if d.ProtocolVersion != "2025-06-18" {
		t.Fatalf("negotiated %q", d.ProtocolVersion)
	}

	noKey := base(probeapi.MCPConfig{})
	noKey.Config.Headers = nil
	wantStatus(t, run(t, noKey, env), probeapi.StatusDown)

	wantStatus(t, run(t, base(probeapi.MCPConfig{}), &Env{RootCAs: env.RootCAs}), probeapi.StatusBlocked)
}
