package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/expiry"
	"github.com/uptime-operator/uptime-operator/internal/otelexport"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
	"github.com/uptime-operator/uptime-operator/internal/sitehealth"
	"github.com/uptime-operator/uptime-operator/internal/thirdparty"

	"github.com/go-chi/chi/v5"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/writethrough"
)

// Options are the dependencies of the API.
type Options struct {
	// Client reads (from the cache) and writes custom resources.
	Client client.Client
	// Overlay is the read-your-writes overlay of the process: the API
	// records every write of Client in it, so the next request and every
	// event built afterwards (alert routing, status pages) see the write.
	// When set, Client must read through a cache made by Overlay.NewCache
	// (the manager's); when nil, the API makes its own and lays it over
	// Client's reads.
	Overlay *writethrough.Overlay
	// Reader reads directly from the API server. It backs reads that must see
	// a write made a moment ago (an object missing from the cache, the object
	// an update starts from) and objects the manager does not cache
	// (ConfigMaps, Secrets other than API keys). Nil means Client.
	Reader client.Reader
	// CredentialSecrets reads the Secrets a monitor's header may reference
	// (the manager's credsecrets cache, which holds labelled Secrets only
	// and answers *credentials.NotAllowedError for others); nil means
	// Reader.
	CredentialSecrets client.Reader
	// Plans resolves a workspace's plan.
	Plans *plans.Resolver
	// Keys finds API keys; a cached reader of API key Secrets.
	Keys client.Reader
	// Store holds history: checks, incidents, notes, deploy events.
	Store Store
	// Engine changes incident state, records heartbeats and runs checks.
	Engine Engine
	// Public serves the public status page endpoints; nil answers 404.
	Public PublicStatus
	// Subscribers lists page subscribers and notifies them of public notes;
	// nil answers empty lists.
	Subscribers Subscribers
	// Escalation reports the escalation of an incident from what actually
	// fired; nil computes it from the policy alone.
	Escalation EscalationReporter
	// Expiry reads and refreshes certificate and domain expiry; nil answers 503.
	Expiry *expiry.Checker
	// SiteHealth crawls and audits websites; nil answers 503 on runs.
	SiteHealth *sitehealth.Service
	// ThirdParty follows third-party status pages; nil answers 503.
	ThirdParty *thirdparty.Service
	// OTel exports check results over OTLP; nil answers 503.
	OTel *otelexport.Exporter
	// Assist is the AI incident assist; nil reports the features unavailable.
	Assist *assist.Service
	// ChannelTester sends test alerts; nil answers 503 CHANNEL_UNAVAILABLE.
	ChannelTester ChannelTester
	// Notifier sends the test emails of POST /monitors/:id/test-notification;
	// nil answers 503 CHANNEL_UNAVAILABLE.
	Notifier Notifier
	// Monitors lists a namespace's Monitors without copying them (the
	// manager passes its informer's indexer); nil lists through Client.
	Monitors MonitorLister
	// Recipients keeps alert recipients' confirmation state; when nil one
	// without a mailer (resends answer 503) is made from Client and Store.
	Recipients *recipients.Confirmer
	// Resolver resolves the candidate names of subdomain discovery; nil is
	// the system resolver (net.DefaultResolver).
	Resolver *net.Resolver
	// Clock is the time source (the real clock when nil).
	Clock clock.PassiveClock
	// PublicURL is the externally visible base URL of the direct listener
	// (https://uptime.example.com), used for heartbeat URLs and as the one
	// browser origin that is allowed.
	PublicURL string
	// AllowedOrigins are further browser origins allowed to call the API.
	AllowedOrigins []string
	// AllowPrivateTargets lets monitors target private addresses (the same
	// setting admission uses).
	AllowPrivateTargets bool
	// Recorder records Kubernetes Events about refused API keys; none are
	// recorded when nil.
	Recorder record.EventRecorder
}

// PublicStatus serves the public status page endpoints. rest is "",
// "history", "badge.svg" or "feed.xml".
type PublicStatus interface {
	ServeStatus(w http.ResponseWriter, r *http.Request, slug, rest string)
	ServeHTML(w http.ResponseWriter, r *http.Request, slug string)
	// The page's forms: password sign-in and subscriptions.
	ServeLogin(w http.ResponseWriter, r *http.Request, slug string)
	ServeSubscribe(w http.ResponseWriter, r *http.Request, slug string)
	ServeConfirm(w http.ResponseWriter, r *http.Request, slug string)
	ServeUnsubscribe(w http.ResponseWriter, r *http.Request, slug string)
}

