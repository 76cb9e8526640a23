package probes

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// wsServer is a real WebSocket server: /echo echoes every message,
// /json answers {"status":"ok","count":3}, /silent reads and never
// answers, /close closes with 1008 "go away" after the first message,
// /drop drops the TCP connection after the first message, /auth needs
// "Authorization: Bearer s3cret", /http answers plain 200, /redirect
// redirects to /echo. Upgrades counts opening handshakes.
type wsServer struct {
	*httptest.Server
	Upgrades atomic.Int64
}

func (s *wsServer) url(path string) string { return "ws" + strings.TrimPrefix(s.URL, "http") + path }

func wsHandler(s *wsServer) http.Handler {
	accept := func(w http.ResponseWriter, r *http.Request) *websocket.Conn {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"health.v1"}})
		if err != nil {
			return nil
		}
		s.Upgrades.Add(1)
		return c
	}
	mux := http.NewServeMux()
	echo := func(w http.ResponseWriter, r *http.Request) {
		c := accept(w, r)
		if c == nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, msg, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if err := c.Write(r.Context(), typ, msg); err != nil {
				return
			}
		}
	}
	mux.HandleFunc("/echo", echo)
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		c := accept(w, r)
		if c == nil {
			return
		}
		defer c.CloseNow()
		if _, _, err := c.Read(r.Context()); err != nil {
			return
		}
		_ = c.Write(r.Context(), websocket.MessageText, []byte(`{"status":"ok","count":3}`))
		_, _, _ = c.Read(r.Context())
	})
	mux.HandleFunc("/silent", func(w http.ResponseWriter, r *http.Request) {
		c := accept(w, r)
		if c == nil {
			return
		}
		defer c.CloseNow()
		for {
			if _, _, err := c.Read(r.Context()); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		c := accept(w, r)
		if c == nil {
			return
		}
		if _, _, err := c.Read(r.Context()); err != nil {
			return
		}
		_ = c.Close(websocket.StatusPolicyViolation, "go away")
	})
	mux.HandleFunc("/drop", func(w http.ResponseWriter, r *http.Request) {
		c := accept(w, r)
		if c == nil {
			return
		}
		_, _, _ = c.Read(r.Context())
		_ = c.CloseNow()
	})
	mux.HandleFunc("/auth", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		echo(w, r)
	})
	mux.HandleFunc("/http", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("plain")) })
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/echo", http.StatusFound)
	})
	return mux
}

func startWS(t testing.TB) *wsServer {
	t.Helper()
	s := &wsServer{}
	s.Server = httptest.NewServer(wsHandler(s))
	t.Cleanup(s.Close)
	return s
}

// runWS runs one websocket check with the given timeout.
func runWS(t *testing.T, env *Env, p wsParams, timeout time.Duration) probeapi.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if p.MaxRedirects == 0 {
		p.MaxRedirects = defaultMaxRedirects
	}
	return probeWebSocket(ctx, env, &p)
}

func TestWebSocket(t *testing.T) {
	srv := startWS(t)
	env := testEnv()
	for _, c := range []struct {
		name    string
		p       wsParams
		timeout time.Duration
		status  probeapi.Status
		errType string
		msg     string
		details string
	}{
		{name: "connect only", p: wsParams{URL: srv.url("/echo")}, status: probeapi.StatusUp},
		{name: "subprotocol", p: wsParams{URL: srv.url("/echo"), Subprotocols: []string{"health.v1"}}, status: probeapi.StatusUp,
			details: `"subprotocol":"health.v1"`},
		{name: "echo", p: wsParams{URL: srv.url("/echo"), Message: "ping 42", ExpectedReply: "42"}, status: probeapi.StatusUp,
			details: `"reply_bytes":7`},
		{name: "echo mismatch", p: wsParams{URL: srv.url("/echo"), Message: "ping", ExpectedReply: "pong"},
			status: probeapi.StatusDown, errType: probeapi.ErrorResponseMismatch, msg: `"pong"`},
		{name: "json path", p: wsParams{URL: srv.url("/json"), Message: "status?", Assertions: []monv1.Assertion{
			{Source: probeapi.SourceJSONBody, Property: "$.status", Operator: probeapi.OpEquals, Target: "ok"},
			{Source: probeapi.SourceJSONBody, Property: "$.count", Operator: probeapi.OpGreaterOrEqual, Target: "3"},
			{Source: probeapi.SourceStatusCode, Operator: probeapi.OpEquals, Target: "101"},
		}}, status: probeapi.StatusUp, details: `"passed":true`},
		{name: "json path fails", p: wsParams{URL: srv.url("/json"), Message: "status?", Assertions: []monv1.Assertion{
			{Source: probeapi.SourceJSONBody, Property: "$.count", Operator: probeapi.OpGreaterThan, Target: "5"},
		}}, status: probeapi.StatusDown, errType: probeapi.ErrorAssertion, msg: "assertion 1"},
		{name: "no reply", p: wsParams{URL: srv.url("/silent"), Message: "anyone?"}, timeout: 500 * time.Millisecond,
			status: probeapi.StatusDown, errType: probeapi.ErrorNoResponse, msg: "no reply before the timeout"},
		{name: "closed", p: wsParams{URL: srv.url("/close"), Message: "hello"},
			status: probeapi.StatusDown, errType: ErrorClosed, msg: "go away", details: `"close_code":1008`},
		{name: "dropped", p: wsParams{URL: srv.url("/drop"), Message: "hello"},
			status: probeapi.StatusDown, errType: probeapi.ErrorConnection},
		{name: "not a websocket", p: wsParams{URL: srv.url("/http")},
			status: probeapi.StatusDown, errType: probeapi.ErrorHTTPStatus, msg: "answered 200"},
		{name: "header from a secret", p: wsParams{URL: srv.url("/auth"), Headers: map[string]string{"Authorization": "Bearer s3cret"}, Message: "x", ExpectedReply: "x"},
			status: probeapi.StatusUp},
		{name: "missing header", p: wsParams{URL: srv.url("/auth")},
			status: probeapi.StatusDown, errType: probeapi.ErrorHTTPStatus, msg: "answered 401"},
		{name: "redirect", p: wsParams{URL: srv.url("/redirect"), Message: "hop", ExpectedReply: "hop"}, status: probeapi.StatusUp,
			details: `"redirects":1`},
		{name: "redirect over the limit", p: wsParams{URL: srv.url("/redirect"), MaxRedirects: -1},
			status: probeapi.StatusDown, errType: ErrorRedirects},
		{name: "not ws", p: wsParams{URL: srv.URL + "/echo"},
			status: probeapi.StatusUnknown, errType: probeapi.ErrorInvalidConfig, msg: "ws://"},
	} {
		t.Run(c.name, func(t *testing.T) {
			timeout := c.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			if c.p.MaxRedirects < 0 {
				c.p.MaxRedirects = 0
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				res := probeWebSocket(ctx, env, &c.p)
				wantError(t, res, c.status, c.errType, c.msg)
				return
			}
			res := runWS(t, env, c.p, timeout)
			wantError(t, res, c.status, c.errType, c.msg)
			if !strings.Contains(string(res.Details), c.details) {
				t.Errorf("details %s, want %s", res.Details, c.details)
			}
		})
	}
}

