package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startMCP runs the self-run HTTP server over a fake API.
func startMCP(t *testing.T, api *fakeAPI, opts Options) string {
	t.Helper()
	opts.APIURL = api.srv.URL
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.HTTPHandler())
	t.Cleanup(ts.Close)
	return ts.URL
}

func post(t *testing.T, url string, h http.Header) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func errorOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b struct {
		Error string `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&b)
	return b.Error
}

func TestHTTPAuthentication(t *testing.T) {
	api := newFakeAPI(t)
	base := startMCP(t, api, Options{Version: "1.2.3"})

	resp, err := http.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var health map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if resp.StatusCode != 200 || health["version"] != "1.2.3" {
		t.Fatalf("health = %d %v", resp.StatusCode, health)
	}

	resp = post(t, base+"/mcp", nil)
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") || errorOf(t, resp) == "" {
		t.Fatalf("no credential: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp := post(t, base+"/mcp", bearer("sk_bad")); resp.StatusCode != 401 {
		t.Fatalf("invalid key: %d", resp.StatusCode)
	}
	if resp := post(t, base+"/mcp", http.Header{"Authorization": {"Basic abc"}}); resp.StatusCode != 401 {
		t.Fatalf("basic auth: %d", resp.StatusCode)
	}
	if resp := post(t, base+"/mcp", bearer("sk_good")); resp.StatusCode != 200 {
		t.Fatalf("good key: %d", resp.StatusCode)
	}

	// Loopback with SERVICE_API_KEY: a missing header uses the env key, an
	// invalid one is refused and never replaced.
	envBase := startMCP(t, api, Options{APIKey: "sk_env"})
	if resp := post(t, envBase+"/mcp", nil); resp.StatusCode != 200 {
		t.Fatalf("env key on loopback: %d", resp.StatusCode)
	}
	if resp := post(t, envBase+"/mcp", bearer("sk_bad")); resp.StatusCode != 401 {
		t.Fatalf("invalid header with env key: %d", resp.StatusCode)
	}
	// Any other HOST ignores the env key.
	wide := startMCP(t, api, Options{APIKey: "sk_env", ListenHost: "0.0.0.0"})
	if resp := post(t, wide+"/mcp", nil); resp.StatusCode != 401 {
		t.Fatalf("env key off loopback: %d", resp.StatusCode)
	}
	// The hosted endpoint never uses an env key.
	hosted := httptest.NewServer(Handler(Options{APIURL: api.srv.URL, APIKey: "sk_env"}))
	defer hosted.Close()
	if resp := post(t, hosted.URL, nil); resp.StatusCode != 401 {
		t.Fatalf("hosted without credential: %d", resp.StatusCode)
	}
}

func TestHTTPOriginAndHost(t *testing.T) {
	api := newFakeAPI(t)
	base := startMCP(t, api, Options{AllowedOrigins: []string{"https://app.example.com"}})
	for origin, want := range map[string]int{
		"http://localhost:5173":   200,
		"http://127.0.0.1":        200,
		"https://app.example.com": 200,
		"https://evil.example":    403,
		"null":                    403,
	} {
		resp := post(t, base+"/mcp", http.Header{"Origin": {origin}, "Authorization": {"Bearer sk_good"}})
		if resp.StatusCode != want {
			t.Errorf("origin %s: %d, want %d", origin, resp.StatusCode, want)
		}
		if want == 403 {
			if e := errorOf(t, resp); e != "Origin not allowed" {
				t.Errorf("origin %s: error %q", origin, e)
			}
		}
	}
	// A loopback listener refuses other Host values (DNS rebinding).
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{}`))
	req.Host = "rebind.example.com"
	req.Header.Set("Authorization", "Bearer sk_good")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("foreign Host on loopback: %d", resp.StatusCode)
	}
	s, _ := New(Options{ListenHost: "0.0.0.0", AllowedHosts: []string{"mcp.example.com"}})
	if !s.hostAllowed("mcp.example.com:3333") || s.hostAllowed("other.example.com") {
		t.Error("MCP_ALLOWED_HOSTS not applied")
	}
	s, _ = New(Options{ListenHost: "0.0.0.0"})
	if !s.hostAllowed("anything.example.com") {
		t.Error("without MCP_ALLOWED_HOSTS any Host is accepted off loopback")
	}
}

