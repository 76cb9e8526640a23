// Package manager assembles the uptime-operator manager: the controllers, the
// admission webhooks and the direct API listener, on one controller-runtime
// manager. `uptime-operator manager` runs it in a cluster and
// `uptime-operator dev` runs it against a local control plane.
package manager

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/controllers"
	"github.com/uptime-operator/uptime-operator/internal/aggregated"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/bootstrap"
	"github.com/uptime-operator/uptime-operator/internal/certrotator"
	"github.com/uptime-operator/uptime-operator/internal/certs"
	"github.com/uptime-operator/uptime-operator/internal/clientip"
	"github.com/uptime-operator/uptime-operator/internal/credsecrets"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/expiry"
	"github.com/uptime-operator/uptime-operator/internal/httpserver"
	"github.com/uptime-operator/uptime-operator/internal/mcpserver"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/otelexport"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
	"github.com/uptime-operator/uptime-operator/internal/sitehealth"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/postgres"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
	"github.com/uptime-operator/uptime-operator/internal/thirdparty"
	"github.com/uptime-operator/uptime-operator/internal/trust"
	"github.com/uptime-operator/uptime-operator/internal/writethrough"
	checks "github.com/uptime-operator/uptime-operator/probes"
	"github.com/uptime-operator/uptime-operator/webhooks"
)

// Options configure the manager.
type Options struct {
	// MetricsAddr serves Prometheus metrics ("0" disables).
	MetricsAddr string
	// MetricsSecure serves them over TLS to authenticated and authorized
	// callers only (see metricsServer); false serves plain HTTP to anyone.
	MetricsSecure bool
	// MetricsCertDir holds the metrics endpoint's tls.crt and tls.key;
	// empty (or missing files) uses a self-signed certificate.
	MetricsCertDir string
	// MonitorSeries exports the per-monitor series (metrics.MonitorSeries);
	// MonitorSeriesMax bounds how many monitors they cover (zero:
	// metrics.DefaultMonitorSeriesMax).
	MonitorSeries    bool
	MonitorSeriesMax int
	// MonitorStatusWrites bounds Monitor status writes per second across
	// all Monitors (zero: controllers.DefaultMonitorStatusWrites).
	MonitorStatusWrites float64
	// PprofAddr serves Go's net/http/pprof profiles (empty or "0"
	// disables): how the manager's CPU and memory at scale were measured.
	PprofAddr string
	// HealthAddr serves /healthz and /readyz ("0" disables).
	HealthAddr string
	// WebhookHost, WebhookPort and WebhookCertDir configure the admission
	// webhook server; the cert dir holds tls.crt and tls.key.
	WebhookHost    string
	WebhookPort    int
	WebhookCertDir string
	// APIListen is the address of the direct REST listener.
	APIListen string
	// AggregatedListen is the TLS address of the aggregated API that
	// kube-apiserver proxies to (empty disables it).
	AggregatedListen string
	// AggregatedCertDir holds the aggregated API's tls.crt and tls.key; when
	// empty a self-signed certificate for AggregatedDNSName is made and its
	// CA is available from AggregatedCA (dev mode).
	AggregatedCertDir string
	// AggregatedDNSName is the Service DNS name the aggregator verifies.
	AggregatedDNSName string
	// CertRotation, when set, keeps the serving certificates at runtime
	// (package certrotator): made before the listeners start, so the
	// webhooks and APIs serve from the first start, and renewed while the
	// manager runs. Its certificates' Dirs are the cert dirs above.
	CertRotation *certrotator.Options
	// LeaderElection makes only one replica reconcile.
	LeaderElection          bool
	LeaderElectionNamespace string
	// DefaultPlan names the Plan of namespaces without the plan label.
	DefaultPlan string
	// AllowPrivateTargets lets monitors target private addresses.
	AllowPrivateTargets bool
	// ClientAddresses finds the client address behind the proxies in
	// front of the direct listener; every per-address limit counts it. The
	// zero value trusts no proxy.
	ClientAddresses clientip.Resolver
	// ServerLimits are the connection limits (read, header, idle timeouts
	// and header size) of the direct and aggregated API listeners; zero
	// fields take httpserver.Defaults.
	ServerLimits httpserver.Limits
	// Store selects the history store: a file path or sqlite://PATH for the
	// embedded SQLite store, or a postgres:// DSN.
	Store string
	// Retention is how long raw checks are kept (rollups stay).
	Retention time.Duration
	// DeliveryRetryWindow keeps retrying deliveries every 80 s after the
	// specification's six attempts, until this long after they were queued
	// (zero: six attempts, as the specification says); see
	// alerting.Worker.RetryWindow.
	DeliveryRetryWindow time.Duration
	// Namespace is the manager's own namespace: probe Deployments, the probe
	// ServiceAccount and region token Secrets live there.
	Namespace string
	// SecretNamespaces are the only namespaces whose Secrets the manager
	// watches (API keys, the Secrets Monitors may reference), for an
	// install whose RBAC grants Secrets there only (the chart's
	// secrets.namespaces); empty watches every namespace.
	SecretNamespaces []string
	// ProbeImage is the image of managed probe Deployments (empty: none are
	// created, as in dev mode).
	ProbeImage string
	// ProbeServerURL is the probe API URL as probe pods reach it.
	ProbeServerURL string
	// ProbeTrustedCA is the ConfigMap or Secret of private CA certificates
	// mounted into managed probe pods (nil: none).
	ProbeTrustedCA *trust.BundleRef
	// ProbeImagePullSecrets are Secrets of the manager's namespace that
	// every managed probe Pod pulls its image with.
	ProbeImagePullSecrets []string
	// ProbeListen is the TLS address of a listener that serves only the
	// probe API (empty: none; the direct listener serves it too, for agents
	// that reach it through an Ingress). ProbeCertDir holds its tls.crt and
	// tls.key, reloaded when they change.
	ProbeListen  string
	ProbeCertDir string
	// ProbeServerCA is the CA bundle that managed probe pods verify the
	// probe API's certificate against (nil: the system roots).
	ProbeServerCA *trust.BundleRef
	// BootstrapFile holds ProbeRegions and Plans to apply once the manager
	// leads (the Helm chart's regions and plans values; package bootstrap
	// says why Helm does not create them). Empty: none.
	BootstrapFile string
	// BootstrapRelease labels what BootstrapFile declares, and marks what to
	// delete when the file no longer declares it.
	BootstrapRelease string
	// BootstrapOwner is the release's ValidatingWebhookConfiguration, owner
	// of what BootstrapFile declares (empty: no owner).
	BootstrapOwner string
	// SkipNameValidation allows a second manager in one process (tests that
	// restart the manager).
	SkipNameValidation bool
	// SMTP sends alert and subscriber email (nil: the HTTP relay, if any).
	SMTP *alerting.SMTP
	// RequireRecipientConfirmation sends alert emails only to addresses
	// that confirmed them (see internal/recipients).
	RequireRecipientConfirmation bool
	// Twilio sends SMS, voice and WhatsApp alerts (nil: the HTTP relay).
	Twilio *alerting.Twilio
	// RDAPURL is the RDAP service for domain expiry (default https://rdap.org).
	RDAPURL string
	// AI configures AI incident assist (an OpenAI-compatible endpoint); an
	// empty model reports the features unavailable.
	AI assist.Config
	// PublicURL is the external base URL of the direct listener (links in
	// alerts, heartbeat URLs, status pages).
	PublicURL string
}