// TestWebSocketResponseTime: a reply slower than the thresholds is
// degraded, or down past maxResponseTimeMs.
func TestWebSocketResponseTime(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		typ, msg, err := c.Read(r.Context())
		if err != nil {
			return
		}
		time.Sleep(300 * time.Millisecond)
		_ = c.Write(r.Context(), typ, msg)
		_, _, _ = c.Read(r.Context())
	}))
	defer slow.Close()
	u := "ws" + strings.TrimPrefix(slow.URL, "http")
	res := runWS(t, testEnv(), wsParams{URL: u, Message: "m", DegradedResponseTimeMs: 100}, 5*time.Second)
	wantError(t, res, probeapi.StatusDegraded, probeapi.ErrorResponseTime, "more than 100 ms")
	res = runWS(t, testEnv(), wsParams{URL: u, Message: "m", MaxResponseTimeMs: 100}, 5*time.Second)
	wantError(t, res, probeapi.StatusDown, probeapi.ErrorResponseTime, "more than 100 ms")
}

// TestWebSocketGuard: with private targets not allowed the check is blocked
// and the server never sees a handshake.
func TestWebSocketGuard(t *testing.T) {
	srv := startWS(t)
	res := runWS(t, &Env{Region: "test"}, wsParams{URL: srv.url("/echo"), Message: "x"}, 5*time.Second)
	wantError(t, res, probeapi.StatusBlocked, probeapi.ErrorBlocked, "blocked")
	if n := srv.Upgrades.Load(); n != 0 {
		t.Fatalf("the server upgraded %d connections", n)
	}
}

// TestWebSocketTLSPrivateCA: wss:// to a server whose certificate a private
// CA signed is down with a TLS error on the system roots and up with the
// trusted CA bundle.
func TestWebSocketTLSPrivateCA(t *testing.T) {
	s := &wsServer{}
	srv, caPEM := testutil.PrivateCAServer(t, wsHandler(s))
	u := "wss" + strings.TrimPrefix(srv.URL, "https") + "/echo"
	res := runWS(t, testEnv(), wsParams{URL: u, Message: "x"}, 5*time.Second)
	wantError(t, res, probeapi.StatusDown, probeapi.ErrorTLS, "")
	pool, err := trust.Pool(caPEM)
	if err != nil {
		t.Fatal(err)
	}
	defer trust.Use(pool)()
	res = runWS(t, testEnv(), wsParams{URL: u, Message: "x", ExpectedReply: "x"}, 5*time.Second)
	wantStatus(t, res, probeapi.StatusUp)
	if res.TLS == nil || res.Timings == nil || res.Timings.TLSMs <= 0 {
		t.Errorf("tls %+v timings %+v, want the certificate and the handshake time", res.TLS, res.Timings)
	}
}

// TestWebSocketAssignment runs websocket monitors through Run, as the agent
// does: headers, message, assertions and redirect limit from the config.
func TestWebSocketAssignment(t *testing.T) {
	srv := startWS(t)
	zero := int32(0)
	cfg := &monv1.WebSocketConfig{URL: srv.url("/auth"), Message: `{"op":"ping"}`,
		Headers:    probeapi.TextHeaders(map[string]string{"Authorization": "Bearer s3cret"}),
		Assertions: []monv1.Assertion{{Source: probeapi.SourceJSONBody, Property: "$.op", Operator: probeapi.OpEquals, Target: "ping"}}}
	a := probeapi.Assignment{Type: string(monv1.MonitorWebSocket), TimeoutMs: 5000, Config: monv1.MonitorSpec{WebSocket: cfg}}
	wantStatus(t, run(t, a, testEnv()), probeapi.StatusUp)
	cfg.URL = srv.url("/redirect")
	cfg.MaxRedirects = &zero
	wantError(t, run(t, a, testEnv()), probeapi.StatusDown, ErrorRedirects, "")
	cfg.URL = "https://example.com/"
	wantError(t, run(t, a, testEnv()), probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, "ws://")
}
