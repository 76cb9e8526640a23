package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
)

// Access is who may call a route.
type Access int

const (
	// AnyKey: reads with every key, writes with Standard or Automation.
	AnyKey Access = iota
	// ReadOnlyWrite: every key, also read-only, whatever the method.
	ReadOnlyWrite
	// AutomationKey: needs an Automation key.
	AutomationKey
	// OwnerOnly: needs the workspace owner (an owner-level Kubernetes user
	// of the aggregated front door); every API key gets 403.
	OwnerOnly
	// SessionOnly: endpoints of the human account; keys get 403.
	SessionOnly
)

// route is the configuration of one authenticated endpoint.
type route struct {
	access  Access
	feature monv1.Feature
	limits  []*Limiter
	maxBody int64
	doc     apidoc.Op
}

// RouteOpt configures one authenticated endpoint.
type RouteOpt func(*route)

// WithAccess sets who may call the route (AnyKey when not given).
func WithAccess(a Access) RouteOpt { return func(r *route) { r.access = a } }

// WithFeature makes the route answer 403 FEATURE_NOT_AVAILABLE to
// workspaces whose plan lacks f.
func WithFeature(f monv1.Feature) RouteOpt { return func(r *route) { r.feature = f } }

// WithLimit counts the route's requests against ls, in order.
func WithLimit(ls ...*Limiter) RouteOpt {
	return func(r *route) { r.limits = append(r.limits, ls...) }
}

// Doc documents the route for docs/openapi.json: its tag, summary, typed
// request body and answer, query parameters and further statuses. The
// method, path, access level and plan feature come from the registration;
// a route without Doc fails the document's build (openapi_test.go).
func Doc(op apidoc.Op) RouteOpt { return func(r *route) { r.doc = op } }

// defaultMaxBody is the largest request body of a route without WithMaxBody.
const defaultMaxBody = 100 << 10

// WithMaxBody sets the largest request body (100 KB when not given).
func WithMaxBody(n int64) RouteOpt { return func(r *route) { r.maxBody = n } }

// KeyStore records when an API key was last used.
type KeyStore interface {
	TouchAPIKey(ctx context.Context, keyID string, at time.Time) error
}

// RouterOptions are the settings of the authenticating router.
type RouterOptions struct {
	// Keys finds API keys; a cached reader of API key Secrets.
	Keys client.Reader
	// Store records keys' last use; nil records none.
	Store KeyStore
	// PublicURL is the externally visible base URL; its origin is the one
	// browser origin allowed.
	PublicURL string
	// AllowedOrigins are further browser origins allowed to call the API.
	AllowedOrigins []string
	// Recorder records Events about refused API keys; none when nil.
	Recorder record.EventRecorder
}

// Router is the REST core every resource package registers its routes
// with: authentication of both front doors, access levels, plan features,
// rate limits, body limits and CORS, in front of chi.
type Router struct {
	// Mux is the chi router; public endpoints (no authentication) are
	// registered on it directly.
	Mux chi.Router
	// Limits are the rate limits of the specification's Limits table,
	// shared by the routes that count against the same row.
	Limits *Limits
	deps   *Deps
	opts   RouterOptions
	keyUse keyUse
	// ops are the routes as declared, for the API's document.
	ops []apidoc.Op
	// limiters are the limiters routes declared.
	limiters []*Limiter
	// undocumented are the routes whose documentation lacks what the
	// registration says (Undocumented).
	undocumented []string
}

// NewRouter makes the router of the API.
func NewRouter(deps *Deps, opts RouterOptions) *Router {
	return &Router{Mux: chi.NewRouter(), Limits: NewLimits(), deps: deps, opts: opts}
}

// Handle registers an authenticated endpoint: h is served after
// authentication and the route's access level, feature, limits and body
// limit. A nil h answers 501 (or 403 to callers the route refuses).
func (rt *Router) Handle(method, pattern string, h http.HandlerFunc, opts ...RouteOpt) {
	r := route{maxBody: defaultMaxBody}
	for _, o := range opts {
		o(&r)
	}
	rt.declare(method, pattern, r.access, r.feature, r.doc, r.limits, r.maxBody)
	if method != http.MethodGet && method != http.MethodHead {
		h = rt.touching(h)
	}
	rt.Mux.Method(method, pattern, rt.cors(rt.Authenticated(rt.guard(r, h))))
}

