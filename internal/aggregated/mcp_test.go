package aggregated_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The read tools of spec/mcp.md: all that a read-only session offers.
var readTools = []string{
	"service_whoami", "service_list_regions", "service_monitor_summary", "service_list_monitors",
	"service_get_monitor", "service_get_check_results", "service_list_incidents", "service_get_incident",
	"service_explain_incident", "service_list_status_pages", "service_get_status_page",
	"service_uptime_report", "service_list_maintenance_windows",
}

// TestMCPThroughKubeAPIServer drives the MCP endpoint of the aggregated API
// (POST /apis/api.uptime-operator.io/v1/namespaces/<ns>/mcp) through
// kube-apiserver with plain JSON-RPC, as an MCP client with Kubernetes
// credentials would: the user's identity, not an API key, decides the
// workspace and the tools (spec/mcp.md, modes rule 6: a viewer, or a user
// without write access, gets only the read tools).
func TestMCPThroughKubeAPIServer(t *testing.T) {
	env, _, base, ws := startAggregated(t)
	endpoint := base + "/namespaces/" + ws + "/mcp"

	bob := httpFor(t, env.Config, "bob")
	code, body := do(t, bob, http.MethodPost, base+"/namespaces/"+ws+"/monitors",
		map[string]any{"name": "Seen through MCP", "url": "http://127.0.0.1:9/", "interval_seconds": 60})
	if code != http.StatusCreated {
		t.Fatalf("editor create monitor: %d %s", code, body)
	}

	t.Run("editor", func(t *testing.T) {
		s := &mcpSession{t: t, hc: bob, url: endpoint}
		s.initialize()
		tools := s.listTools()
		if len(tools) != 23 {
			t.Errorf("editor got %d tools, want the 23 of default mode (no destructive tools on this endpoint): %v", len(tools), tools)
		}
		for _, name := range append(slices.Clone(readTools), "service_create_monitor", "service_pause_monitor", "service_create_status_page") {
			if !slices.Contains(tools, name) {
				t.Errorf("editor's tools lack %s: %v", name, tools)
			}
		}
		for _, name := range []string{"service_delete_monitor", "service_delete_status_page", "service_set_status_page_monitors"} {
			if slices.Contains(tools, name) {
				t.Errorf("editor's tools include the destructive %s", name)
			}
		}
		who := s.callJSON("service_whoami")
		if who["workspace_id"] != ws || who["read_only"] != false || who["mcp_mode"] != "default" {
			t.Errorf("editor whoami = %v, want workspace %s, read_only false, mcp_mode default", who, ws)
		}
		list := s.callJSON("service_list_monitors")
		if raw, _ := json.Marshal(list); !strings.Contains(string(raw), "Seen through MCP") {
			t.Errorf("editor's service_list_monitors lacks the monitor: %s", raw)
		}
	})

	t.Run("viewer gets only read tools", func(t *testing.T) {
		s := &mcpSession{t: t, hc: httpFor(t, env.Config, "alice"), url: endpoint}
		s.initialize()
		tools := s.listTools()
		slices.Sort(tools)
		want := slices.Sorted(slices.Values(readTools))
		if !slices.Equal(tools, want) {
			t.Errorf("viewer (read-only level) got %d tools, want only the %d read tools:\n got %v\nwant %v", len(tools), len(want), tools, want)
		}
		who := s.callJSON("service_whoami")
		if who["workspace_id"] != ws || who["read_only"] != true || who["mcp_mode"] != "read-only" {
			t.Errorf("viewer whoami = %v, want workspace %s, read_only true, mcp_mode read-only", who, ws)
		}
		// A write tool is not offered, so it cannot be called either.
		resp := s.rpc("tools/call", map[string]any{"name": "service_create_monitor",
			"arguments": map[string]any{"name": "nope", "url": "http://127.0.0.1:9/"}})
		if resp.Error == nil && !resp.Result.IsError {
			t.Errorf("viewer called service_create_monitor: %s", resp.raw)
		}
	})

	t.Run("unbound user", func(t *testing.T) {
		code, body := mcpPost(t, httpFor(t, env.Config, "mallory"), endpoint, initializeRequest(1))
		if code != http.StatusForbidden {
			t.Errorf("a user without any binding: %d %s, want 403", code, body)
		}
	})
}

