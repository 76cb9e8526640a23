package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/certrotator"
	"github.com/uptime-operator/uptime-operator/internal/clientip"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// managerFlags registers the manager's flags on fs.
func managerFlags(fs *flag.FlagSet, o *manager.Options) (finish func() error) {
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8443", "address of the metrics endpoint (0 disables)")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", true, "serve metrics over TLS to callers with a bearer token that kube-apiserver authenticates and authorizes for get on /metrics (false: plain HTTP to anyone)")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "directory with the metrics endpoint's tls.crt and tls.key, reloaded when they change (empty: a self-signed certificate)")
	fs.BoolVar(&o.MonitorSeries, "monitor-metrics", false, "export per-monitor series (up and response time per region, certificate expiry, open incident) on the metrics endpoint")
	fs.IntVar(&o.MonitorSeriesMax, "monitor-metrics-max", metrics.DefaultMonitorSeriesMax, "most monitors the per-monitor series cover (the oldest first); the others are counted in uptime_operator_monitor_series_dropped_total")
	fs.Float64Var(&o.MonitorStatusWrites, "monitor-status-writes", manager.DefaultMonitorStatusWrites, "Monitor status writes per second to kube-apiserver at most, across all Monitors (a changed status waits for its turn; checks, incidents and alerts do not)")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", "", "address of Go's /debug/pprof/ profiles (empty disables; never expose it)")
	fs.StringVar(&o.HealthAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.IntVar(&o.WebhookPort, "webhook-port", 9443, "port of the admission webhook server")
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory with the webhook's tls.crt and tls.key")
	fs.StringVar(&o.APIListen, "api-listen", ":8080", "address of the direct REST API listener")
	fs.StringVar(&o.AggregatedListen, "aggregated-listen", "", "TLS address of the aggregated API kube-apiserver proxies to (empty disables)")
	fs.StringVar(&o.AggregatedCertDir, "aggregated-cert-dir", "", "directory with the aggregated API's tls.crt and tls.key (empty: self-signed)")
	rotate := fs.Bool("cert-rotation", false, "keep the serving certificates at runtime: a CA and the webhook and API certificates in Secrets of --namespace, made at start, renewed before expiry, written to --webhook-cert-dir, --aggregated-cert-dir and --probe-cert-dir, and the CA bundle injected into the webhook configurations and APIServices named below")
	var rot certrotator.Options
	fs.StringVar(&rot.CASecret, "cert-rotation-ca-secret", "uptime-operator-ca", "Secret of the serving CA (with --cert-rotation)")
	webhookSecret := fs.String("cert-rotation-webhook-secret", "uptime-operator-webhook-cert", "Secret of the webhook serving certificate")
	webhookDNS := fs.String("cert-rotation-webhook-dns-names", "", "comma-separated DNS names of the webhook certificate (the webhook Service's)")
	apiSecret := fs.String("cert-rotation-api-secret", "uptime-operator-api-cert", "Secret of the API (aggregated and probe) serving certificate")
	apiDNS := fs.String("cert-rotation-api-dns-names", "", "comma-separated DNS names of the API certificate (the aggregated and API Services')")
	mutating := fs.String("cert-rotation-mutating-webhooks", "", "comma-separated MutatingWebhookConfigurations whose caBundle is kept")
	validating := fs.String("cert-rotation-validating-webhooks", "", "comma-separated ValidatingWebhookConfigurations whose caBundle is kept")
	apiServices := fs.String("cert-rotation-apiservices", "", "comma-separated APIServices whose caBundle is kept")
	fs.DurationVar(&rot.CertValidity, "cert-rotation-validity", certrotator.DefaultCertValidity, "validity of each serving certificate; renewed when a third is left")
	fs.BoolVar(&o.LeaderElection, "leader-elect", false, "elect a leader so only one replica reconciles")
	fs.StringVar(&o.DefaultPlan, "default-plan", "", "Plan for namespaces without the uptime-operator.io/plan label (empty: unlimited)")
	fs.BoolVar(&o.AllowPrivateTargets, "allow-private-targets", false, "allow monitors and webhooks to target private, loopback and link-local addresses")
	trustedProxies := fs.String("trusted-proxies", "", "comma-separated CIDRs of the proxies (Ingress, Gateway) in front of the direct listener; their forwarding header names the client address for per-address limits (empty: the TCP peer is the client)")
	forwardedHeader := fs.String("forwarded-header", clientip.HeaderXForwardedFor, "the header the trusted proxies append the client address to: X-Forwarded-For or Forwarded")
	fs.StringVar(&o.Store, "store", "/data/uptime-operator.db", "history store: a SQLite file path (sqlite://PATH) or a postgres:// DSN (a DSN with a password belongs in --store-file: arguments are readable by every process that can list processes)")
	storeFile := fs.String("store-file", "", "file holding the --store value, for a postgres:// DSN with its password (mount it from a Secret); excludes --store")
	fs.DurationVar(&o.Retention, "retention", 30*24*time.Hour, "how long raw check results are kept (rollups are kept longer)")
	fs.DurationVar(&o.DeliveryRetryWindow, "delivery-retry-window", 0, "after the 6 attempts of the webhook schedule (5, 10, 20, 40, 80 s), keep retrying a delivery that fails with a retryable error every 80 s until this long after it was queued, so a receiver down for longer than the schedule still gets it (0: give up after the 6th attempt, as the webhook specification says)")
	fs.StringVar(&o.Namespace, "namespace", envOr("POD_NAMESPACE", "uptime-operator-system"), "the manager's namespace")
	secretNamespaces := fs.String("secret-namespaces", "", "comma-separated namespaces whose Secrets the manager watches (API keys, Secrets monitors may reference), for RBAC that grants Secrets only there (empty: every namespace)")
	fs.StringVar(&o.ProbeImage, "probe-image", "", "image of managed probe Deployments (empty: no Deployments)")
	fs.StringVar(&o.ProbeServerURL, "probe-server-url", "", "probe API URL as probe pods reach it")
	probePullSecrets := fs.String("probe-image-pull-secrets", "", "comma-separated Secrets of the manager's namespace that managed probe pods pull their image with")
	fs.StringVar(&o.ProbeListen, "probe-listen", "", "TLS address of a listener serving only the probe API, for managed agents (empty: none)")
	fs.StringVar(&o.ProbeCertDir, "probe-cert-dir", "", "directory with the probe API listener's tls.crt and tls.key (reloaded when renewed)")
	probeServerCA := fs.String("probe-server-ca-secret", "", "Secret of the manager's namespace whose CA bundle managed probe pods verify the probe API's certificate against (--server-ca-file of the agents; only the key is mounted)")
	probeServerCAKey := fs.String("probe-server-ca-key", "ca.crt", "key of the CA bundle in that Secret")
	fs.StringVar(&o.BootstrapFile, "bootstrap-file", "", "YAML file of ProbeRegions and Plans to apply once this replica leads, deleting those labelled with --bootstrap-release that it no longer declares (the Helm chart's regions and plans)")
	fs.StringVar(&o.BootstrapRelease, "bootstrap-release", "", "value of the uptime-operator.io/helm-bootstrap label on what --bootstrap-file declares")
	fs.StringVar(&o.BootstrapOwner, "bootstrap-owner", "", "ValidatingWebhookConfiguration of the release that owns what --bootstrap-file declares, so uninstalling the release deletes it (empty: no owner)")
	fs.StringVar(&o.PublicURL, "public-url", "", "external base URL of the direct listener")
	fs.StringVar(&o.OIDC.IssuerURL, "oidc-issuer-url", "", "issuer URL of the OpenID Connect provider that sso status pages sign in with (empty: sso pages are refused)")
	fs.StringVar(&o.OIDC.ClientID, "oidc-client-id", "", "client id registered at the OpenID provider, with the redirect URI <public URL>/sso/callback")
	oidcSecretFile := fs.String("oidc-client-secret-file", "", "file holding the OpenID client secret (mount it from a Secret; empty: a public client, PKCE only)")
	oidcScopes := fs.String("oidc-scopes", strings.Join(statuspage.DefaultOIDCScopes, ","), "comma-separated scopes requested besides openid")
	fs.StringVar(&o.OIDC.GroupsClaim, "oidc-groups-claim", "groups", "ID token claim that lists the user's groups (spec.access.sso.allowedGroups)")
	fs.StringVar(&o.RDAPURL, "rdap-url", "https://rdap.org", "RDAP service used for domain expiry")
	fs.StringVar(&o.AI.URL, "ai-url", "", "OpenAI-compatible chat-completions URL for AI incident assist")
	fs.StringVar(&o.AI.Model, "ai-model", "", "model for AI incident assist (empty: the features report unavailable)")
	fs.IntVar(&o.AI.MonthlyAllowance, "ai-monthly-allowance", 100, "AI generations per workspace and month")
	aiKeyFile := fs.String("ai-api-key-file", "", "file holding the AI endpoint's API key (mount it from a Secret)")
	var smtp alerting.SMTP
	fs.StringVar(&smtp.Addr, "smtp-addr", "", "SMTP server host:port for email alerts and subscriber mail (empty: no SMTP)")
	fs.StringVar(&smtp.From, "smtp-from", "", "sender address of email alerts")
	fs.StringVar(&smtp.Username, "smtp-username", "", "SMTP user (AUTH PLAIN)")
	smtpPassFile := fs.String("smtp-password-file", "", "file holding the SMTP password")
	fs.BoolVar(&o.RequireRecipientConfirmation, "require-recipient-confirmation", false, "send alert emails only to addresses that confirmed them (each new address is sent a confirmation link)")
	fs.StringVar(&smtp.TLSMode, "smtp-tls", "opportunistic", "SMTP TLS mode: opportunistic (STARTTLS when offered), starttls (required), tls (implicit) or none")
	trustedCA := fs.String("trusted-ca-file", "", "PEM bundle of private CA certificates trusted in addition to the system roots (probes run from the manager, deliveries, crawler, exports)")
	var probeCA trust.BundleRef
	fs.StringVar(&probeCA.ConfigMap, "probe-trusted-ca-configmap", "", "ConfigMap of the manager's namespace with the PEM bundle to mount into managed probe pods (--trusted-ca-file of the agents)")
	fs.StringVar(&probeCA.Secret, "probe-trusted-ca-secret", "", "Secret of the manager's namespace with the PEM bundle to mount into managed probe pods (instead of a ConfigMap)")
	fs.StringVar(&probeCA.Key, "probe-trusted-ca-key", "ca.crt", "key of the bundle in that ConfigMap or Secret")
	var twilio alerting.Twilio
	fs.StringVar(&twilio.BaseURL, "twilio-url", "https://api.twilio.com", "Twilio-compatible API base URL for SMS, voice and WhatsApp")
	fs.StringVar(&twilio.AccountSID, "twilio-account-sid", "", "Twilio account SID (empty: no phone alerts through Twilio)")
	twilioTokenFile := fs.String("twilio-token-file", "", "file holding the Twilio auth token")
	fs.StringVar(&twilio.From, "twilio-from", "", "E.164 sender number for SMS and voice")
	fs.StringVar(&twilio.WhatsAppFrom, "twilio-whatsapp-from", "", "E.164 WhatsApp sender number")
	return func() error {
		if err := trust.LoadFile(*trustedCA); err != nil {
			return fmt.Errorf("--trusted-ca-file: %w", err)
		}
		if probeCA.ConfigMap != "" && probeCA.Secret != "" {
			return fmt.Errorf("--probe-trusted-ca-configmap and --probe-trusted-ca-secret exclude each other")
		}
		if probeCA.ConfigMap != "" || probeCA.Secret != "" {
			o.ProbeTrustedCA = &probeCA
		}
		if o.MonitorSeriesMax < 1 {
			return fmt.Errorf("--monitor-metrics-max must be at least 1")
		}
		for _, name := range strings.Split(*probePullSecrets, ",") {
			if name = strings.TrimSpace(name); name != "" {
				o.ProbeImagePullSecrets = append(o.ProbeImagePullSecrets, name)
			}
		}
		if *rotate {
			if *webhookDNS == "" || *apiDNS == "" {
				return fmt.Errorf("--cert-rotation needs --cert-rotation-webhook-dns-names and --cert-rotation-api-dns-names")
			}
			rot.Namespace = o.Namespace
			rot.Certs = []certrotator.Cert{{Secret: *webhookSecret, DNSNames: commaList(*webhookDNS), Dir: o.WebhookCertDir}}
			// The API certificate serves the aggregated and probe listeners
			// (one directory in the chart); kept in its Secret regardless.
			apiDirs := slices.Compact([]string{o.AggregatedCertDir, o.ProbeCertDir})
			if apiDirs = slices.DeleteFunc(apiDirs, func(d string) bool { return d == "" }); len(apiDirs) == 0 {
				apiDirs = []string{""}
			}
			for _, dir := range apiDirs {
				rot.Certs = append(rot.Certs, certrotator.Cert{Secret: *apiSecret, DNSNames: commaList(*apiDNS), Dir: dir})
			}
			rot.MutatingWebhooks, rot.ValidatingWebhooks, rot.APIServices = commaList(*mutating), commaList(*validating), commaList(*apiServices)
			o.CertRotation = &rot
		}
		o.SecretNamespaces = commaList(*secretNamespaces)
		if *probeServerCA != "" {
			o.ProbeServerCA = &trust.BundleRef{Secret: *probeServerCA, Key: *probeServerCAKey}
		}
		if o.ProbeListen != "" && o.ProbeCertDir == "" {
			return fmt.Errorf("--probe-listen needs --probe-cert-dir")
		}
		if o.BootstrapFile != "" && o.BootstrapRelease == "" {
			return fmt.Errorf("--bootstrap-file needs --bootstrap-release")
		}
		if o.DeliveryRetryWindow < 0 {
			return fmt.Errorf("--delivery-retry-window must not be negative")
		}
		var err error
		if *storeFile != "" {
			if flagSet(fs, "store") {
				return fmt.Errorf("--store and --store-file exclude each other")
			}
			if o.Store, err = readSecretFile("store-file", *storeFile); err != nil {
				return err
			}
			if o.Store == "" {
				return fmt.Errorf("--store-file %s is empty", *storeFile)
			}
		}
		if o.ClientAddresses.Trusted, err = clientip.ParsePrefixes(strings.Split(*trustedProxies, ",")); err != nil {
			return fmt.Errorf("--trusted-proxies: %w", err)
		}
		if o.ClientAddresses.Header, err = clientip.ParseHeader(*forwardedHeader); err != nil {
			return fmt.Errorf("--forwarded-header: %w", err)
		}
		if o.OIDC.ClientSecret, err = readSecretFile("oidc-client-secret-file", *oidcSecretFile); err != nil {
			return err
		}
		o.OIDC.Scopes = commaList(*oidcScopes)
		if o.OIDC.IssuerURL != "" && o.OIDC.ClientID == "" {
			return fmt.Errorf("--oidc-issuer-url needs --oidc-client-id")
		}
		if o.AI.APIKey, err = readSecretFile("ai-api-key-file", *aiKeyFile); err != nil {
			return err
		}
		if smtp.Addr != "" {
			if smtp.Password, err = readSecretFile("smtp-password-file", *smtpPassFile); err != nil {
				return err
			}
			o.SMTP = &smtp
		}
		if twilio.AccountSID != "" {
			if twilio.AuthToken, err = readSecretFile("twilio-token-file", *twilioTokenFile); err != nil {
				return err
			}
			o.Twilio = &twilio
		}
		return nil
	}
}

func runManager(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlagSet("manager", stderr)
	var o manager.Options
	finish := managerFlags(fs, &o)
	logs := bindLogFlags(fs, LogJSON)
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	log, err := logs.logger(stderr)
	if err != nil {
		return err
	}
	ctrl.SetLogger(log)
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	if err := finish(); err != nil {
		return err
	}
	manager.Version = Version
	m, err := manager.New(cfg, o)
	if err != nil {
		return err
	}
	return m.Start(ctx)
}

// readSecretFile reads a credential from a file (a mounted Secret); an
// empty path reads nothing.
func readSecretFile(flag, path string) (string, error) {
	if path == "" {
		return "", nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read --%s: %w", flag, err)
	}
	return strings.TrimSpace(string(raw)), nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// commaList splits a comma-separated flag value, dropping empty items.
func commaList(v string) []string {
	var out []string
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
