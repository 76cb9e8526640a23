package public

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/engine"
)

// pings records the pings of the one cron monitor whose token is "tok-1",
// answering engine.ErrUnknownToken for any other token as the engine does.
type pings struct{ got []engine.Ping }

func (p *pings) HeartbeatByToken(_ context.Context, token string, ping engine.Ping) error {
	if token != "tok-1" {
		return engine.ErrUnknownToken
	}
	p.got = append(p.got, ping)
	return nil
}

// pages records which page endpoint was asked for what.
type pages struct{ calls []string }

func (p *pages) record(w http.ResponseWriter, what string) {
	p.calls = append(p.calls, what)
	w.WriteHeader(http.StatusOK)
}

func (p *pages) ServeStatus(w http.ResponseWriter, _ *http.Request, slug, rest string) {
	p.record(w, "status "+slug+" "+rest)
}
func (p *pages) ServeHTML(w http.ResponseWriter, _ *http.Request, slug string) {
	p.record(w, "html "+slug)
}
func (p *pages) ServeLogin(w http.ResponseWriter, _ *http.Request, slug string) {
	p.record(w, "login "+slug)
}
func (p *pages) ServeSubscribe(w http.ResponseWriter, _ *http.Request, slug string) {
	p.record(w, "subscribe "+slug)
}
func (p *pages) ServeConfirm(w http.ResponseWriter, _ *http.Request, slug string) {
	p.record(w, "confirm "+slug)
}
func (p *pages) ServeUnsubscribe(w http.ResponseWriter, _ *http.Request, slug string) {
	p.record(w, "unsubscribe "+slug)
}
func (p *pages) ServeLogout(w http.ResponseWriter, _ *http.Request, slug string) {
	p.record(w, "logout "+slug)
}
func (p *pages) ServeSSOStart(w http.ResponseWriter, _ *http.Request, slug string) {
	p.record(w, "sso "+slug)
}
func (p *pages) ServeSSOCallback(w http.ResponseWriter, _ *http.Request) {
	p.record(w, "sso-callback")
}

// call sends an anonymous request from addr (no caller: these endpoints
// need no key) and checks the answer against the contract.
func call(t *testing.T, f *coretest.Fixture, method, path, addr string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr = addr + ":40000"
	rec := httptest.NewRecorder()
	f.Router.Mux.ServeHTTP(rec, req)
	if err := coretest.CheckAnswer(req, rec); err != nil {
		t.Error(err)
	}
	return rec
}

func TestHeartbeat(t *testing.T) {
	f := coretest.New(t)
	rec := &pings{}
	New(f.Clock, rec, nil).Routes(f.Router)

	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodHead} {
		r := call(t, f, m, "/heartbeat/tok-1", "192.0.2.1")
		if r.Code != 200 || r.Header().Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: %d %v", m, r.Code, r.Header())
		}
		if want := map[bool]string{true: "", false: "OK"}[m == http.MethodHead]; r.Body.String() != want {
			t.Fatalf("%s body %q, want %q", m, r.Body, want)
		}
	}
	call(t, f, "GET", "/heartbeat/tok-1?status=FAILED&duration_ms=1500.4", "192.0.2.1")
	if len(rec.got) != 4 || !rec.got[0].OK || rec.got[3].OK || rec.got[3].DurationMs == nil || *rec.got[3].DurationMs != 1500 ||
		!rec.got[3].At.Equal(f.Clock.Now()) {
		t.Fatalf("pings = %+v", rec.got)
	}

	for q, field := range map[string]string{"status=maybe": "status", "duration_ms=-1": "duration_ms", "duration_ms=NaN": "duration_ms", "duration_ms=604800001": "duration_ms"} {
		r := call(t, f, "GET", "/heartbeat/tok-1?"+q, "192.0.2.1")
		body := coretest.Expect(t, r, 400, q)
		if body["code"] != core.CodeValidation || body["errors"].([]any)[0].(map[string]any)["field"] != field {
			t.Fatalf("%s = %v", q, body)
		}
	}
	if len(rec.got) != 4 {
		t.Fatalf("a refused ping was recorded: %+v", rec.got)
	}
	if body := coretest.Expect(t, call(t, f, "GET", "/heartbeat/nope", "192.0.2.1"), 404, "unknown token"); body["code"] != core.CodeNotFound {
		t.Fatalf("unknown token = %v", body)
	}
}