// EscalationReporter reports an incident's escalation state.
type EscalationReporter interface {
	EscalationStatus(ctx context.Context, inc store.Incident) (alerting.EscalationState, error)
}

// Subscribers lists a status page's subscribers; PublicUpdates hears about
// public incident notes. The status page notifier implements both.
type Subscribers interface {
	SubscriberList(ctx context.Context, pageUID string) (any, error)
	PublicUpdate(ctx context.Context, ns, monitorUID, incidentID, text string) error
}

// ChannelTester sends a test alert through one alert channel.
type ChannelTester interface {
	TestChannel(ctx context.Context, ch *monv1.AlertChannel) error
}

// Notifier sends a test alert email for a monitor to one address.
type Notifier interface {
	SendTestEmail(ctx context.Context, to, monitorName string) error
}

// Server serves the REST API.
type Server struct {
	opts    Options
	router  chi.Router
	clock   clock.PassiveClock
	limits  *limits
	keyUse  keyUse
	uptimes uptimeCache
	configs configCache
	items   listCache
	// recipients is Options.Recipients or the default.
	recipients *recipients.Confirmer
}

// New builds the API's routes.
func New(opts Options) *Server {
	s := &Server{opts: opts, router: chi.NewRouter(), clock: opts.Clock, limits: newLimits()}
	if s.clock == nil {
		s.clock = clock.RealClock{}
	}
	if s.opts.Reader == nil {
		s.opts.Reader = opts.Client
	}
	if s.opts.Overlay == nil {
		s.opts.Overlay = &writethrough.Overlay{}
		s.opts.Client = s.opts.Overlay.Client(opts.Client)
	} else {
		s.opts.Client = s.opts.Overlay.Writes(opts.Client)
	}
	s.recipients = opts.Recipients
	if s.recipients == nil {
		s.recipients = &recipients.Confirmer{Reader: s.opts.Client, Store: opts.Store, Clock: s.clock}
	}
	s.routes()
	return s
}

// Handler returns the root handler of the direct listener.
func (s *Server) Handler() http.Handler { return s.router }

func (s *Server) log(r *http.Request) logr.Logger {
	return ctrl.LoggerFrom(r.Context()).WithName("api")
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

// Caller is the authenticated identity of a request.
type Caller struct {
	// Namespace is the workspace the caller acts on.
	Namespace string
	// Level is the access level.
	Level apikeys.Level
	// Key is the API key used, when the caller used one.
	Key *apikeys.Key
	// User is the Kubernetes user of the aggregated front door.
	User string
	// Owner is true for a Kubernetes user whom RBAC grants the owner level
	// through the aggregated front door. Owners may call the owner-only
	// endpoints; API keys are never owners.
	Owner bool
}

// Name is how the caller is shown in incident timelines.
func (c *Caller) Name() string {
	if c.Key != nil {
		return "API key " + c.Key.Name
	}
	return c.User
}

// rateKey identifies the caller for the per-key limit.
func (c *Caller) rateKey() string {
	if c.Key != nil {
		return c.Key.ID
	}
	return "user:" + c.User
}

type callerKey struct{}

// CallerFrom returns the request's caller.
func CallerFrom(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}

// access is who may call a route.
type access int

const (
	// anyKey: reads with every key, writes with Standard or Automation.
	anyKey access = iota
	// readOnlyWrite: every key, also read-only, whatever the method.
	readOnlyWrite
	// automationKey: needs an Automation key.
	automationKey
	// ownerOnly: needs the workspace owner (an owner-level Kubernetes user
	// of the aggregated front door); every API key gets 403.
	ownerOnly
	// sessionOnly: endpoints of the human account; keys get 403.
	sessionOnly
)

// route is the configuration of one authenticated endpoint.
type route struct {
	access  access
	feature monv1.Feature
	limits  []*limiter
	maxBody int64
}

type routeOpt func(*route)

func withAccess(a access) routeOpt         { return func(r *route) { r.access = a } }
func withFeature(f monv1.Feature) routeOpt { return func(r *route) { r.feature = f } }
func withLimit(ls ...*limiter) routeOpt    { return func(r *route) { r.limits = append(r.limits, ls...) } }
func withMaxBody(n int64) routeOpt         { return func(r *route) { r.maxBody = n } }
func (s *Server) handle(method, pattern string, h http.HandlerFunc, opts ...routeOpt) {
	rt := route{maxBody: 100 << 10}
	for _, o := range opts {
		o(&rt)
	}
	if method != http.MethodGet && method != http.MethodHead {
		h = s.touching(h)
	}
	s.router.Method(method, pattern, s.cors(s.authenticated(s.guard(rt, h))))
}

// touching tells the overlay that a write request of the caller's
// workspace was served, before its answer leaves: answers kept by
// Overlay.Version (status page data, built from the cache and the store)
// are built again at the next request, so a write the API acknowledged
// shows there at once even when it went to the store, not to a custom
// resource (an incident resolved, a public note).
func (s *Server) touching(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h(w, r)
		if c := CallerFrom(r.Context()); c != nil {
			s.opts.Overlay.Touch(c.Namespace)
		}
	}
}