// DefaultMonitorStatusWrites is the default of Options.MonitorStatusWrites.
const DefaultMonitorStatusWrites = controllers.DefaultMonitorStatusWrites

// Scheme returns a scheme with the core kinds and ours.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntimeMust(clientgoscheme.AddToScheme(s))
	utilruntimeMust(monv1.AddToScheme(s))
	return s
}

func utilruntimeMust(err error) {
	if err != nil {
		panic(err)
	}
}

// Manager is a running uptime-operator manager.
type Manager struct {
	ctrl.Manager
	opts    Options
	overlay *writethrough.Overlay
	api     *apiserver.Server
	// Store is the history store; closed when the manager stops.
	Store store.Store
	// Engine is the incident engine.
	Engine *engine.Engine
	// Probes is the manager side of the probe API.
	Probes *probeserver.Server
	// Alerts is the delivery worker.
	Alerts *alerting.Worker
	root   http.Handler
	// apiBound is closed once the direct listener is bound to apiAddr.
	apiBound chan struct{}
	apiAddr  string
	// aggregated serves the aggregated API; aggCA is its self-signed CA.
	aggregated *aggregated.Server
	aggCert    tls.Certificate
	aggWatch   *certwatcher.CertWatcher
	aggCA      []byte
	aggBound   chan struct{}
	aggAddr    string
	// probeAPI serves the probe API on both listeners (one failure
	// limiter); probeBound is closed once the TLS listener is bound.
	probeAPI   http.Handler
	probeBound chan struct{}
	probeAddr  string
}

// Start runs the manager until ctx ends, then closes the store. The store
// is closed only after every runnable has stopped (controller-runtime waits
// up to its graceful shutdown timeout): the API drains its requests, probe
// ingest commits what it accepted and the delivery worker records the
// attempts under way, all of which still write to the store.
func (m *Manager) Start(ctx context.Context) error {
	err := m.Manager.Start(ctx)
	return errors.Join(err, m.Store.Close())
}

// AggregatedCA is the PEM CA of a self-signed aggregated API certificate
// (the APIService caBundle), nil when certificates come from files.
func (m *Manager) AggregatedCA() []byte { return m.aggCA }

