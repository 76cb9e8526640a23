package manager

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/controllers"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/bootstrap"
	"github.com/uptime-operator/uptime-operator/internal/credsecrets"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/expiry"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/otelexport"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
	"github.com/uptime-operator/uptime-operator/internal/sitehealth"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/thirdparty"
	"github.com/uptime-operator/uptime-operator/internal/writethrough"
	checks "github.com/uptime-operator/uptime-operator/probes"
	"github.com/uptime-operator/uptime-operator/webhooks"
)

// New builds the manager with every controller, webhook and listener: the
// steps below, in order, each wiring one part of the product onto what the
// earlier ones made.
func New(cfg *rest.Config, opts Options) (*Manager, error) {
	w, err := newWiring(cfg, opts)
	if err != nil {
		return nil, err
	}
	for _, step := range []struct {
		name string
		run  func() error
	}{
		{"alerting", w.setupAlerting},
		{"status pages", w.setupStatusPages},
		{"background services", w.setupServices},
		{"engine and probe API", w.setupEngine},
		{"indexes", w.setupIndexes},
		{"controllers", w.setupControllers},
		{"webhooks and health checks", w.setupChecks},
		{"REST API", w.setupAPI},
		{"listeners", w.setupListeners},
	} {
		if err := step.run(); err != nil {
			return nil, fmt.Errorf("set up %s: %w", step.name, err)
		}
	}
	return w.m, nil
}

// wiring is what the setup steps of New share: the controller-runtime
// manager, the store and the services built so far.
type wiring struct {
	ctx         context.Context
	opts        Options
	mgr         ctrl.Manager
	overlay     *writethrough.Overlay
	st          store.Store
	resolver    *plans.Resolver
	credSecrets *credsecrets.Cache

	confirmer  *recipients.Confirmer
	worker     *alerting.Worker
	alerts     alerting.EngineAlerts
	escalator  *alerting.Escalator
	key        []byte
	notifier   *statuspage.Notifier
	expiry     *expiry.Checker
	siteHealth *sitehealth.Service
	thirdParty *thirdparty.Service
	otel       *otelexport.Exporter
	series     *metrics.MonitorSeries
	eng        *engine.Engine
	probes     *probeserver.Server
	m          *Manager
}

// newWiring makes the controller-runtime manager, the certificates, the
// Secret cache and the store.
func newWiring(cfg *rest.Config, opts Options) (*wiring, error) {
	if opts.LeaderElectionNamespace == "" {
		// The Lease lives in the manager's namespace; controller-runtime's
		// own default reads the in-cluster namespace file, which a manager
		// run outside a Pod (a kubeconfig) does not have.
		opts.LeaderElectionNamespace = opts.Namespace
	}
	// Every reader of the manager's cache sees what the REST API wrote at
	// once (read-your-writes): the API records its writes in the overlay,
	// and the cache lays them over its answers until the informer has them.
	w := &wiring{ctx: context.Background(), opts: opts, overlay: &writethrough.Overlay{}}
	var err error
	w.mgr, err = ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme(),
		NewCache:                w.overlay.NewCache(nil),
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
		if err := rotateCerts(w.mgr, *opts.CertRotation); err != nil {
			return nil, err
		}
	}
	w.resolver = &plans.Resolver{Reader: w.mgr.GetClient(), DefaultPlan: opts.DefaultPlan}
	// The Secrets Monitors may reference, and no other (package credsecrets).
	w.credSecrets, err = credsecrets.New(cfg, credsecrets.Options{Scheme: w.mgr.GetScheme(), Namespaces: opts.SecretNamespaces, Direct: w.mgr.GetAPIReader()})
	if err != nil {
		return nil, err
	}
	if err := w.mgr.Add(w.credSecrets); err != nil {
		return nil, err
	}
	if w.st, err = OpenStore(w.ctx, opts.Store); err != nil {
		return nil, err
	}
	return w, nil
}