// Public registers an endpoint that needs no key (heartbeat URLs, public
// status pages), straight on chi: no authentication, no CORS rule; its
// handler applies its own limits, the limits given here (for the document).
func (rt *Router) Public(method, pattern string, h http.HandlerFunc, doc apidoc.Op, limits ...*Limiter) {
	rt.declare(method, pattern, publicAccess, "", doc, limits, defaultMaxBody)
	rt.Mux.Method(method, pattern, h)
}

// SessionOnly refuses every API key and aggregated caller on pattern with
// 403 SESSION_AUTH_REQUIRED: endpoints of the human account.
func (rt *Router) SessionOnly(pattern string) {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		rt.declare(m, pattern, SessionOnly, "", apidoc.Op{Tag: "Account", Summary: "Human account endpoint (" + m + "); dashboard session only"}, nil, defaultMaxBody)
	}
	rt.Mux.Handle(pattern, rt.cors(rt.Authenticated(rt.guard(route{access: SessionOnly}, nil))))
}

// publicAccess marks the routes of Public in the route table; no
// authenticated route has it.
const publicAccess Access = -1

// docAccess is the document's name of each access level.
var docAccess = map[Access]apidoc.Access{
	publicAccess:  apidoc.Public,
	AnyKey:        apidoc.AnyKey,
	ReadOnlyWrite: apidoc.ReadOnlyWrite,
	AutomationKey: apidoc.AutomationKey,
	OwnerOnly:     apidoc.OwnerOnly,
	SessionOnly:   apidoc.SessionOnly,
}

// declare records a route in the table the API's document is built from.
// The path is the chi pattern; a pattern ending in the catch-all * keeps the
// path doc names (the parameter of the rest of the path), "{path}" when it
// names none. The route's rate limit (x-rate-limit) is written from its
// limiters, never by hand, so it cannot drift from them.
func (rt *Router) declare(method, pattern string, a Access, f monv1.Feature, doc apidoc.Op, limits []*Limiter, maxBody int64) {
	doc.Method, doc.Access, doc.Feature = method, docAccess[a], string(f)
	if doc.Limit != "" {
		rt.undocumented = append(rt.undocumented, method+" "+pattern+": a rate limit in prose; declare its limiters (WithLimit, Public)")
	}
	if len(limits) > 0 {
		doc.Limit = limitText(limits)
		if maxBody != defaultMaxBody {
			doc.Limit += fmt.Sprintf("; body up to %d MB", maxBody>>20)
		}
		rt.limiters = append(rt.limiters, limits...)
	}
	if rest, ok := strings.CutSuffix(pattern, "*"); !ok || doc.Path == "" {
		doc.Path = pattern
		if ok {
			doc.Path = rest + "{path}"
		}
	}
	if doc.Tag == "" || doc.Summary == "" {
		rt.undocumented = append(rt.undocumented, method+" "+pattern+": no Doc with a tag and a summary")
	}
	rt.ops = append(rt.ops, doc)
}

// Undocumented lists the routes registered without the documentation the
// API's document needs: no tag or summary, or a rate limit the document
// does not state. openapi_test.go fails on any.
func (rt *Router) Undocumented() []string { return slices.Clone(rt.undocumented) }

