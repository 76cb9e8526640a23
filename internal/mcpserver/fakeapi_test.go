package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/uptime-operator/uptime-operator/internal/httpjson"
)

// fakeAPI is a small loopback REST API with the documented shapes, for
// tests of the tool server's own logic (modes, limits, redaction, refusals).
// The integration test runs against the real manager.
type fakeAPI struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	bodies   map[string]map[string]any
	calls    []string
	monitors map[string]map[string]any
	pages    map[string]map[string]any
}

var goodKeys = map[string]bool{"sk_good": true, "sk_env": true, "sk_other": true}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{t: t, bodies: map[string]map[string]any{},
		monitors: map[string]map[string]any{
			"m1": {"id": "m1", "name": "Shop API", "type": "http", "url": "https://user:hunter2@shop.example.com/health", "interval_seconds": 60,
				"is_active": true, "current_status": "up", "tags": []any{}, "regions": []any{},
				"config": map[string]any{"method": "GET", "headers": map[string]any{"Authorization": "Bearer s3cret", "Accept": "application/json"}, "timeout": 5000}},
			"m2": {"id": "m2", "name": "Paused job", "type": "http", "url": "https://job.example.com", "interval_seconds": 60, "is_active": false, "current_status": "paused", "config": map[string]any{}},
		},
		pages: map[string]map[string]any{
			"p-public":  {"id": "p-public", "title": "Public", "slug": "public", "is_public": true, "monitors": []any{}},
			"p-private": {"id": "p-private", "title": "Private", "slug": "private", "is_public": false, "monitors": []any{}},
		},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /automation/whoami", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Write(w, 200, map[string]any{"workspace_id": "team", "auth_type": "api_key", "api_key_access": "standard", "plan": "pro",
			"limits": map[string]any{"monitors": 50, "min_interval_seconds": 30}})
	})
	mux.HandleFunc("GET /monitors", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		out := []any{}
		for _, id := range []string{"m1", "m2"} {
			out = append(out, f.monitors[id])
		}
		httpjson.Write(w, 200, out)
	})
	mux.HandleFunc("GET /monitors/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		m := f.monitors[r.PathValue("id")]
		if m == nil {
			httpjson.Write(w, 404, map[string]any{"error": "Monitor not found", "code": "NOT_FOUND"})
			return
		}
		httpjson.Write(w, 200, m)
	})
	mux.HandleFunc("PUT /monitors/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		httpjson.Write(w, 200, f.monitors[r.PathValue("id")])
	})
	for _, action := range []string{"pause", "resume", "run-check"} {
		mux.HandleFunc("POST /monitors/{id}/"+action, func(w http.ResponseWriter, r *http.Request) {
			if r.PathValue("id") == "limited" {
				w.Header().Set("Retry-After", "42")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = io.WriteString(w, "Too many requests, please try again later")
				return
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			httpjson.Write(w, 200, f.monitors[r.PathValue("id")])
		})
	}
	mux.HandleFunc("GET /status/pages/{id}", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Write(w, 200, f.pages[r.PathValue("id")])
	})
	mux.HandleFunc("PATCH /status/pages/{id}", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Write(w, 200, f.pages[r.PathValue("id")])
	})
	mux.HandleFunc("PUT /status/pages/{id}/monitors", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Write(w, 200, f.pages[r.PathValue("id")])
	})
	mux.HandleFunc("POST /status/pages", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Write(w, 201, map[string]any{"id": "p-new", "title": "New", "slug": "new", "is_public": false})
	})
	mux.HandleFunc("POST /incidents/{id}/notes", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Write(w, 201, map[string]any{"id": "n1"})
	})
	mux.HandleFunc("POST /monitors", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Write(w, 403, map[string]any{"error": "Monitor limit reached", "code": "ENTITLEMENT_LIMIT_REACHED",
			"details": map[string]any{"resource": "monitors", "current": 50, "limit": 50}})
	})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !goodKeys[key] {
			httpjson.Write(w, 401, map[string]any{"error": "Invalid API key"})
			return
		}
		f.mu.Lock()
		f.calls = append(f.calls, r.Method+" "+r.URL.Path)
		if r.Body != nil && r.Method != http.MethodGet {
			var b map[string]any
			if json.NewDecoder(r.Body).Decode(&b) == nil {
				f.bodies[r.Method+" "+r.URL.Path] = b
			}
		}
		f.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) body(key string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[key]
}

func (f *fakeAPI) called(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c == key {
			return true
		}
	}
	return false
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	h    http.Header
	base http.RoundTripper
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range t.h {
		r.Header[k] = vs
	}
	return t.base.RoundTrip(r)
}

// connect opens a go-sdk client session to an MCP endpoint with headers.
func connect(t *testing.T, endpoint string, h http.Header) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: &headerTransport{h: h, base: http.DefaultTransport}}}
	cs, err := client.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	slices.Sort(out)
	return out
}

// callTool calls a tool and returns its text and whether it is an error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func bearer(key string) http.Header {
	return http.Header{"Authorization": {"Bearer " + key}}
}