// add adds runnables to the manager.
func (w *wiring) add(rs ...manager.Runnable) error {
	for _, r := range rs {
		if err := w.mgr.Add(r); err != nil {
			return err
		}
	}
	return nil
}

// setupAlerting wires the delivery worker, recipient confirmation, routing,
// escalation and the AlertChannel controller.
func (w *wiring) setupAlerting() error {
	mgr, opts := w.mgr, w.opts
	w.confirmer = &recipients.Confirmer{Reader: mgr.GetClient(), Store: w.st, BaseURL: opts.PublicURL,
		Required: opts.RequireRecipientConfirmation, Log: ctrl.Log.WithName("recipients")}
	if opts.SMTP != nil && opts.SMTP.Addr != "" {
		smtp := *opts.SMTP
		w.confirmer.Mailer = recipients.MailerFunc(func(ctx context.Context, to, subject, text string) error {
			return smtp.Send(ctx, alerting.MailMessage{To: []string{to}, Subject: subject, Text: text})
		})
	}
	w.worker = &alerting.Worker{
		Store: w.st, Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Owner: replicaID(),
		AllowPrivateTargets: opts.AllowPrivateTargets, Retention: opts.Retention, RetryWindow: opts.DeliveryRetryWindow, Recipients: w.confirmer,
		SMTP: opts.SMTP, Twilio: opts.Twilio, Recorder: mgr.GetEventRecorderFor("uptime-operator-alerting"),
	}
	if err := w.add(w.worker, w.confirmer); err != nil {
		return err
	}
	w.alerts = alerting.EngineAlerts{Router: &alerting.Router{Reader: mgr.GetClient(), BaseURL: opts.PublicURL}, Kick: w.worker.Kick}
	if err := (&controllers.AlertChannelReconciler{Client: mgr.GetClient(), Secrets: mgr.GetAPIReader()}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("alert channel controller: %w", err)
	}
	w.escalator = &alerting.Escalator{Store: w.st, Reader: mgr.GetClient(), Router: w.alerts.Router, Kick: w.worker.Kick}
	if err := alerting.IndexMonitors(w.ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return w.add(w.escalator)
}

// setupStatusPages wires the signing key, the subscriber notifier and the
// outbox targets of the delivery worker.
func (w *wiring) setupStatusPages() error {
	mgr, opts := w.mgr, w.opts
	key, err := signingKey(w.ctx, mgr.GetAPIReader(), mgr.GetClient(), opts.Namespace)
	if err != nil {
		// Without the Secret (no namespace, no RBAC) each process makes its
		// own key; say what that costs.
		ctrl.Log.WithName("statuspage").Error(err, "no shared signing key: status page sessions, unsubscribe links and subscriber webhook secrets change when the manager restarts")
	}
	w.key = key
	w.notifier = &statuspage.Notifier{
		Reader: mgr.GetClient(), Store: w.st, Kick: w.worker.Kick, Sign: alerting.Sign, BaseURL: opts.PublicURL,
		AllowPrivateTargets: opts.AllowPrivateTargets, Key: key,
	}
	// Subscriber notifications and recipient confirmations are delivered by
	// the alerting worker, through the outbox.
	w.confirmer.Key, w.confirmer.Kick = key, w.worker.Kick
	w.worker.Targets = map[string]alerting.Target{statuspage.OutboxPrefix: w.notifier, recipients.OutboxPrefix: w.confirmer}
	if opts.SMTP != nil {
		smtp := *opts.SMTP
		w.notifier.Mailer = statuspage.MailerFunc(func(ctx context.Context, to, subject, text string) error {
			return smtp.Send(ctx, alerting.MailMessage{To: []string{to}, Subject: subject, Text: text})
		})
	}
	return nil
}

// setupServices wires the services that run beside the engine: certificate
// and domain expiry, website health, third-party status and the OTLP export.
func (w *wiring) setupServices() error {
	mgr, opts := w.mgr, w.opts
	w.expiry = &expiry.Checker{
		Store: w.st, Reader: mgr.GetClient(), Notifier: w.alerts.Router, Kick: w.worker.Kick, RDAPBaseURL: opts.RDAPURL,
		AllowPrivateTargets: opts.AllowPrivateTargets, Log: ctrl.Log.WithName("expiry"),
	}
	w.siteHealth = &sitehealth.Service{Store: w.st, Notifier: w.alerts.Router, Kick: w.worker.Kick, Auditor: &sitehealth.Auditor{},
		AllowPrivateTargets: opts.AllowPrivateTargets, Log: ctrl.Log.WithName("sitehealth")}
	w.thirdParty = &thirdparty.Service{Store: w.st, Notifier: w.alerts.Router, Kick: w.worker.Kick,
		Catalog:             &thirdparty.Catalog{Reader: mgr.GetAPIReader(), Namespace: opts.Namespace},
		AllowPrivateTargets: opts.AllowPrivateTargets, Log: ctrl.Log.WithName("thirdparty")}
	w.otel = &otelexport.Exporter{Store: w.st, Reader: mgr.GetClient(), AllowPrivateTargets: opts.AllowPrivateTargets,
		Log: ctrl.Log.WithName("otel")}
	return w.add(w.expiry, w.siteHealth, w.thirdParty, w.otel)
}

// setupEngine wires the incident engine and the manager side of the probe
// API. They know each other only through the callbacks and the interface
// wired here: the server hands results to the engine, the engine asks the
// server which agents are online.
func (w *wiring) setupEngine() error {
	mgr, opts := w.mgr, w.opts
	var eng *engine.Engine
	w.series = monitorSeries(opts)
	w.probes = probeserver.New(probeserver.Options{
		Client: mgr.GetClient(), Secrets: mgr.GetAPIReader(), Plans: w.resolver, ManagerNamespace: opts.Namespace,
		Ingest: func(ctx context.Context, results []probeapi.Result) (probeapi.ResultsResponse, error) {
			return eng.Ingest(ctx, results)
		},
		Contact: func(region, agent string, at time.Time) { eng.ShareContact(region, agent, at) },
		Report: func(region, agent string, at time.Time, backlog, replayed int) {
			eng.ShareReport(region, agent, at, backlog, replayed)
		},
		Log: ctrl.Log.WithName("probeserver"),
	})
	eng = engine.New(engine.Options{
		TLS: w.expiry, Subscribers: w.notifier, Export: w.otel,
		Recorder: mgr.GetEventRecorderFor("uptime-operator-engine"),
		Alerts:   w.alerts,
		Store:    w.st, Client: mgr.GetClient(), Secrets: w.credSecrets, Plans: w.resolver,
		AllowPrivateTargets: opts.AllowPrivateTargets, ManagerNamespace: opts.Namespace, LocalCheck: checks.RunOnce,
		Log:    ctrl.Log.WithName("engine"),
		Agents: w.probes,
		Series: seriesObserver(w.series),
	})
	w.eng = eng
	if err := eng.SetupWithManager(w.ctx, mgr, opts.Retention); err != nil {
		return err
	}
	return w.probes.SetupWithManager(w.ctx, mgr)
}

// setupIndexes adds the cache indexes the REST API looks objects up by.
func (w *wiring) setupIndexes() error {
	// The REST API finds objects by id (metadata.uid); the engine indexes
	// Monitors, the other kinds the API addresses by id are indexed here.
	for _, obj := range []client.Object{&monv1.MonitorGroup{}, &monv1.StatusPage{}, &monv1.AlertChannel{},
		&monv1.SLO{}, &monv1.MaintenanceWindow{}, &monv1.EscalationPolicy{}} {
		if err := w.mgr.GetFieldIndexer().IndexField(w.ctx, obj, monv1.UIDIndex, func(o client.Object) []string {
			return []string{string(o.GetUID())}
		}); err != nil {
			return fmt.Errorf("index by uid: %w", err)
		}
	}
	if err := w.mgr.GetFieldIndexer().IndexField(w.ctx, &corev1.Secret{}, apikeys.HashIndex, func(o client.Object) []string {
		return []string{o.GetLabels()[apikeys.HashLabel]}
	}); err != nil {
		return fmt.Errorf("index api keys by hash: %w", err)
	}
	return nil
}

// setupControllers wires the reconcilers of the API's kinds (AlertChannels
// are wired with alerting).
func (w *wiring) setupControllers() error {
	mgr, opts := w.mgr, w.opts
	for _, c := range []struct {
		name string
		r    interface{ SetupWithManager(ctrl.Manager) error }
	}{
		{"monitor", &controllers.MonitorReconciler{
			Client: mgr.GetClient(), Secrets: w.credSecrets, Plans: w.resolver,
			Live: w.eng, History: w.st, Updates: w.eng.Updates(), NewHeartbeatToken: engine.NewHeartbeatToken,
			StatusWrites: controllers.NewStatusPacer(cmp.Or(opts.MonitorStatusWrites, controllers.DefaultMonitorStatusWrites)),
		}},
		{"probe region", &controllers.ProbeRegionReconciler{
			Client: mgr.GetClient(), Agents: agentsAnywhere{w.eng},
			Probe: controllers.ProbeDeploymentOptions{
				Namespace: opts.Namespace, Image: opts.ProbeImage, ServerURL: opts.ProbeServerURL,
				AllowPrivate: opts.AllowPrivateTargets, MetricsSecure: opts.MetricsSecure,
				TrustedCA: opts.ProbeTrustedCA, ServerCA: opts.ProbeServerCA,
				ImagePullSecrets: localObjectReferences(opts.ProbeImagePullSecrets),
			},
		}},
		{"maintenance window", &controllers.MaintenanceWindowReconciler{Client: mgr.GetClient(), Events: w.st, Alerts: w.alerts, Subscribers: w.notifier}},
		{"slo", &controllers.SLOReconciler{Client: mgr.GetClient(), Store: w.st, Events: w.st, Alerts: w.alerts}},
		{"on-call schedule", &controllers.OnCallScheduleReconciler{Client: mgr.GetClient()}},
		{"escalation policy", &controllers.EscalationPolicyReconciler{Client: mgr.GetClient()}},
		{"monitor group", &controllers.MonitorGroupReconciler{Client: mgr.GetClient()}},
		{"status page", &controllers.StatusPageReconciler{Client: mgr.GetClient(), BaseURL: opts.PublicURL}},
		{"monitor template", &controllers.MonitorTemplateReconciler{Client: mgr.GetClient()}},
	} {
		if err := c.r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("%s controller: %w", c.name, err)
		}
	}
	return nil
}