// Limiters are the limiters of the Limits table and those the routes
// declared: every rate limit of the API.
func (rt *Router) Limiters() []*Limiter {
	out := rt.Limits.all()
	for _, l := range rt.limiters {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// Ops are the routes registered so far, as the API's document describes
// them.
func (rt *Router) Ops() []apidoc.Op { return slices.Clone(rt.ops) }

// touching tells the overlay that a write request of the caller's
// workspace was served, before its answer leaves: answers kept by
// Overlay.Version (status page data, built from the cache and the store)
// are built again at the next request, so a write the API acknowledged
// shows there at once even when it went to the store, not to a custom
// resource (an incident resolved, a public note).
func (rt *Router) touching(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h(w, r)
		if c := CallerFrom(r.Context()); c != nil {
			rt.deps.Overlay.Touch(c.Namespace)
		}
	}
}

// cors refuses browser requests: a request with an Origin header other than
// the public URL's origin or an allowed origin gets 403 CORS_REJECTED.
// Requests without Origin (servers, scripts, CI) are always allowed.
func (rt *Router) cors(h http.Handler) http.Handler {
	allowed := slices.Clone(rt.opts.AllowedOrigins)
	if u, err := url.Parse(rt.opts.PublicURL); err == nil && u.Scheme != "" && u.Host != "" {
		allowed = append(allowed, u.Scheme+"://"+u.Host)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && !slices.Contains(allowed, strings.TrimSuffix(origin, "/")) {
			WriteError(w, http.StatusForbidden, CodeCORSRejected, "browser requests from this origin are not allowed")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Authenticated wraps h with API key authentication: no key is 401 `No token
// provided`, an unknown key 401 `Invalid API key`, a disabled key 401
// API_KEY_DISABLED, and an X-Workspace-Id naming another workspace 403. An
// address that sent more than 100 invalid keys in 15 minutes is refused for
// the rest of the window. Every authenticated request counts against its
// key's 1200 per minute and carries the RateLimit-* headers.
func (rt *Router) Authenticated(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := rt.deps.Clock.Now()
		if c := CallerFrom(r.Context()); c != nil {
			// Authenticated by the aggregated front door (InjectIdentity).
			d := rt.Limits.PerKey.Take(c.RateKey(), now)
			if !d.Allowed {
				rt.Limits.PerKey.Refuse(w, d)
				return
			}
			ratelimit.SetHeaders(w, d)
			h.ServeHTTP(w, r)
			return
		}
		ip := ClientKey(r)
		if d := rt.Limits.InvalidKey.Peek(ip, now); !d.Allowed {
			rt.Limits.InvalidKey.Refuse(w, d)
			return
		}
		auth := r.Header.Get("Authorization")
		token, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || strings.TrimSpace(token) == "" {
			WriteError(w, http.StatusUnauthorized, "", "No token provided")
			return
		}
		key, err := apikeys.Authenticate(r.Context(), rt.opts.Keys, strings.TrimSpace(token))
		switch {
		case errors.Is(err, apikeys.ErrDisabled):
			WriteError(w, http.StatusUnauthorized, CodeAPIKeyDisabled, "API key disabled by the plan's key limit")
			return
		case errors.Is(err, apikeys.ErrUnknownLevel):
			rt.refuseUnknownLevel(r, key, err, now)
			WriteError(w, http.StatusUnauthorized, "", "API key refused: its Secret has an unknown access level")
			return
		case errors.Is(err, apikeys.ErrNotFound):
			rt.Limits.InvalidKey.Take(ip, now)
			WriteError(w, http.StatusUnauthorized, "", "Invalid API key")
			return
		case err != nil:
			Log(r).Error(err, "unable to verify an API key")
			WriteError(w, http.StatusInternalServerError, CodeInternal, "could not verify the API key")
			return
		}
		if ws := r.Header.Get("X-Workspace-Id"); ws != "" && ws != key.Namespace {
			WriteError(w, http.StatusForbidden, CodeWorkspaceDenied, "this key belongs to another workspace")
			return
		}
		d := rt.Limits.PerKey.Take(key.ID, now)
		if !d.Allowed {
			rt.Limits.PerKey.Refuse(w, d)
			return
		}
		ratelimit.SetHeaders(w, d)
		if rt.opts.Store != nil && rt.keyUse.due(key.ID, now) {
			// Recorded beside the request, not before it: the write waits
			// for the store's writer, which with SQLite is the one that
			// stores the agents' results. At 100,000 monitors, with ingest
			// behind, GET /monitors/:id waited seconds for it on each
			// key's first request of a minute (27 requests a second, p99
			// 15 s, all 8 clients in TouchAPIKey). At most one write per
			// key per minute is under way.
			ctx, log := context.WithoutCancel(r.Context()), Log(r)
			go func() {
				ctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				if err := rt.opts.Store.TouchAPIKey(ctx, key.ID, now); err != nil {
					log.V(1).Info("unable to record API key use", "error", err.Error())
				}
			}()
		}
		c := &Caller{Namespace: key.Namespace, Level: key.Level, Key: key}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	})
}

// Reasons of the Events the API records.
const (
	// ReasonUnknownAccessLevel is the Warning Event on an API-key Secret
	// whose level is not read-only, standard or automation.
	ReasonUnknownAccessLevel = "UnknownAccessLevel"
)

// refuseUnknownLevel reports a key refused for its level: an error log line
// and a Warning Event on its Secret, at most once a minute per key so a
// client retrying in a loop does not flood either.
func (rt *Router) refuseUnknownLevel(r *http.Request, key *apikeys.Key, err error, now time.Time) {
	if !rt.keyUse.due("level/"+key.ID, now) {
		return
	}
	Log(r).Error(err, "API key refused", "namespace", key.Namespace, "secret", key.SecretName, "level", string(key.Level))
	if rt.opts.Recorder != nil {
		ref := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.SecretName, UID: types.UID(key.ID)}}
		rt.opts.Recorder.Eventf(ref, corev1.EventTypeWarning, ReasonUnknownAccessLevel,
			"API key %q refused: level %q is not read-only, standard or automation; recreate the key with `uptime-operator keys create`", key.Name, string(key.Level))
	}
}