// AggregatedAddr returns the bound address of the aggregated listener.
func (m *Manager) AggregatedAddr(ctx context.Context) (string, error) {
	select {
	case <-m.aggBound:
		return m.aggAddr, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// APIAddr returns the address the direct listener bound (useful with port
// 0), waiting until it is bound.
func (m *Manager) APIAddr(ctx context.Context) (string, error) {
	select {
	case <-m.apiBound:
		return m.apiAddr, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Overlay is the read-your-writes overlay the manager's cache lays over its
// answers; a REST API built on the manager's client records its writes in it.
func (m *Manager) Overlay() *writethrough.Overlay { return m.overlay }

// Handler is the root handler of the direct listener (probe API, REST API
// and public endpoints).
func (m *Manager) Handler() http.Handler { return m.root }

// New builds the manager with every controller, webhook and listener.
func New(cfg *rest.Config, opts Options) (*Manager, error) {
	if opts.LeaderElectionNamespace == "" {
		// The Lease lives in the manager's namespace; controller-runtime's
		// own default reads the in-cluster namespace file, which a manager
		// run outside a Pod (a kubeconfig) does not have.
		opts.LeaderElectionNamespace = opts.Namespace
	}
	// Every reader of the manager's cache sees what the REST API wrote at
	// once (read-your-writes): the API records its writes in the overlay,
	// and the cache lays them over its answers until the informer has them.
	overlay := &writethrough.Overlay{}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme(),
		NewCache:                overlay.NewCache(nil),
		Metrics:                 metricsServer(opts),
		HealthProbeBindAddress:  orZero(opts.HealthAddr),
		PprofBindAddress:        orZero(opts.PprofAddr),
		Controller:              ctrlconfig.Controller{SkipNameValidation: &opts.SkipNameValidation},
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        "uptime-operator.monitoring.uptime-operator.io",
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: opts.WebhookHost, Port: opts.WebhookPort, CertDir: opts.WebhookCertDir,
		}),
		Cache: cache.Options{
			// Nothing reads managedFields, and they were a large part of a
			// cached object: one entry per field manager (the creator, the
			// webhooks' defaults, the status writer), each listing every
			// field it owns. At 100,000 Monitors that is memory per Monitor
			// held for nothing, and the watch decodes them all the same.
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject:         cacheByObject(opts.Namespace, opts.SecretNamespaces),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if opts.CertRotation != nil {
		if err := rotateCerts(mgr, *opts.CertRotation); err != nil {
			return nil, err
		}
	}
	resolver := &plans.Resolver{Reader: mgr.GetClient(), DefaultPlan: opts.DefaultPlan}
	// The Secrets Monitors may reference, and no other (package credsecrets).
	credSecrets, err := credsecrets.New(cfg, credsecrets.Options{Scheme: mgr.GetScheme(), Namespaces: opts.SecretNamespaces, Direct: mgr.GetAPIReader()})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(credSecrets); err != nil {
		return nil, err
	}
	ctx := context.Background()
	st, err := OpenStore(ctx, opts.Store)
	if err != nil {
		return nil, err
	}
	confirmer := &recipients.Confirmer{Reader: mgr.GetClient(), Store: st, BaseURL: opts.PublicURL,
		Required: opts.RequireRecipientConfirmation, Log: ctrl.Log.WithName("recipients")}
	if opts.SMTP != nil && opts.SMTP.Addr != "" {
		smtp := *opts.SMTP
		confirmer.Mailer = recipients.MailerFunc(func(ctx context.Context, to, subject, text string) error {
			return smtp.Send(ctx, alerting.MailMessage{To: []string{to}, Subject: subject, Text: text})
		})
	}
	worker := &alerting.Worker{
		Store: st, Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Owner: replicaID(),
		AllowPrivateTargets: opts.AllowPrivateTargets, Retention: opts.Retention, RetryWindow: opts.DeliveryRetryWindow, Recipients: confirmer,
		SMTP: opts.SMTP, Twilio: opts.Twilio, Recorder: mgr.GetEventRecorderFor("uptime-operator-alerting"),
	}
	for _, r := range []manager.Runnable{worker, confirmer} {
		if err := mgr.Add(r); err != nil {
			return nil, err
		}
	}
	alerts := alerting.EngineAlerts{Router: &alerting.Router{Reader: mgr.GetClient(), BaseURL: opts.PublicURL}, Kick: worker.Kick}
	if err := (&controllers.AlertChannelReconciler{Client: mgr.GetClient(), Secrets: mgr.GetAPIReader()}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up alert channel controller: %w", err)
	}
	escalator := &alerting.Escalator{Store: st, Reader: mgr.GetClient(), Router: alerts.Router, Kick: worker.Kick}
	if err := alerting.IndexMonitors(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	if err := mgr.Add(escalator); err != nil {
		return nil, err
	}
	if err := (&controllers.OnCallScheduleReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up on-call schedule controller: %w", err)
	}
	if err := (&controllers.EscalationPolicyReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up escalation policy controller: %w", err)
	}
	if err := (&controllers.MonitorGroupReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up monitor group controller: %w", err)
	}
	key, err := signingKey(ctx, mgr.GetAPIReader(), mgr.GetClient(), opts.Namespace)
	if err != nil {
		// Without the Secret (no namespace, no RBAC) each process makes its
		// own key; say what that costs.
		ctrl.Log.WithName("statuspage").Error(err, "no shared signing key: status page sessions, unsubscribe links and subscriber webhook secrets change when the manager restarts")
	}
	notifier := &statuspage.Notifier{
		Reader: mgr.GetClient(), Store: st, Kick: worker.Kick, Sign: alerting.Sign, BaseURL: opts.PublicURL,
		AllowPrivateTargets: opts.AllowPrivateTargets, Key: key,
	}
	// Subscriber notifications and recipient confirmations are delivered by
	// the alerting worker, through the outbox.
	confirmer.Key, confirmer.Kick = key, worker.Kick
	worker.Targets = map[string]alerting.Target{statuspage.OutboxPrefix: notifier, recipients.OutboxPrefix: confirmer}
	if opts.SMTP != nil {
		smtp := *opts.SMTP
		notifier.Mailer = statuspage.MailerFunc(func(ctx context.Context, to, subject, text string) error {
			return smtp.Send(ctx, alerting.MailMessage{To: []string{to}, Subject: subject, Text: text})
		})
	}
	expiryChecker := &expiry.Checker{
		Store: st, Reader: mgr.GetClient(), Notifier: alerts.Router, Kick: worker.Kick, RDAPBaseURL: opts.RDAPURL,
		AllowPrivateTargets: opts.AllowPrivateTargets, Log: ctrl.Log.WithName("expiry"),
	}
	if err := mgr.Add(expiryChecker); err != nil {
		return nil, err
	}
	siteHealth := &sitehealth.Service{Store: st, Notifier: alerts.Router, Kick: worker.Kick, Auditor: &sitehealth.Auditor{},
		AllowPrivateTargets: opts.AllowPrivateTargets, Log: ctrl.Log.WithName("sitehealth")}
	thirdParty := &thirdparty.Service{Store: st, Notifier: alerts.Router, Kick: worker.Kick,
		Catalog:             &thirdparty.Catalog{Reader: mgr.GetAPIReader(), Namespace: opts.Namespace},
		AllowPrivateTargets: opts.AllowPrivateTargets, Log: ctrl.Log.WithName("thirdparty")}
	otel := &otelexport.Exporter{Store: st, Reader: mgr.GetClient(), AllowPrivateTargets: opts.AllowPrivateTargets,
		Log: ctrl.Log.WithName("otel")}
	for _, r := range []manager.Runnable{siteHealth, thirdParty, otel} {
		if err := mgr.Add(r); err != nil {
			return nil, err
		}
	}
	// The probe API server and the engine know each other only through the
	// callbacks and the interface wired here: the server hands results to
	// the engine, the engine asks the server which agents are online.
	var eng *engine.Engine
	series := monitorSeries(opts)
	probes := probeserver.New(probeserver.Options{
		Client: mgr.GetClient(), Secrets: mgr.GetAPIReader(), Plans: resolver, ManagerNamespace: opts.Namespace,
		Ingest: func(ctx context.Context, results []probeapi.Result) (probeapi.ResultsResponse, error) {
			return eng.Ingest(ctx, results)
		},
		Contact: func(region, agent string, at time.Time) { eng.ShareContact(region, agent, at) },
		Log:     ctrl.Log.WithName("probeserver"),
	})
	eng = engine.New(engine.Options{
		TLS: expiryChecker, Subscribers: notifier, Export: otel,
		Recorder: mgr.GetEventRecorderFor("uptime-operator-engine"),
		Alerts:   alerts,
		Store:    st, Client: mgr.GetClient(), Secrets: credSecrets, Plans: resolver,
		AllowPrivateTargets: opts.AllowPrivateTargets, ManagerNamespace: opts.Namespace, LocalCheck: checks.RunOnce,
		Log:    ctrl.Log.WithName("engine"),
		Agents: probes,
		Series: seriesObserver(series),
	})
	if err := eng.SetupWithManager(ctx, mgr, opts.Retention); err != nil {
		return nil, err
	}
	if err := probes.SetupWithManager(ctx, mgr); err != nil {
		return nil, err
	}
	// The REST API finds objects by id (metadata.uid); the engine indexes
	// Monitors, the other kinds the API addresses by id are indexed here.
	for _, obj := range []client.Object{&monv1.MonitorGroup{}, &monv1.StatusPage{}, &monv1.AlertChannel{},
		&monv1.SLO{}, &monv1.MaintenanceWindow{}, &monv1.EscalationPolicy{}} {
		if err := mgr.GetFieldIndexer().IndexField(ctx, obj, monv1.UIDIndex, func(o client.Object) []string {
			return []string{string(o.GetUID())}
		}); err != nil {
			return nil, fmt.Errorf("index by uid: %w", err)
		}
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Secret{}, apikeys.HashIndex, func(o client.Object) []string {
		return []string{o.GetLabels()[apikeys.HashLabel]}
	}); err != nil {
		return nil, fmt.Errorf("index api keys by hash: %w", err)
	}
	if err := (&controllers.MonitorReconciler{
		Client: mgr.GetClient(), Secrets: credSecrets, Plans: resolver,
		Live: eng, History: st, Updates: eng.Updates(), NewHeartbeatToken: engine.NewHeartbeatToken,
		StatusWrites: controllers.NewStatusPacer(cmp.Or(opts.MonitorStatusWrites, controllers.DefaultMonitorStatusWrites)),
	}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up monitor controller: %w", err)
	}
	if err := (&controllers.ProbeRegionReconciler{
		Client: mgr.GetClient(), Agents: agentsAnywhere{eng},
		Probe: controllers.ProbeDeploymentOptions{
			Namespace: opts.Namespace, Image: opts.ProbeImage, ServerURL: opts.ProbeServerURL,
			AllowPrivate: opts.AllowPrivateTargets,
			TrustedCA:    opts.ProbeTrustedCA, ServerCA: opts.ProbeServerCA,
			ImagePullSecrets: localObjectReferences(opts.ProbeImagePullSecrets),
		},
	}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up probe region controller: %w", err)
	}
	if err := (&controllers.MaintenanceWindowReconciler{Client: mgr.GetClient(), Events: st, Alerts: alerts, Subscribers: notifier}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up maintenance window controller: %w", err)
	}
	if err := (&controllers.SLOReconciler{Client: mgr.GetClient(), Store: st, Events: st, Alerts: alerts}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up slo controller: %w", err)
	}
	if err := webhooks.SetupWithManager(mgr, webhooks.Options{
		DefaultPlan: opts.DefaultPlan, AllowPrivateTargets: opts.AllowPrivateTargets, Secrets: credSecrets,
	}); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("webhooks", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return nil, err
	}
	// Not ready while the store does not answer (PostgreSQL down): the
	// API would only answer errors, and probe results would be refused.
	if err := mgr.AddReadyzCheck("store", func(r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		return st.Ping(ctx)
	}); err != nil {
		return nil, err
	}

	m := &Manager{Manager: mgr, opts: opts, overlay: overlay, Store: st, Engine: eng, Probes: probes, Alerts: worker, apiBound: make(chan struct{}), aggBound: make(chan struct{}),
		probeBound: make(chan struct{})}
	if err := (&controllers.StatusPageReconciler{Client: mgr.GetClient(), BaseURL: opts.PublicURL}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up status page controller: %w", err)
	}
	monitors, err := apiserver.InformerMonitors(ctx, mgr.GetCache())
	if err != nil {
		return nil, err
	}
	metrics.SetOpenIncidents(func(context.Context) (map[string]int, error) {
		// Read in place from the informer: a List copied every Monitor on
		// each scrape (0.9 s of CPU at 100,000).
		open := map[string]int{}
		monitors.EachMonitor(func(m *monv1.Monitor) {
			if m.Status.OpenIncident != nil {
				open[m.Namespace]++
			} else if _, ok := open[m.Namespace]; !ok {
				open[m.Namespace] = 0 // a workspace whose incidents closed reports 0
			}
		})
		return open, nil
	})
	if series != nil {
		series.Monitors = monitors.EachMonitor
	}
	public := &statuspage.Public{Reader: mgr.GetClient(), Secrets: mgr.GetAPIReader(), Store: st, BaseURL: opts.PublicURL,
		Notifier: notifier, ThirdParty: thirdParty, SessionKey: key, Writes: overlay}
	m.api = apiserver.New(apiserver.Options{
		Client:              mgr.GetClient(),
		Overlay:             overlay,
		Reader:              mgr.GetAPIReader(),
		CredentialSecrets:   credSecrets,
		Plans:               resolver,
		Keys:                mgr.GetClient(),
		Store:               st,
		Engine:              eng,
		Public:              public,
		ChannelTester:       alerting.ChannelTester{Worker: worker},
		Subscribers:         subscriberAdapter{notifier},
		Escalation:          escalator,
		Notifier:            testMailer(opts.SMTP),
		Recipients:          confirmer,
		Monitors:            monitors,
		Expiry:              expiryChecker,
		SiteHealth:          siteHealth,
		ThirdParty:          thirdParty,
		OTel:                otel,
		Assist:              &assist.Service{Config: opts.AI, Store: st},
		PublicURL:           opts.PublicURL,
		AllowPrivateTargets: opts.AllowPrivateTargets,
		Recorder:            mgr.GetEventRecorderFor("uptime-operator-api"),
	})
	root := http.NewServeMux()
	m.probeAPI = probeapi.NewHandler(m.Probes)
	root.Handle("/probe/v1/", m.probeAPI)
	root.Handle("/mcp", m.hostedMCP())
	root.Handle("/", apiserver.Instrument(m.api.Handler()))
	m.root = opts.ClientAddresses.Middleware(root)
	if opts.BootstrapFile != "" {
		if err := mgr.Add(&bootstrap.Applier{Client: mgr.GetClient(), File: opts.BootstrapFile,
			Release: opts.BootstrapRelease, OwnerWebhook: opts.BootstrapOwner, Reader: mgr.GetAPIReader(),
			Log: ctrl.Log.WithName("bootstrap")}); err != nil {
			return nil, err
		}
	}
	if size := storeSize(opts.Store, st); size != nil {
		if err := mgr.Add(storeSizeReporter(size)); err != nil {
			return nil, err
		}
	}
	if opts.AggregatedListen != "" {
		if err := m.setupAggregated(); err != nil {
			return nil, err
		}
		if err := mgr.Add(everyReplica(m.serveAggregated)); err != nil {
			return nil, err
		}
		if err := mgr.AddReadyzCheck("aggregated-api", bound(m.aggBound, "the aggregated API listener")); err != nil {
			return nil, err
		}
	}
	if opts.ProbeListen != "" {
		if err := mgr.Add(everyReplica(m.serveProbeAPI)); err != nil {
			return nil, err
		}
		if err := mgr.AddReadyzCheck("probe-api", bound(m.probeBound, "the probe API listener")); err != nil {
			return nil, err
		}
	}
	if opts.APIListen != "" {
		if err := mgr.Add(everyReplica(m.serveAPI)); err != nil {
			return nil, err
		}
		if err := mgr.AddReadyzCheck("api", bound(m.apiBound, "the API listener")); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// rotateCerts puts the serving certificates in place before the manager
// starts (its webhook server and listeners read the files when they start)
// and keeps them renewed on every replica; the replica is not ready until
// they are in place. It reads and writes directly: the cache has not
// started.
func rotateCerts(mgr ctrl.Manager, opts certrotator.Options) error {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("certificate rotator client: %w", err)
	}
	opts.Log = ctrl.Log.WithName("certificates")
	rot := certrotator.New(c, opts)
	if err := rot.EnsureWithin(context.Background(), time.Minute); err != nil {
		return err
	}
	if err := mgr.Add(rot); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("certificates", func(*http.Request) error { return rot.Ready() })
}

// agentsAnywhere gives the ProbeRegion controller, which runs on the leader,
// the agents in contact with any replica (a region's agents may all be
// connected to others).
type agentsAnywhere struct{ e *engine.Engine }

func (a agentsAnywhere) AgentsOnline(region string, window time.Duration) (int, time.Time) {
	return a.e.AgentsOnlineAnywhere(region, window)
}

// everyReplica is a runnable that runs on every replica, leader or not.
// controller-runtime runs a runnable that does not say otherwise (a plain
// manager.RunnableFunc) on the leader only: a listener added that way leaves
// every other replica Ready behind the Services yet refusing connections.
type everyReplica func(context.Context) error

func (f everyReplica) Start(ctx context.Context) error { return f(ctx) }

// NeedLeaderElection is false: every replica serves the API, ingests the
// probe results that reach it and answers the aggregated API.
func (everyReplica) NeedLeaderElection() bool { return false }

// bound is a readiness check that passes once ch is closed (the listener is
// bound), so that Services route to a replica only when it serves.
func bound(ch <-chan struct{}, what string) healthz.Checker {
	return func(*http.Request) error {
		select {
		case <-ch:
			return nil
		default:
			return fmt.Errorf("%s is not bound yet", what)
		}
	}
}

// serveAPI runs the direct listener until ctx ends. It needs no leader: every
// replica serves the API.
func (m *Manager) serveAPI(ctx context.Context) error {
	ln, err := net.Listen("tcp", m.opts.APIListen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", m.opts.APIListen, err)
	}
	m.apiAddr = ln.Addr().String()
	close(m.apiBound)
	srv := httpserver.New(m.root, m.opts.ServerLimits)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	ctrl.Log.WithName("api").Info("serving the direct API", "address", ln.Addr().String())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve api: %w", err)
	}
	return nil
}

// ProbeAddr returns the address the probe API's TLS listener bound,
// waiting until it is bound.
func (m *Manager) ProbeAddr(ctx context.Context) (string, error) {
	select {
	case <-m.probeBound:
		return m.probeAddr, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// serveProbeAPI runs the probe API's TLS listener until ctx ends, with
// the certificate of ProbeCertDir, reloaded when it is renewed. Managed
// agents use it: they carry tokens and receive resolved credentials, which
// must not cross the cluster network in the clear.
func (m *Manager) serveProbeAPI(ctx context.Context) error {
	dir := m.opts.ProbeCertDir
	watcher, err := certwatcher.New(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		return fmt.Errorf("load probe api certificate: %w", err)
	}
	go func() { _ = watcher.Start(ctx) }()
	ln, err := tls.Listen("tcp", m.opts.ProbeListen, &tls.Config{GetCertificate: watcher.GetCertificate, MinVersion: tls.VersionTLS12})
	if err != nil {
		return fmt.Errorf("listen on %s: %w", m.opts.ProbeListen, err)
	}
	m.probeAddr = ln.Addr().String()
	close(m.probeBound)
	mux := http.NewServeMux()
	mux.Handle("/probe/v1/", m.probeAPI)
	srv := httpserver.New(m.opts.ClientAddresses.Middleware(mux), m.opts.ServerLimits)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	ctrl.Log.WithName("api").Info("serving the probe API over TLS", "address", m.probeAddr)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve probe api: %w", err)
	}
	return nil
}

// hostedMCP is the MCP tool server hosted on the direct listener. Its tools
// call the REST API in-process with the caller's own credential, so they can
// do exactly what the key can, and with the caller's address, so per-address
// limits count each MCP client on its own.
func (m *Manager) hostedMCP() http.Handler {
	api := apiserver.Instrument(m.api.Handler())
	return mcpserver.Handler(mcpserver.Options{
		APIURL: "http://127.0.0.1", Version: Version,
		CallerHTTP: func(r *http.Request) *http.Client {
			return &http.Client{Transport: inProcess{h: api, remoteAddr: net.JoinHostPort(clientip.From(r), "0")}}
		},
	})
}

// Version is the running build's version, set by the CLI.
var Version = "dev"

// setupAggregated loads or makes the aggregated API's serving certificate
// and builds its handler around the REST API.
func (m *Manager) setupAggregated() error {
	if dir := m.opts.AggregatedCertDir; dir != "" {
		// Reloaded when renewed (cert-manager, the certificate rotator).
		w, err := certwatcher.New(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
		if err != nil {
			return fmt.Errorf("load aggregated api certificate: %w", err)
		}
		m.aggWatch = w
	} else {
		ca, err := certs.NewCA("uptime-operator-aggregated-ca")
		if err != nil {
			return err
		}
		name := m.opts.AggregatedDNSName
		if name == "" {
			name = "uptime-operator-aggregated." + m.opts.Namespace + ".svc"
		}
		if m.aggCert, err = ca.ServingCert(name, "localhost"); err != nil {
			return err
		}
		m.aggCA = ca.CertPEM
	}
	// Behind the aggregated door the REST API and MCP are served for the
	// Kubernetes identity kube-apiserver vouched for; MCP tools call the REST
	// handler in-process as that same caller.
	api := http.NewServeMux()
	api.Handle("/mcp", mcpserver.Handler(mcpserver.Options{
		APIURL: "http://127.0.0.1", Version: Version,
		Identity: func(r *http.Request) (mcpserver.Identity, bool) {
			c := apiserver.CallerFrom(r.Context())
			if c == nil {
				return mcpserver.Identity{}, false
			}
			return mcpserver.Identity{ID: c.Namespace + "/" + c.User, ReadOnly: c.Level == apikeys.ReadOnly,
				HTTP: &http.Client{Transport: inProcess{h: m.api.Handler(), caller: c}}}, true
		},
	}))
	api.Handle("/", apiserver.Instrument(m.api.Handler()))
	kube, err := kubernetes.NewForConfig(m.GetConfig())
	if err != nil {
		return fmt.Errorf("aggregated api client: %w", err)
	}
	m.aggregated, err = aggregated.New(aggregated.Options{Kube: kube, API: api, Inject: apiserver.InjectIdentity})
	return err
}

// inProcess serves REST requests in this process as an authenticated
// caller, without a network hop or an API key.
type inProcess struct {
	h http.Handler
	// caller, when set, is the aggregated door's authenticated caller;
	// without one the request authenticates with its own key.
	caller *apiserver.Caller
	// remoteAddr is the address the REST API sees (per-address limits);
	// empty is loopback.
	remoteAddr string
}

// RoundTrip implements http.RoundTripper.
func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	r := req.Clone(req.Context())
	if t.caller != nil {
		r = apiserver.WithCaller(r, t.caller)
	}
	r.RequestURI = r.URL.RequestURI()
	r.RemoteAddr = t.remoteAddr
	if r.RemoteAddr == "" {
		r.RemoteAddr = "127.0.0.1:0"
	}
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// serveAggregated runs the aggregated API listener until ctx ends.
func (m *Manager) serveAggregated(ctx context.Context) error {
	if err := m.aggregated.Start(ctx); err != nil {
		return err
	}
	cfg := m.aggregated.TLSConfig(m.aggCert)
	if m.aggWatch != nil {
		go func() { _ = m.aggWatch.Start(ctx) }()
		cfg.Certificates, cfg.GetCertificate = nil, m.aggWatch.GetCertificate
	}
	ln, err := tls.Listen("tcp", m.opts.AggregatedListen, cfg)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", m.opts.AggregatedListen, err)
	}
	m.aggAddr = ln.Addr().String()
	close(m.aggBound)
	srv := httpserver.New(m.aggregated, m.opts.ServerLimits)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	ctrl.Log.WithName("api").Info("serving the aggregated API", "address", m.aggAddr)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve aggregated api: %w", err)
	}
	return nil
}

// cacheByObject narrows what the cache watches. API keys are the only
// Secrets read on every request, so only they are cached (in
// secretNamespaces only, when given); the Secrets Monitors may reference
// have their own label-selected cache (credsecrets), other Secrets are read
// directly when needed, which keeps the manager's memory independent of
// the cluster's Secret count. Probe Deployments, their PodDisruptionBudgets and ServiceAccount
// live in the probe namespace (the manager's), where the manager's RBAC Role
// allows them, so they are watched there only: a cluster-wide watch would
// need a cluster-wide grant.
func cacheByObject(probeNamespace string, secretNamespaces []string) map[client.Object]cache.ByObject {
	keys := cache.ByObject{Label: apiKeySelector()}
	if len(secretNamespaces) > 0 {
		keys.Namespaces = map[string]cache.Config{}
		for _, ns := range secretNamespaces {
			keys.Namespaces[ns] = cache.Config{}
		}
	}
	by := map[client.Object]cache.ByObject{&corev1.Secret{}: keys}
	if probeNamespace != "" {
		only := map[string]cache.Config{probeNamespace: {}}
		by[&appsv1.Deployment{}] = cache.ByObject{Namespaces: only}
		by[&corev1.ServiceAccount{}] = cache.ByObject{Namespaces: only}
		by[&policyv1.PodDisruptionBudget{}] = cache.ByObject{Namespaces: only}
	}
	return by
}

func apiKeySelector() labels.Selector {
	req, err := labels.NewRequirement(apikeys.HashLabel, selection.Exists, nil)
	utilruntimeMust(err)
	return labels.NewSelector().Add(*req)
}

// sqlitePath is the database file of a SQLite store spec.
func sqlitePath(spec string) (string, bool) {
	if strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://") {
		return "", false
	}
	path := strings.TrimPrefix(spec, "sqlite://")
	if path == "" {
		path = "uptime-operator.db"
	}
	return path, true
}

// storeSizeReporter publishes the store's size on every replica, not only
// on the leader: a scrape of any manager Pod shows it, and the replicas
// share one store, so they report the same figure (aggregate with max).
func storeSizeReporter(size func(context.Context) (int64, error)) everyReplica {
	return func(ctx context.Context) error { return reportStoreSize(ctx, size) }
}

// reportStoreSize publishes the store's size, as size measures it, every
// minute until ctx ends.
func reportStoreSize(ctx context.Context, size func(context.Context) (int64, error)) error {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		if n, err := size(ctx); err == nil {
			metrics.StoreBytes.Set(float64(n))
		} else if ctx.Err() == nil {
			ctrl.Log.WithName("store").Info("unable to measure the store", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// storeSize measures the store of spec: the SQLite file and its WAL, or
// the PostgreSQL database; nil when neither applies.
func storeSize(spec string, st store.Store) func(context.Context) (int64, error) {
	if pg, ok := st.(*postgres.Store); ok {
		return func(ctx context.Context) (int64, error) {
			var n int64
			err := pg.Pool().QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n)
			return n, err
		}
	}
	path, ok := sqlitePath(spec)
	if !ok {
		return nil
	}
	return func(context.Context) (int64, error) {
		var total int64
		for _, f := range []string{path, path + "-wal"} {
			if fi, err := os.Stat(f); err == nil {
				total += fi.Size()
			}
		}
		return total, nil
	}
}

// OpenStore opens the store named by spec: a postgres:// or postgresql://
// DSN, or a SQLite file path (optionally sqlite://PATH); empty means
// uptime-operator.db in the working directory.
func OpenStore(ctx context.Context, spec string) (store.Store, error) {
	switch {
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		s, err := postgres.Open(ctx, spec, postgres.Options{})
		if err != nil {
			return nil, fmt.Errorf("open postgres store: %w", err)
		}
		return s, nil
	default:
		path, _ := sqlitePath(spec)
		s, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
		}
		return s, nil
	}
}

// testMailer sends the test-notification email through SMTP; nil without
// an SMTP server (the endpoint then answers CHANNEL_UNAVAILABLE).
func testMailer(smtp *alerting.SMTP) apiserver.Notifier {
	if smtp == nil {
		return nil
	}
	return smtpTestMailer{*smtp}
}

type smtpTestMailer struct{ smtp alerting.SMTP }

// SendTestEmail sends a test alert email for monitorName to to.
func (m smtpTestMailer) SendTestEmail(ctx context.Context, to, monitorName string) error {
	return m.smtp.Send(ctx, alerting.MailMessage{To: []string{to},
		Subject: "Test notification: " + monitorName,
		Text:    "This is a test notification from uptime-operator for the monitor " + monitorName + ".\nAlerts for this monitor will reach this address."})
}

// subscriberAdapter exposes the status page notifier to the REST API.
type subscriberAdapter struct{ *statuspage.Notifier }

// SubscriberList lists a page's subscribers by channel.
func (a subscriberAdapter) SubscriberList(ctx context.Context, pageUID string) (any, error) {
	return a.Subscribers(ctx, pageUID)
}

// replicaID names this replica as the owner of outbox leases.
func replicaID() string {
	if name := os.Getenv("POD_NAME"); name != "" {
		return name
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// localObjectReferences turns Secret names into Pod image pull secrets.
func localObjectReferences(names []string) []corev1.LocalObjectReference {
	var out []corev1.LocalObjectReference
	for _, n := range names {
		out = append(out, corev1.LocalObjectReference{Name: n})
	}
	return out
}