// cors refuses browser requests: a request with an Origin header other than
// the public URL's origin or an allowed origin gets 403 CORS_REJECTED.
// Requests without Origin (servers, scripts, CI) are always allowed.
func (s *Server) cors(h http.Handler) http.Handler {
	allowed := slices.Clone(s.opts.AllowedOrigins)
	if u, err := url.Parse(s.opts.PublicURL); err == nil && u.Scheme != "" && u.Host != "" {
		allowed = append(allowed, u.Scheme+"://"+u.Host)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && !slices.Contains(allowed, strings.TrimSuffix(origin, "/")) {
			writeError(w, http.StatusForbidden, CodeCORSRejected, "browser requests from this origin are not allowed")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// authenticated wraps h with API key authentication: no key is 401 `No token
// provided`, an unknown key 401 `Invalid API key`, a disabled key 401
// API_KEY_DISABLED, and an X-Workspace-Id naming another workspace 403. An
// address that sent more than 100 invalid keys in 15 minutes is refused for
// the rest of the window. Every authenticated request counts against its
// key's 1200 per minute and carries the RateLimit-* headers.
func (s *Server) authenticated(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := s.clock.Now()
		if c := CallerFrom(r.Context()); c != nil {
			// Authenticated by the aggregated front door (InjectIdentity).
			d := s.limits.perKey.Take(c.rateKey(), now)
			if !d.Allowed {
				s.limits.perKey.refuse(w, d)
				return
			}
			ratelimit.SetHeaders(w, d)
			h.ServeHTTP(w, r)
			return
		}
		ip := clientKey(r)
		if d := s.limits.invalidKey.Peek(ip, now); !d.Allowed {
			s.limits.invalidKey.refuse(w, d)
			return
		}
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
		case errors.Is(err, apikeys.ErrUnknownLevel):
			s.refuseUnknownLevel(r, key, err, now)
			writeError(w, http.StatusUnauthorized, "", "API key refused: its Secret has an unknown access level")
			return
		case errors.Is(err, apikeys.ErrNotFound):
			s.limits.invalidKey.Take(ip, now)
			writeError(w, http.StatusUnauthorized, "", "Invalid API key")
			return
		case err != nil:
			s.log(r).Error(err, "unable to verify an API key")
			writeError(w, http.StatusInternalServerError, CodeInternal, "could not verify the API key")
			return
		}
		if ws := r.Header.Get("X-Workspace-Id"); ws != "" && ws != key.Namespace {
			writeError(w, http.StatusForbidden, CodeWorkspaceDenied, "this key belongs to another workspace")
			return
		}
		d := s.limits.perKey.Take(key.ID, now)
		if !d.Allowed {
			s.limits.perKey.refuse(w, d)
			return
		}
		ratelimit.SetHeaders(w, d)
		if s.opts.Store != nil && s.keyUse.due(key.ID, now) {
			if err := s.opts.Store.TouchAPIKey(r.Context(), key.ID, now); err != nil {
				s.log(r).V(1).Info("unable to record API key use", "error", err.Error())
			}
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
func (s *Server) refuseUnknownLevel(r *http.Request, key *apikeys.Key, err error, now time.Time) {
	if !s.keyUse.due("level/"+key.ID, now) {
		return
	}
	s.log(r).Error(err, "API key refused", "namespace", key.Namespace, "secret", key.SecretName, "level", string(key.Level))
	if s.opts.Recorder != nil {
		ref := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.SecretName, UID: types.UID(key.ID)}}
		s.opts.Recorder.Eventf(ref, corev1.EventTypeWarning, ReasonUnknownAccessLevel,
			"API key %q refused: level %q is not read-only, standard or automation; recreate the key with `uptime-operator keys create`", key.Name, string(key.Level))
	}
}

// isWrite reports whether the method changes something.
func isWrite(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// guard applies a route's access level, plan feature, rate limits and body
// limit, in that order.
func (s *Server) guard(rt route, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := CallerFrom(r.Context())
		switch {
		case rt.access == sessionOnly:
			writeError(w, http.StatusForbidden, CodeSessionRequired, "this endpoint needs a dashboard session; API keys are not accepted")
			return
		case rt.access == ownerOnly && !c.Owner:
			writeError(w, http.StatusForbidden, CodeWorkspaceOwner, "only the workspace owner can do this, from a dashboard session")
			return
		case h == nil:
			writeError(w, http.StatusNotImplemented, CodeNotImplemented, "this endpoint is not implemented yet")
			return
		case rt.access != readOnlyWrite && isWrite(r.Method) && c.Level == apikeys.ReadOnly:
			writeError(w, http.StatusForbidden, CodeReadOnly, "this API key is read-only")
			return
		case rt.access == automationKey && c.Level != apikeys.Automation:
			writeError(w, http.StatusForbidden, CodeAutomationRequired, "this action needs an Automation API key")
			return
		}
		if rt.feature != "" {
			if ae := s.requireFeature(r.Context(), c.Namespace, rt.feature); ae != nil {
				httpjson.Write(w, ae.Status, ae.Body)
				return
			}
		}
		now := s.clock.Now()
		for _, l := range rt.limits {
			if d := l.Take(l.key(r), now); !d.Allowed {
				l.refuse(w, d)
				return
			}
		}
		if r.ContentLength > rt.maxBody {
			writeError(w, http.StatusRequestEntityTooLarge, CodePayloadTooLarge, fmt.Sprintf("request body is larger than %d KB", rt.maxBody>>10))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, rt.maxBody)
		}
		h(w, r)
	})
}