// isWrite reports whether the method changes something.
func isWrite(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// guard applies a route's access level, plan feature, rate limits and body
// limit, in that order, and serves h with the request's read budget
// (WithRequestReads).
func (rt *Router) guard(r0 route, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := CallerFrom(r.Context())
		switch {
		case r0.access == SessionOnly:
			WriteError(w, http.StatusForbidden, CodeSessionRequired, "this endpoint needs a dashboard session; API keys are not accepted")
			return
		case r0.access == OwnerOnly && !c.Owner:
			WriteError(w, http.StatusForbidden, CodeWorkspaceOwner, "only the workspace owner can do this, from a dashboard session")
			return
		case h == nil:
			WriteError(w, http.StatusNotImplemented, CodeNotImplemented, "this endpoint is not implemented yet")
			return
		case r0.access != ReadOnlyWrite && isWrite(r.Method) && c.Level == apikeys.ReadOnly:
			WriteError(w, http.StatusForbidden, CodeReadOnly, "this API key is read-only")
			return
		case r0.access == AutomationKey && c.Level != apikeys.Automation:
			WriteError(w, http.StatusForbidden, CodeAutomationRequired, "this action needs an Automation API key")
			return
		}
		if r0.feature != "" {
			if ae := rt.deps.RequireFeature(r.Context(), c.Namespace, r0.feature); ae != nil {
				httpjson.Write(w, ae.Status, ae.Body)
				return
			}
		}
		now := rt.deps.Clock.Now()
		for _, l := range r0.limits {
			if d := l.Take(l.Key(r), now); !d.Allowed {
				l.Refuse(w, d)
				return
			}
		}
		if r.ContentLength > r0.maxBody {
			WriteError(w, http.StatusRequestEntityTooLarge, CodePayloadTooLarge, fmt.Sprintf("request body is larger than %d KB", r0.maxBody>>10))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, r0.maxBody)
		}
		h(w, r.WithContext(WithRequestReads(r.Context())))
	})
}

// keyUse throttles writes of API-key last use to one per key per minute:
// "last used" needs no more precision, and a store write per request would
// cost more than the request.
type keyUse struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// due reports whether key's use at now should be written, and records it.
func (k *keyUse) due(key string, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.last == nil {
		k.last = map[string]time.Time{}
	}
	if t, ok := k.last[key]; ok && now.Sub(t) < time.Minute {
		return false
	}
	k.last[key] = now
	return true
}