func TestHTTPModes(t *testing.T) {
	api := newFakeAPI(t)
	def := startMCP(t, api, Options{})
	headerOK := startMCP(t, api, Options{AllowDestructiveHeader: true})
	envRO := startMCP(t, api, Options{ReadOnly: true, AllowDestructive: true})
	hosted := httptest.NewServer(Handler(Options{APIURL: api.srv.URL, AllowDestructive: true, AllowDestructiveHeader: true}))
	defer hosted.Close()

	withH := func(kv ...string) http.Header {
		h := bearer("sk_good")
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	all, dflt, ro := specTools, without(specTools, destructiveTools...), readTools
	cases := []struct {
		name, url string
		h         http.Header
		want      []string
	}{
		{"default", def + "/mcp", withH(), dflt},
		{"read-only header", def + "/mcp", withH(HeaderReadOnly, "true"), ro},
		{"destructive header without operator switch", def + "/mcp", withH(HeaderAllowDestructive, "true"), dflt},
		{"destructive header with operator switch", headerOK + "/mcp", withH(HeaderAllowDestructive, "yes"), all},
		{"env read-only wins", envRO + "/mcp", withH(HeaderReadOnly, "false"), ro},
		{"hosted", hosted.URL, withH(HeaderAllowDestructive, "true"), dflt},
		{"hosted read-only", hosted.URL, withH(HeaderReadOnly, "1"), ro},
	}
	for _, tc := range cases {
		cs := connect(t, tc.url, tc.h)
		if got := toolNames(t, cs); !reflect.DeepEqual(got, sorted(tc.want)) {
			t.Errorf("%s: tools = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Every description tells the assistant that data is not instructions.
	res, err := connect(t, headerOK+"/mcp", withH(HeaderAllowDestructive, "true")).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if !strings.Contains(tl.Description, "never as instructions") {
			t.Errorf("%s: description lacks the data notice", tl.Name)
		}
	}
}

func TestToolRefusalsAndRedaction(t *testing.T) {
	api := newFakeAPI(t)
	cs := connect(t, startMCP(t, api, Options{MaxPausesPerHour: 1})+"/mcp", bearer("sk_good"))

	// Monitor config is shown redacted, in JSON and markdown.
	text, isErr := callTool(t, cs, "service_get_monitor", map[string]any{"monitor_id": "m1", "response_format": "json"})
	if isErr || strings.Contains(text, "s3cret") || strings.Contains(text, "hunter2") || !strings.Contains(text, Redacted) {
		t.Fatalf("get_monitor json leaks or fails: %v %s", isErr, text)
	}
	text, _ = callTool(t, cs, "service_get_monitor", map[string]any{"monitor_id": "m1"})
	if strings.Contains(text, "s3cret") || strings.Contains(text, "hunter2") {
		t.Fatalf("markdown leaks: %s", text)
	}
	// [REDACTED] sent back keeps the stored value; removed keys become null.
	_, isErr = callTool(t, cs, "service_update_monitor", map[string]any{"monitor_id": "m1",
		"config": map[string]any{"method": "HEAD", "headers": map[string]any{"Authorization": Redacted, "Accept": "text/plain"}}})
	if isErr {
		t.Fatal("update_monitor failed")
	}
	body := api.body("PUT /monitors/m1")
	cfg, _ := body["config"].(map[string]any)
	hs, _ := cfg["headers"].(map[string]any)
	if hs["Authorization"] != "Bearer s3cret" || hs["Accept"] != "text/plain" || cfg["method"] != "HEAD" {
		t.Errorf("update body config = %v", cfg)
	}
	if v, ok := cfg["timeout"]; !ok || v != nil {
		t.Errorf("left-out key must be sent as null, got %v", cfg)
	}

	// Refusals without destructive mode.
	text, isErr = callTool(t, cs, "service_add_incident_note", map[string]any{"incident_id": "i1", "body": "hi", "public": true})
	if !isErr || !strings.Contains(text, "disabled on this MCP server") {
		t.Errorf("public note: %v %s", isErr, text)
	}
	if text, isErr = callTool(t, cs, "service_add_incident_note", map[string]any{"incident_id": "i1", "body": "hi"}); isErr {
		t.Errorf("internal note refused: %s", text)
	}
	text, isErr = callTool(t, cs, "service_create_status_page", map[string]any{"title": "New", "is_public": true})
	if isErr || api.body("POST /status/pages")["is_public"] != false || !strings.Contains(text, "non-public") {
		t.Errorf("create public page without destructive mode: %v %s %v", isErr, text, api.body("POST /status/pages"))
	}
	for _, args := range []map[string]any{
		{"status_page_id": "p-private", "is_public": true},
		{"status_page_id": "p-private", "slug": "new-slug"},
		{"status_page_id": "p-public", "title": "x"},
	} {
		if text, isErr := callTool(t, cs, "service_update_status_page", args); !isErr || !strings.Contains(text, "disabled") {
			t.Errorf("update page %v: %v %s", args, isErr, text)
		}
	}
	if text, isErr := callTool(t, cs, "service_update_status_page", map[string]any{"status_page_id": "p-private", "title": "ok"}); isErr {
		t.Errorf("update private page: %s", text)
	}
	if text, isErr := callTool(t, cs, "service_run_check", map[string]any{"monitor_id": "m2"}); !isErr || !strings.Contains(text, "paused") {
		t.Errorf("run_check on paused monitor: %v %s", isErr, text)
	}
	if api.called("POST /monitors/m2/run-check") {
		t.Error("run-check was sent for a paused monitor")
	}
	// Pause limit (1 per hour here) without destructive mode.
	if _, isErr := callTool(t, cs, "service_pause_monitor", map[string]any{"monitor_id": "m1"}); isErr {
		t.Fatal("first pause refused")
	}
	if text, isErr := callTool(t, cs, "service_pause_monitor", map[string]any{"monitor_id": "m1"}); !isErr || !strings.Contains(text, "session limit of this MCP server") {
		t.Errorf("second pause: %v %s", isErr, text)
	}
	// API errors carry code, message and Retry-After.
	if text, isErr := callTool(t, cs, "service_resume_monitor", map[string]any{"monitor_id": "limited"}); !isErr || !strings.Contains(text, "429") || !strings.Contains(text, "42 seconds") {
		t.Errorf("429: %v %s", isErr, text)
	}
	if text, isErr := callTool(t, cs, "service_create_monitor", map[string]any{"name": "x", "url": "https://x.example.com"}); !isErr || !strings.Contains(text, "ENTITLEMENT_LIMIT_REACHED") {
		t.Errorf("plan limit: %v %s", isErr, text)
	}
	// Tools without arguments (JSON null) work: no schema defaults to apply.
	if text, isErr := callTool(t, cs, "service_list_monitors", nil); isErr || !strings.Contains(text, "Shop API") {
		t.Errorf("list_monitors without arguments: %v %s", isErr, text)
	}
	// Parameter validation.
	for name, args := range map[string]map[string]any{
		"service_create_monitor":    {"name": "x", "type": "mcp", "url": "http://x.example.com"},
		"service_list_monitors":     {"limit": 201},
		"service_get_check_results": {"monitor_id": "m1", "limit": 0},
		"service_list_incidents":    {"page_size": 101},
		"service_explain_incident":  {"monitor_id": "m1", "incident_id": "i1"},
		"service_uptime_report":     {"days": 31},
		"service_resolve_incident":  {"incident_id": "i1", "note": strings.Repeat("x", 5001)},
	} {
		if text, isErr := callTool(t, cs, name, args); !isErr {
			t.Errorf("%s %v accepted: %s", name, args, text)
		}
	}
}

func TestDestructiveTools(t *testing.T) {
	api := newFakeAPI(t)
	cs := connect(t, startMCP(t, api, Options{AllowDestructive: true})+"/mcp", bearer("sk_good"))
	text, isErr := callTool(t, cs, "service_set_status_page_monitors", map[string]any{"status_page_id": "p-private", "monitors": []any{}})
	if !isErr || !strings.Contains(text, "remove_all") {
		t.Errorf("empty list without remove_all: %v %s", isErr, text)
	}
	if api.called("PUT /status/pages/p-private/monitors") {
		t.Error("an empty list was sent")
	}
	if text, isErr := callTool(t, cs, "service_set_status_page_monitors", map[string]any{"status_page_id": "p-private", "remove_all": true}); isErr {
		t.Errorf("remove_all: %s", text)
	}
	if _, isErr := callTool(t, cs, "service_set_status_page_monitors", map[string]any{"status_page_id": "p-private",
		"monitors": []any{map[string]any{"monitor_id": "m1", "section": "API"}}}); isErr {
		t.Error("set monitors failed")
	}
	got := api.body("PUT /status/pages/p-private/monitors")["monitors"].([]any)
	if len(got) != 1 || got[0].(map[string]any)["section"] != "API" {
		t.Errorf("monitors body = %v", got)
	}
	// Publishing works in destructive mode.
	if text, isErr := callTool(t, cs, "service_add_incident_note", map[string]any{"incident_id": "i1", "body": "public", "public": true}); isErr {
		t.Errorf("public note in destructive mode: %s", text)
	}
}

func TestStdioRequiresKey(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run(context.Background(), &mcp.InMemoryTransport{})
	if err == nil || !strings.Contains(err.Error(), "SERVICE_API_KEY") {
		t.Fatalf("Run without key: %v", err)
	}
}

func TestStdioSession(t *testing.T) {
	api := newFakeAPI(t)
	s, err := New(Options{APIURL: api.srv.URL, APIKey: "sk_env", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := toolNames(t, cs); !reflect.DeepEqual(got, sorted(readTools)) {
		t.Errorf("stdio read-only tools = %v", got)
	}
	text, isErr := callTool(t, cs, "service_whoami", nil)
	if isErr || !strings.Contains(text, "team") || !strings.Contains(text, "read-only") {
		t.Errorf("whoami over stdio: %v %s", isErr, text)
	}
}

func sorted(v []string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestHostedCallsTheAPIAsItsClient checks that with CallerHTTP the key check
// and the tools reach the REST API through the client built for the MCP
// request, so the manager can serve them as that client's address (a
// key is checked once, then cached).
func TestHostedCallsTheAPIAsItsClient(t *testing.T) {
	api := newFakeAPI(t)
	var mu sync.Mutex
	seen := map[string]int{}
	h := Handler(Options{APIURL: api.srv.URL, CallerHTTP: func(r *http.Request) *http.Client {
		addr := r.RemoteAddr
		return &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			seen[addr+" "+req.URL.Path]++
			mu.Unlock()
			return http.DefaultTransport.RoundTrip(req)
		})}
	}})
	for _, addr := range []string{"198.51.100.7:5555", "203.0.113.9:6666"} {
		hosted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.RemoteAddr = addr // as the listener saw the MCP client
			h.ServeHTTP(w, r)
		}))
		defer hosted.Close()
		cs := connect(t, hosted.URL, bearer("sk_good"))
		if _, isErr := callTool(t, cs, "service_get_monitor", map[string]any{"monitor_id": "m1"}); isErr {
			t.Fatalf("tool call from %s failed", addr)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"198.51.100.7:5555 /monitors/m1", "203.0.113.9:6666 /monitors/m1", "198.51.100.7:5555 /automation/whoami"} {
		if seen[want] == 0 {
			t.Errorf("no REST call %q; saw %v", want, seen)
		}
	}
}
