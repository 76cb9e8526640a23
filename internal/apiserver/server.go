package apiserver

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// Options are the dependencies of the API.
type Options struct {
	// Client reads (from the cache) and writes custom resources.
	Client client.Client
	// Plans resolves a workspace's plan.
	Plans *plans.Resolver
	// Keys finds API keys; a cached reader of API key Secrets.
	Keys client.Reader
}

// Server serves the REST API.
type Server struct {
	opts Options
	mux  *http.ServeMux
}

// New builds the API's routes.
func New(opts Options) *Server {
	s := &Server{opts: opts, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok"))
	})
	s.mux.Handle("GET /automation/whoami", s.authenticated(s.whoami))
	return s
}

// Handler returns the root handler of the direct listener.
func (s *Server) Handler() http.Handler { return s.mux }

// Caller is the authenticated identity of a request.
type Caller struct {
	// Namespace is the workspace the caller acts on.
	Namespace string
	// Level is the access level.
	Level apikeys.Level
	// Key is the API key used, when the caller used one.
	Key *apikeys.Key
}

type callerKey struct{}

// CallerFrom returns the request's caller.
func CallerFrom(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}

// authenticated wraps h with API key authentication: no key is 401 `No token
// provided`, an unknown key 401 `Invalid API key`, a disabled key 401
// API_KEY_DISABLED, and an X-Workspace-Id naming another workspace 403.
func (s *Server) authenticated(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		token, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || strings.TrimSpace(token) == "" {
			writeError(w, http.StatusUnauthorized, "", "No token provided")
			return
		}
		key, err := apikeys.Authenticate(r.Context(), s.opts.Keys, strings.TrimSpace(token))
		switch {
		case errors.Is(err, apikeys.ErrDisabled):
			writeError(w, http.StatusUnauthorized, CodeAPIKeyDisabled, "API key disabled by the plan's key limit")
			return
		case errors.Is(err, apikeys.ErrNotFound):
			writeError(w, http.StatusUnauthorized, "", "Invalid API key")
			return
		case err != nil:
			writeError(w, http.StatusInternalServerError, CodeInternal, "could not verify the API key")
			return
		}
		if ws := r.Header.Get("X-Workspace-Id"); ws != "" && ws != key.Namespace {
			writeError(w, http.StatusForbidden, CodeWorkspaceDenied, "this key belongs to another workspace")
			return
		}
		c := &Caller{Namespace: key.Namespace, Level: key.Level, Key: key}
		h(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	})
}