// TestHeartbeatLimits: one heartbeat URL takes 60 pings a minute, and an
// address that keeps failing (bad tokens, bad parameters) is refused
// before its pings are looked at.
func TestHeartbeatLimits(t *testing.T) {
	f := coretest.New(t)
	New(f.Clock, &pings{}, nil).Routes(f.Router)
	for i := range 60 {
		if r := call(t, f, "GET", "/heartbeat/tok-1", "192.0.2.1"); r.Code != 200 {
			t.Fatalf("ping %d: %d", i+1, r.Code)
		}
	}
	over := call(t, f, "GET", "/heartbeat/tok-1", "192.0.2.2")
	if over.Code != http.StatusTooManyRequests || over.Header().Get("Retry-After") == "" {
		t.Fatalf("61st ping: %d %v", over.Code, over.Header())
	}
	if r := call(t, f, "GET", "/heartbeat/tok-2", "192.0.2.2"); r.Code != 404 {
		t.Fatalf("another URL is limited on its own: %d", r.Code)
	}

	g := coretest.New(t)
	New(g.Clock, &pings{}, nil).Routes(g.Router)
	for i := range 600 {
		if r := call(t, g, "GET", "/heartbeat/bad-"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+"?status=maybe", "198.51.100.7"); r.Code != 400 {
			t.Fatalf("failure %d: %d", i+1, r.Code)
		}
	}
	if r := call(t, g, "GET", "/heartbeat/tok-1", "198.51.100.7"); r.Code != http.StatusTooManyRequests {
		t.Fatalf("after 600 failures: %d", r.Code)
	}
	if r := call(t, g, "GET", "/heartbeat/tok-1", "198.51.100.8"); r.Code != 200 {
		t.Fatalf("another address: %d", r.Code)
	}
}

func TestWithoutServices(t *testing.T) {
	f := coretest.New(t)
	New(f.Clock, nil, nil).Routes(f.Router)
	// Not checked against the contract: docs/openapi.json lists no 503 for
	// heartbeats, as the manager always wires the engine.
	req := httptest.NewRequest("GET", "/heartbeat/tok-1", nil)
	rec := httptest.NewRecorder()
	f.Router.Mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || coretest.Decode(t, rec)["code"] != core.CodeInternal {
		t.Fatalf("heartbeat without engine: %d %s", rec.Code, rec.Body)
	}
	for _, p := range []string{"/status/acme", "/s/acme"} {
		if r := call(t, f, "GET", p, "192.0.2.1"); r.Code != 404 {
			t.Fatalf("%s without pages: %d", p, r.Code)
		}
	}
}

// TestStatusPages: the pages are served by the Status service for the
// known sub-paths only, under 60 requests a minute per address with the
// rate-limit headers.
func TestStatusPages(t *testing.T) {
	f := coretest.New(t)
	p := &pages{}
	New(f.Clock, nil, p).Routes(f.Router)
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/status/acme", "status acme "},
		{"GET", "/status/acme/badge.svg", "status acme badge.svg"},
		{"GET", "/s/acme", "html acme"},
		{"POST", "/s/acme/login", "login acme"},
		{"POST", "/s/acme/subscribe", "subscribe acme"},
		{"GET", "/s/acme/confirm", "confirm acme"},
		{"POST", "/s/acme/unsubscribe", "unsubscribe acme"},
		{"POST", "/s/acme/logout", "logout acme"},
		{"GET", "/s/acme/sso", "sso acme"},
		{"GET", "/sso/callback?code=c&state=s", "sso-callback"},
	} {
		r := call(t, f, c.method, c.path, "192.0.2.1")
		if r.Code != 200 || p.calls[len(p.calls)-1] != c.want || r.Header().Get("RateLimit-Limit") != "60" {
			t.Fatalf("%s %s: %d %v, calls %v", c.method, c.path, r.Code, r.Header(), p.calls)
		}
	}
	n := len(p.calls)
	for _, path := range []string{"/status/acme/admin", "/status/pages"} {
		if r := call(t, f, "GET", path, "192.0.2.1"); r.Code != 404 {
			t.Fatalf("%s: %d", path, r.Code)
		}
	}
	if len(p.calls) != n {
		t.Fatalf("refused paths reached the pages: %v", p.calls[n:])
	}
	for i := n; i < 60; i++ {
		call(t, f, "GET", "/s/acme", "192.0.2.1")
	}
	if r := call(t, f, "GET", "/s/acme", "192.0.2.1"); r.Code != http.StatusTooManyRequests {
		t.Fatalf("61st page request: %d", r.Code)
	}
	if r := call(t, f, "GET", "/s/acme", "192.0.2.9"); r.Code != 200 {
		t.Fatalf("another address: %d", r.Code)
	}
}
