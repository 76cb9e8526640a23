package mcpserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/httpjson"
)

type serverKey struct{}

// HTTPHandler is the self-run HTTP server: POST /mcp and GET /health.
func (s *Server) HTTPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/health", s.serveHealth)
	mux.HandleFunc("/mcp", s.serveMCP)
	return mux
}

// Handler returns the hosted MCP endpoint the manager mounts at /mcp on its
// direct listener: destructive tools are never offered, publishing is off,
// and every request must carry its own key (the API URL is the manager's own
// listener). A client may still narrow to read tools with the read-only
// header. Invalid options give a handler that answers 503.
func Handler(opts Options) http.Handler {
	opts.hosted = true
	opts.APIKey = ""
	opts.AllowDestructive, opts.AllowDestructiveHeader = false, false
	s, err := New(opts)
	if err != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			writeJSONError(w, http.StatusServiceUnavailable, "the MCP endpoint is misconfigured: "+err.Error())
		})
	}
	return http.HandlerFunc(s.serveMCP)
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSONError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"status": "ok", "name": "uptime-operator-mcp", "version": s.opts.Version})
}

// serveMCP checks Host, Origin and the credential, picks the request's
// mode, and hands the request to the SDK with a server of that mode.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	if !s.hostAllowed(r.Host) {
		writeJSONError(w, http.StatusForbidden, "Host not allowed")
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !s.originAllowed(origin) {
			writeJSONError(w, http.StatusForbidden, "Origin not allowed")
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "WWW-Authenticate, Mcp-Session-Id")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Protocol-Version, "+HeaderReadOnly+", "+HeaderAllowDestructive)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if s.opts.Identity != nil {
		if id, ok := s.opts.Identity(r); ok {
			mode := s.opts.requestMode(r.Header)
			if id.ReadOnly {
				mode.ReadOnly = true
				mode = mode.normalize()
			}
			sess := &session{srv: s, mode: mode, limit: "user:" + id.ID, http: id.HTTP}
			ctx := context.WithValue(r.Context(), serverKey{}, s.newMCPServer(sess))
			s.sdk.ServeHTTP(w, r.WithContext(ctx))
			return
		}
	}
	key, msg := s.credential(r)
	if key == "" {
		s.challenge(w, msg)
		return
	}
	hc := s.opts.HTTPClient
	if s.opts.CallerHTTP != nil {
		hc = s.opts.CallerHTTP(r)
	}
	if err := s.keys.check(r.Context(), key, &Client{BaseURL: s.opts.APIURL, Key: key, HTTP: hc}); err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			s.challenge(w, "invalid credential: "+ae.Message)
			return
		}
		writeJSONError(w, http.StatusBadGateway, "could not verify the credential with the monitoring API: "+err.Error())
		return
	}
	sess := &session{srv: s, key: key, mode: s.opts.requestMode(r.Header), limit: limitKey(key), http: hc}
	ctx := context.WithValue(r.Context(), serverKey{}, s.newMCPServer(sess))
	s.sdk.ServeHTTP(w, r.WithContext(ctx))
}

// credential is the key of a request: its bearer token, or the
// environment's key for a request without Authorization on a loopback
// listener. An Authorization header that is not a bearer credential is
// refused, never replaced by the environment's key.
func (s *Server) credential(r *http.Request) (key, problem string) {
	h := r.Header.Get("Authorization")
	if h == "" {
		if s.envKeyUsable() {
			return s.opts.APIKey, ""
		}
		return "", "no credential: send Authorization: Bearer <API_KEY>"
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || strings.ContainsAny(tok, " \t") {
		return "", "invalid Authorization header: expected Bearer <API_KEY>"
	}
	return tok, ""
}

// envKeyUsable reports whether the environment's key stands in for a
// missing Authorization header: only on a self-run server listening on
// loopback.
func (s *Server) envKeyUsable() bool {
	return !s.opts.hosted && s.opts.APIKey != "" && s.listensOnLoopback()
}

func (s *Server) listensOnLoopback() bool {
	h := s.opts.ListenHost
	if h == "" {
		h = "127.0.0.1"
	}
	return isLoopbackHost(h)
}

// challenge answers 401 with a Bearer challenge and a JSON error.
func (s *Server) challenge(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="uptime-operator", error="invalid_token", error_description="`+strings.ReplaceAll(msg, `"`, `'`)+`"`)
	httpjson.Write(w, http.StatusUnauthorized, map[string]string{"error": msg, "code": "UNAUTHORIZED"})
}

// hostAllowed applies the DNS-rebinding rules: on loopback only loopback
// Host values (or listed ones); elsewhere the MCP_ALLOWED_HOSTS list when
// set. The hosted endpoint leaves Host to the manager.
func (s *Server) hostAllowed(hostport string) bool {
	if s.opts.hosted {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	for _, a := range s.opts.AllowedHosts {
		a = strings.TrimSpace(a)
		if strings.EqualFold(a, hostport) || strings.EqualFold(a, host) {
			return true
		}
	}
	if s.listensOnLoopback() {
		return isLoopbackHost(host)
	}
	return len(s.opts.AllowedHosts) == 0 || isLoopbackHost(host)
}

// originAllowed accepts loopback origins and those in MCP_ALLOWED_ORIGINS.
func (s *Server) originAllowed(origin string) bool {
	o := strings.TrimSuffix(strings.TrimSpace(origin), "/")
	for _, a := range s.opts.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(strings.TrimSpace(a), "/"), o) {
			return true
		}
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	httpjson.Write(w, status, map[string]string{"error": msg})
}

// keyCache remembers credentials the API accepted, for a minute, so a
// session of many requests costs one whoami per minute.
type keyCache struct {
	now func() time.Time
	mu  sync.Mutex
	ok  map[string]time.Time
}

const keyCacheTTL = time.Minute

func newKeyCache(now func() time.Time) *keyCache {
	return &keyCache{now: now, ok: map[string]time.Time{}}
}

// check verifies key with GET /automation/whoami unless it was accepted
// within the last minute.
func (k *keyCache) check(ctx context.Context, key string, c *Client) error {
	id := limitKey(key)
	k.mu.Lock()
	exp, hit := k.ok[id]
	k.mu.Unlock()
	now := k.now()
	if hit && now.Before(exp) {
		return nil
	}
	if err := c.Get(ctx, "/automation/whoami", nil, nil); err != nil {
		var ae *APIError
		// Only a 401 says the credential is bad; other refusals (a plan or
		// access rule, a rate limit) still mean the key exists.
		if !errors.As(err, &ae) || ae.Status == http.StatusUnauthorized || ae.Status >= 500 {
			return err
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.ok) > 10000 {
		for id, e := range k.ok {
			if now.After(e) {
				delete(k.ok, id)
			}
		}
	}
	k.ok[id] = now.Add(keyCacheTTL)
	return nil
}
