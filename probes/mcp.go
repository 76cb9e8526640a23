package probes

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// maxToolPages bounds tools/list pagination.
const maxToolPages = 10

// mcpDetails is Result.Details of mcp checks.
type mcpDetails struct {
	ProtocolVersion string   `json:"protocol_version"`
	ServerName      string   `json:"server_name,omitempty"`
	ServerVersion   string   `json:"server_version,omitempty"`
	Tools           []string `json:"tools"`
	MissingTools    []string `json:"missing_tools,omitempty"`
	InitializeMs    float64  `json:"initialize_ms"`
	ListToolsMs     float64  `json:"list_tools_ms"`
	ToolCallMs      float64  `json:"tool_call_ms,omitempty"`
	ToolCallError   bool     `json:"tool_call_error,omitempty"`
}

// headerTransport adds the monitor's headers to every request.
// maxMCPResponseBytes bounds each response body of an MCP server; a larger
// one fails the check instead of filling the probe's memory.
const maxMCPResponseBytes = 4 << 20

// mcpTransport sends the probe's User-Agent, region header and the
// monitor's headers with every MCP request, bounds response bodies and
// keeps the first TLS connection state (for certificate expiry).
type mcpTransport struct {
	base    http.RoundTripper
	headers map[string]string
	region  string

	mu  sync.Mutex
	tls *tls.ConnectionState
}

func (h *mcpTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("User-Agent", userAgent)
	if h.region != "" {
		r.Header.Set(RegionHeader, h.region)
	}
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	resp, err := h.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	if h.tls == nil && resp.TLS != nil {
		h.tls = resp.TLS
	}
	h.mu.Unlock()
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: maxMCPResponseBytes}
	return resp, nil
}

// tlsState is the first TLS connection state seen, nil over plain HTTP.
func (h *mcpTransport) tlsState() *tls.ConnectionState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tls
}

// boundedBody fails a read past its limit.
type boundedBody struct {
	io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("response larger than %d bytes", maxMCPResponseBytes)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

func init() { register(checkMCP, monv1.MonitorMCP) }

// checkMCP connects to an MCP server over Streamable HTTP with the official
// SDK: initialize (requesting protocol_version when set), tools/list, and
// optionally one tools/call. Missing expected tools, another negotiated
// protocol version or a tool error make the check down.
func checkMCP(ctx context.Context, a *probeapi.Assignment, env *Env) probeapi.Result {
	cfg := a.Config.MCP
	if cfg == nil {
		cfg = &monv1.MCPConfig{}
	}
	if a.URL == "" {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, errors.New("url is required"))
	}
	hc := newHTTPClient(env, probeapi.EffectiveTimeout(a), 0, nil)
	tr := &mcpTransport{base: hc.Transport, headers: probeapi.HeaderText(cfg.Headers), region: env.Region}
	hc.Transport = tr
	transport := &mcp.StreamableClientTransport{Endpoint: a.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}
	client := mcp.NewClient(&mcp.Implementation{Name: "uptime-operator-probe", Version: "1"}, nil)
	d := mcpDetails{Tools: []string{}}
	start := time.Now()
	fail := func(err error) probeapi.Result {
		res := fromError(err)
		if res.ErrorType == probeapi.ErrorConnection {
			res.ErrorType = probeapi.ErrorMCP
		}
		res.ResponseTimeMs = ms(time.Since(start))
		res.Details = details(d)
		res.TLS = tlsInfo(tr.tlsState())
		return res
	}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: cfg.ProtocolVersion})
	if err != nil {
		return fail(fmt.Errorf("initialize: %w", err))
	}
	defer cs.Close()
	d.InitializeMs = fms(time.Since(start))
	if init := cs.InitializeResult(); init != nil {
		d.ProtocolVersion = init.ProtocolVersion
		if init.ServerInfo != nil {
			d.ServerName, d.ServerVersion = init.ServerInfo.Name, init.ServerInfo.Version
		}
	}
	listStart := time.Now()
	params := &mcp.ListToolsParams{}
	for range maxToolPages {
		lr, err := cs.ListTools(ctx, params)
		if err != nil {
			return fail(fmt.Errorf("list tools: %w", err))
		}
		for _, t := range lr.Tools {
			d.Tools = append(d.Tools, t.Name)
		}
		if lr.NextCursor == "" {
			break
		}
		params = &mcp.ListToolsParams{Cursor: lr.NextCursor}
	}
	d.ListToolsMs = fms(time.Since(listStart))
	slices.Sort(d.Tools)
	for _, want := range cfg.ExpectedTools {
		if !slices.Contains(d.Tools, want) {
			d.MissingTools = append(d.MissingTools, want)
		}
	}
	res := probeapi.Result{Status: probeapi.StatusUp}
	downf := func(format string, args ...any) {
		if res.Status == probeapi.StatusUp {
			res.Status, res.ErrorType, res.ErrorMessage = probeapi.StatusDown, probeapi.ErrorMCP, fmt.Sprintf(format, args...)
		}
	}
	if cfg.ProtocolVersion != "" && d.ProtocolVersion != cfg.ProtocolVersion {
		downf("server negotiated protocol version %q, want %q", d.ProtocolVersion, cfg.ProtocolVersion)
	}
	if len(d.MissingTools) > 0 {
		downf("missing tools: %v", d.MissingTools)
	}
	if tc := cfg.ToolCall; tc != nil && res.Status == probeapi.StatusUp {
		callStart := time.Now()
		p := &mcp.CallToolParams{Name: tc.Name}
		if tc.ArgumentsJSON != "" {
			p.Arguments = json.RawMessage(tc.ArgumentsJSON)
		}
		cr, err := cs.CallTool(ctx, p)
		d.ToolCallMs = fms(time.Since(callStart))
		if err != nil {
			return fail(fmt.Errorf("call tool %s: %w", truncateString(tc.Name, 64), err))
		}
		if cr.IsError {
			d.ToolCallError = true
			downf("tool %s returned an error", truncateString(tc.Name, 64))
		}
	}
	res.ResponseTimeMs = ms(time.Since(start))
	res.Details = details(d)
	res.TLS = tlsInfo(tr.tlsState())
	return res
}
