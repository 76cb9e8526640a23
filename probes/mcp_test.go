package probes

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
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
	base := func(cfg monv1.MCPConfig) probeapi.Assignment {
		cfg.Headers = probeapi.TextHeaders(map[string]string{"X-Api-Key": "k"})
		return probeapi.Assignment{Type: probeapi.TypeMCP, URL: ts.URL + "/mcp", TimeoutMs: 5000, Config: monv1.MonitorSpec{MCP: &cfg}}
	}
	res := run(t, base(monv1.MCPConfig{ExpectedTools: []string{"greet"},
		ToolCall: &monv1.MCPToolCall{Name: "greet", ArgumentsJSON: `{"name":"probe"}`}}), env)
	wantStatus(t, res, probeapi.StatusUp)
	var d mcpDetails
	json.Unmarshal(res.Details, &d)
	if d.ServerName != "test-mcp" || len(d.Tools) != 1 || d.ProtocolVersion == "" {
		t.Fatalf("details %+v", d)
	}
	if res.TLS == nil || res.TLS.NotAfter.IsZero() {
		t.Fatalf("no certificate in the result of an https MCP check: %+v", res.TLS)
	}

	res = run(t, base(monv1.MCPConfig{ExpectedTools: []string{"greet", "missing"}}), env)
	wantStatus(t, res, probeapi.StatusDown)

	res = run(t, base(monv1.MCPConfig{ToolCall: &monv1.MCPToolCall{Name: "greet", ArgumentsJSON: `{"name":""}`}}), env)
	wantStatus(t, res, probeapi.StatusDown)

	res = run(t, base(monv1.MCPConfig{ProtocolVersion: "2025-06-18"}), env)
	wantStatus(t, res, probeapi.StatusUp)
	json.Unmarshal(res.Details, &d)
	if d.ProtocolVersion != "2025-06-18" {
		t.Fatalf("negotiated %q", d.ProtocolVersion)
	}

	noKey := base(monv1.MCPConfig{})
	noKey.Config.MCP.Headers = nil
	wantStatus(t, run(t, noKey, env), probeapi.StatusDown)

	wantStatus(t, run(t, base(monv1.MCPConfig{}), &Env{RootCAs: env.RootCAs}), probeapi.StatusBlocked)
}

// TestMCPRequestsAndLimits checks what an MCP check sends (User-Agent and
// region header like HTTP checks) and that an endless response fails it.
func TestMCPRequestsAndLimits(t *testing.T) {
	seen := make(chan http.Header, 10)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case seen <- r.Header.Clone():
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		// An initialize answer that never ends.
		chunk := []byte(strings.Repeat(" ", 64<<10))
		for range (maxMCPResponseBytes / len(chunk)) + 2 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer ts.Close()
	env := testEnv()
	env.Region = "eu-west"
	a := probeapi.Assignment{Type: probeapi.TypeMCP, URL: ts.URL + "/mcp", TimeoutMs: 5000}
	res := run(t, a, env)
	wantStatus(t, res, probeapi.StatusDown)
	if !strings.Contains(res.ErrorMessage, "larger than") {
		t.Fatalf("error %q, want the size bound", res.ErrorMessage)
	}
	h := <-seen
	if h.Get(RegionHeader) != "eu-west" || h.Get("User-Agent") != userAgent {
		t.Fatalf("headers sent: region %q, user agent %q", h.Get(RegionHeader), h.Get("User-Agent"))
	}
}
