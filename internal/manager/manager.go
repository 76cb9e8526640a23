// Package manager assembles the uptime-operator manager: the controllers, the
// admission webhooks and the direct API listener, on one controller-runtime
// manager. `uptime-operator manager` runs it in a cluster and
// `uptime-operator dev` runs it against a local control plane.
package manager

import (
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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/controllers"
	"github.com/uptime-operator/uptime-operator/internal/aggregated"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/certrotator"
	"github.com/uptime-operator/uptime-operator/internal/certs"
	"github.com/uptime-operator/uptime-operator/internal/clientip"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/httpserver"
	"github.com/uptime-operator/uptime-operator/internal/mcpserver"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/postgres"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
	"github.com/uptime-operator/uptime-operator/internal/trust"
	"github.com/uptime-operator/uptime-operator/internal/writethrough"
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
	// OIDC is the OpenID Connect provider that sso status pages sign in
	// with (empty IssuerURL: none, and sso pages are refused).
	OIDC statuspage.OIDC
}

// DefaultMonitorStatusWrites is the default of Options.MonitorStatusWrites.
const DefaultMonitorStatusWrites = controllers.DefaultMonitorStatusWrites

// Scheme returns a scheme with the core kinds and ours.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntimeMust(clientgoscheme.AddToScheme(s))
	utilruntimeMust(monv1.AddToScheme(s))
	utilruntimeMust(gatewayv1.Install(s)) // read by monitor discovery when the cluster serves it
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

func (a agentsAnywhere) RegionAgents(region string, window time.Duration) (store.AgentPresence, store.RegionReplays) {
	return a.e.RegionAgentsAnywhere(region, window)
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
// secretNamespaces only, when given), trimmed to what a key holds
// (apikeys.TrimForCache: a large Secret someone labels costs its metadata
// only); the Secrets Monitors may reference
// have their own label-selected cache (credsecrets), other Secrets are read
// directly when needed, which keeps the manager's memory independent of
// the cluster's Secret count. Probe Deployments, their PodDisruptionBudgets and ServiceAccount
// live in the probe namespace (the manager's), where the manager's RBAC Role
// allows them, so they are watched there only: a cluster-wide watch would
// need a cluster-wide grant.
func cacheByObject(probeNamespace string, secretNamespaces []string) map[client.Object]cache.ByObject {
	keys := cache.ByObject{Label: apiKeySelector(), Transform: apikeys.TrimForCache}
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
func (a subscriberAdapter) SubscriberList(ctx context.Context, pageUID string) (restapi.PageSubscribers, error) {
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