// requireFeature answers 403 FEATURE_NOT_AVAILABLE when the workspace's plan
// lacks f.
func (s *Server) requireFeature(ctx context.Context, ns string, f monv1.Feature) *apiError {
	plan, err := s.opts.Plans.ForNamespace(ctx, ns)
	if err != nil {
		return newAPIError(http.StatusInternalServerError, CodeInternal, "could not read the workspace's plan")
	}
	if plans.HasFeature(plan, f) {
		return nil
	}
	required := s.cheapestPlanWith(ctx, f)
	body := ErrorBody{
		Error:   fmt.Sprintf("The %s plan does not include %s", plan.Name, f),
		Code:    CodeFeatureNotAvailable,
		Details: map[string]any{"feature": string(f)},
		Plan:    plan.Name,
	}
	if required != "" {
		body.RequiredPlan = required
		body.UpgradePath = fmt.Sprintf("kubectl label namespace %s %s=%s --overwrite", ns, monv1.PlanLabel, required)
	}
	return &apiError{Status: http.StatusForbidden, Body: body}
}

// cheapestPlanWith names the Plan with feature f that grants the fewest
// features (plans carry no price; the smallest plan is the cheapest), ties
// broken by name.
func (s *Server) cheapestPlanWith(ctx context.Context, f monv1.Feature) string {
	var list monv1.PlanList
	if err := s.opts.Client.List(ctx, &list); err != nil {
		return ""
	}
	best := ""
	bestN := 0
	for _, p := range list.Items {
		if !plans.HasFeature(&p, f) {
			continue
		}
		n := len(p.Spec.Features)
		if best == "" || n < bestN || (n == bestN && p.Name < best) {
			best, bestN = p.Name, n
		}
	}
	return best
}
