package apiserver

import (
	"context"
	"net"
	"net/http"

	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/integrations"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/monitors"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/public"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/expiry"
	"github.com/uptime-operator/uptime-operator/internal/otelexport"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/sitehealth"
	"github.com/uptime-operator/uptime-operator/internal/thirdparty"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	// Alerting are the alerting services: tests, recipients, escalation
	// and status page subscribers.
	Alerting Alerting
	// Features are the services of the optional features.
	Features Features
	// Monitors lists a namespace's Monitors without copying them (the
	// manager passes its informer's indexer); nil lists through Client.
	Monitors MonitorLister
	// Resolver resolves the candidate names of subdomain discovery; nil is
	// the system resolver (net.DefaultResolver).
	Resolver *net.Resolver
	// Clock is the time source (the real clock when nil).
	Clock clock.PassiveClock
	// PublicURL is the externally visible base URL of the direct listener
	// (https://uptime.example.com), used for heartbeat URLs and as the one
	// browser origin that is allowed.
	PublicURL string
	// SSOUnavailable names the setting sso status pages lack on this
	// install ("" when they can be served); PUT /status/pages/:id/access
	// refuses mode sso with it.
	SSOUnavailable string
	// AllowedOrigins are further browser origins allowed to call the API.
	AllowedOrigins []string
	// AllowPrivateTargets lets monitors target private addresses (the same
	// setting admission uses).
	AllowPrivateTargets bool
	// Recorder records Kubernetes Events about refused API keys; none are
	// recorded when nil.
	Recorder record.EventRecorder
}

// Alerting are the alerting services the API calls. Each may be nil; what
// a nil one answers is on its field.
type Alerting struct {
	// Escalation reports the escalation of an incident from what actually
	// fired; nil computes it from the policy alone.
	Escalation EscalationReporter
	// Subscribers lists page subscribers and notifies them of public notes;
	// nil answers empty lists.
	Subscribers Subscribers
	// ChannelTester sends test alerts; nil answers 503 CHANNEL_UNAVAILABLE.
	ChannelTester ChannelTester
	// Notifier sends the test emails of POST /monitors/:id/test-notification;
	// nil answers 503 CHANNEL_UNAVAILABLE.
	Notifier Notifier
	// Recipients keeps alert recipients' confirmation state; when nil one
	// without a mailer (resends answer 503) is made from Client and Store.
	Recipients *recipients.Confirmer
}

// Features are the services of the optional features, each served by a
// resource package of its own (domainssl, websitehealth, thirdpartystatus,
// telemetry, incidentcomms). Each may be nil, as a manager without the
// feature configured passes them; what a nil one answers is on its field.
type Features struct {
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
}

// MonitorLister lists Monitors without copying them (monitors.MonitorLister).
type MonitorLister = monitors.MonitorLister

// InformerMonitors is the MonitorLister of the manager's informer cache.
var InformerMonitors = monitors.InformerMonitors

// PublicStatus serves the public status page endpoints (public.Status).
type PublicStatus = public.Status

// EscalationReporter reports an incident's escalation state.
type EscalationReporter interface {
	EscalationStatus(ctx context.Context, inc store.Incident) (alerting.EscalationState, error)
}

// Subscribers lists a status page's subscribers; PublicUpdates hears about
// public incident notes. The status page notifier implements both.
type Subscribers interface {
	SubscriberList(ctx context.Context, pageUID string) (restapi.PageSubscribers, error)
	PublicUpdate(ctx context.Context, ns, monitorUID, incidentID, text string) error
}

// ChannelTester sends a test alert through one alert channel
// (integrations.ChannelTester).
type ChannelTester = integrations.ChannelTester

// Notifier sends a test alert email for a monitor to one address
// (integrations.Notifier).
type Notifier = integrations.Notifier

// Server serves the REST API. It assembles the routes of the resource
// packages on the core router and serves the resources not yet split into
// packages of their own.
type Server struct {
	// Deps is the configuration access shared with every resource package.
	*core.Deps
	opts  Options
	rt    *core.Router
	clock clock.PassiveClock
	// recipients is Options.Recipients or the default.
	recipients *recipients.Confirmer
}

// New builds the API's routes.
func New(opts Options) *Server {
	s := &Server{opts: opts, clock: opts.Clock}
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
	s.Deps = &core.Deps{Client: s.opts.Client, Reader: s.opts.Reader, Overlay: s.opts.Overlay, Plans: opts.Plans, Clock: s.clock}
	var keyStore core.KeyStore
	if opts.Store != nil {
		keyStore = opts.Store
	}
	s.rt = core.NewRouter(s.Deps, core.RouterOptions{Keys: opts.Keys, Store: keyStore, PublicURL: opts.PublicURL,
		AllowedOrigins: opts.AllowedOrigins, Recorder: opts.Recorder})
	s.recipients = opts.Alerting.Recipients
	if s.recipients == nil {
		s.recipients = &recipients.Confirmer{Reader: s.opts.Client, Store: opts.Store, Clock: s.clock}
	}
	s.routes()
	return s
}

// Handler returns the root handler of the direct listener.
func (s *Server) Handler() http.Handler { return s.rt.Mux }