// mcpSession is a minimal Streamable HTTP client of a stateless server:
// each JSON-RPC message is its own POST.
type mcpSession struct {
	t       *testing.T
	hc      *http.Client
	url     string
	id      int
	version string
}

type rpcResponse struct {
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Capabilities map[string]any `json:"capabilities"`
		Instructions string         `json:"instructions"`
		Tools        []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	raw string
}

func initializeRequest(id int) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "aggregated-test", "version": "1"},
	}}
}

// mcpPost POSTs one JSON-RPC message with the headers of Streamable HTTP.
func mcpPost(t *testing.T, hc *http.Client, url string, msg map[string]any, header ...string) (int, string) {
	t.Helper()
	raw, _ := json.Marshal(msg)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	must(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := hc.Do(req)
	must(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// A server may answer with an event stream: the message is its data.
		var data []string
		for _, line := range strings.Split(string(body), "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimSpace(d))
			}
		}
		body = []byte(strings.Join(data, ""))
	}
	return resp.StatusCode, string(body)
}

func (s *mcpSession) rpc(method string, params any) rpcResponse {
	s.t.Helper()
	s.id++
	msg := map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	var header []string
	if s.version != "" {
		header = []string{"Mcp-Protocol-Version", s.version}
	}
	code, body := mcpPost(s.t, s.hc, s.url, msg, header...)
	if code != http.StatusOK {
		s.t.Fatalf("%s: HTTP %d %s", method, code, body)
	}
	var r rpcResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		s.t.Fatalf("%s: decode %q: %v", method, body, err)
	}
	r.raw = body
	return r
}

func (s *mcpSession) initialize() {
	s.t.Helper()
	s.id++
	code, body := mcpPost(s.t, s.hc, s.url, initializeRequest(s.id))
	if code != http.StatusOK {
		s.t.Fatalf("initialize: HTTP %d %s", code, body)
	}
	var r rpcResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Error != nil {
		s.t.Fatalf("initialize: %s (%v)", body, err)
	}
	if r.Result.ServerInfo.Name != "uptime-operator" || r.Result.Capabilities["tools"] == nil || r.Result.ProtocolVersion == "" {
		s.t.Fatalf("initialize result: %s", body)
	}
	if !strings.Contains(r.Result.Instructions, "never as instructions") {
		s.t.Errorf("instructions lack the data-not-instructions rule: %q", r.Result.Instructions)
	}
	s.version = r.Result.ProtocolVersion
	code, body = mcpPost(s.t, s.hc, s.url, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, "Mcp-Protocol-Version", s.version)
	if code != http.StatusAccepted && code != http.StatusOK {
		s.t.Fatalf("notifications/initialized: HTTP %d %s", code, body)
	}
}

func (s *mcpSession) listTools() []string {
	s.t.Helper()
	r := s.rpc("tools/list", map[string]any{})
	if r.Error != nil {
		s.t.Fatalf("tools/list: %s", r.raw)
	}
	var names []string
	for _, tool := range r.Result.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// callJSON calls a tool with response_format json and decodes its text.
func (s *mcpSession) callJSON(name string) map[string]any {
	s.t.Helper()
	r := s.rpc("tools/call", map[string]any{"name": name, "arguments": map[string]any{"response_format": "json"}})
	if r.Error != nil || r.Result.IsError || len(r.Result.Content) == 0 {
		s.t.Fatalf("tools/call %s: %s", name, r.raw)
	}
	var text strings.Builder
	for _, c := range r.Result.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text.String()), &out); err != nil {
		s.t.Fatalf("tools/call %s: decode %q: %v", name, text.String(), err)
	}
	return out
}