// setupChecks wires the admission webhooks and the health and readiness
// checks.
func (w *wiring) setupChecks() error {
	mgr, opts := w.mgr, w.opts
	if err := webhooks.SetupWithManager(mgr, webhooks.Options{
		DefaultPlan: opts.DefaultPlan, AllowPrivateTargets: opts.AllowPrivateTargets, Secrets: w.credSecrets,
		SSOUnavailable: statuspage.SSOUnavailable(opts.OIDC, opts.PublicURL),
	}); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhooks", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	// Not ready while the store does not answer (PostgreSQL down): the
	// API would only answer errors, and probe results would be refused.
	st := w.st
	return mgr.AddReadyzCheck("store", func(r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		return st.Ping(ctx)
	})
}

// setupAPI builds the REST API, the public endpoints and the root handler of
// the direct listener, and the metrics read from the Monitor informer.
func (w *wiring) setupAPI() error {
	mgr, opts := w.mgr, w.opts
	w.m = &Manager{Manager: mgr, opts: opts, overlay: w.overlay, Store: w.st, Engine: w.eng, Probes: w.probes, Alerts: w.worker,
		apiBound: make(chan struct{}), aggBound: make(chan struct{}), probeBound: make(chan struct{})}
	monitors, err := apiserver.InformerMonitors(w.ctx, mgr.GetCache())
	if err != nil {
		return err
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
	if w.series != nil {
		w.series.Monitors = monitors.EachMonitor
	}
	public := &statuspage.Public{Reader: mgr.GetClient(), Secrets: mgr.GetAPIReader(), Store: w.st, BaseURL: opts.PublicURL,
		Notifier: w.notifier, ThirdParty: w.thirdParty, SessionKey: w.key, Writes: w.overlay, OIDC: opts.OIDC}
	w.m.api = apiserver.New(apiserver.Options{
		Client:            mgr.GetClient(),
		Overlay:           w.overlay,
		Reader:            mgr.GetAPIReader(),
		CredentialSecrets: w.credSecrets,
		Plans:             w.resolver,
		Keys:              mgr.GetClient(),
		Store:             w.st,
		Engine:            w.eng,
		Public:            public,
		Alerting: apiserver.Alerting{
			ChannelTester: alerting.ChannelTester{Worker: w.worker},
			Subscribers:   subscriberAdapter{w.notifier},
			Escalation:    w.escalator,
			Notifier:      testMailer(opts.SMTP),
			Recipients:    w.confirmer,
		},
		Monitors: monitors,
		Features: apiserver.Features{
			Expiry:     w.expiry,
			SiteHealth: w.siteHealth,
			ThirdParty: w.thirdParty,
			OTel:       w.otel,
			Assist:     &assist.Service{Config: opts.AI, Store: w.st},
		},
		PublicURL:           opts.PublicURL,
		SSOUnavailable:      statuspage.SSOUnavailable(opts.OIDC, opts.PublicURL),
		AllowPrivateTargets: opts.AllowPrivateTargets,
		Recorder:            mgr.GetEventRecorderFor("uptime-operator-api"),
	})
	root := http.NewServeMux()
	w.m.probeAPI = probeapi.NewHandler(w.probes)
	root.Handle("/probe/v1/", w.m.probeAPI)
	root.Handle("/mcp", w.m.hostedMCP())
	root.Handle("/", apiserver.Instrument(w.m.api.Handler()))
	w.m.root = opts.ClientAddresses.Middleware(root)
	return nil
}

// setupListeners adds the bootstrap applier, the store size reporter and the
// listeners every replica serves, each with its readiness check.
func (w *wiring) setupListeners() error {
	mgr, opts, m := w.mgr, w.opts, w.m
	if opts.BootstrapFile != "" {
		if err := w.add(&bootstrap.Applier{Client: mgr.GetClient(), File: opts.BootstrapFile,
			Release: opts.BootstrapRelease, OwnerWebhook: opts.BootstrapOwner, Reader: mgr.GetAPIReader(),
			Validate: webhooks.BootstrapValidator(mgr.GetAPIReader()),
			Log:      ctrl.Log.WithName("bootstrap")}); err != nil {
			return err
		}
	}
	if size := storeSize(opts.Store, w.st); size != nil {
		if err := w.add(storeSizeReporter(size)); err != nil {
			return err
		}
	}
	if opts.AggregatedListen != "" {
		if err := m.setupAggregated(); err != nil {
			return err
		}
		if err := w.add(everyReplica(m.serveAggregated)); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("aggregated-api", bound(m.aggBound, "the aggregated API listener")); err != nil {
			return err
		}
	}
	if opts.ProbeListen != "" {
		if err := w.add(everyReplica(m.serveProbeAPI)); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("probe-api", bound(m.probeBound, "the probe API listener")); err != nil {
			return err
		}
	}
	if opts.APIListen != "" {
		if err := w.add(everyReplica(m.serveAPI)); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("api", bound(m.apiBound, "the API listener")); err != nil {
			return err
		}
	}
	return nil
}
