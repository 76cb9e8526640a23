package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"

	"github.com/uptime-operator/uptime-operator/internal/certs"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/trust"
	"github.com/uptime-operator/uptime-operator/probes"
)

// runProbe runs a probe agent: it pulls its region's assignments from the
// manager's probe API, runs the checks and pushes results back.
func runProbe(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlagSet("probe", stderr)
	var o probes.AgentOptions
	fs.StringVar(&o.Region, "region", "", "ProbeRegion code this agent checks for (required)")
	fs.StringVar(&o.ServerURL, "server", "", "the manager's probe API base URL (required)")
	fs.StringVar(&o.TokenFile, "token-file", "", "file holding the bearer token (ServiceAccount or region token); reread on every request")
	fs.BoolVar(&o.AllowPrivate, "allow-private", false, "allow checks of private, loopback and link-local addresses")
	fs.StringVar(&o.BrowserPath, "browser-path", os.Getenv("UPTIME_BROWSER_PATH"), "Chromium binary of browser checks (default $UPTIME_BROWSER_PATH, else chromium, chromium-browser or google-chrome on PATH); a region's remote browser is used instead when it names one")
	fs.StringVar(&o.BufferDir, "buffer-dir", "", "directory to buffer undelivered results on disk")
	fs.StringVar(&o.Listen, "listen", ":8081", "address of /healthz, /readyz and, without --metrics-listen, /metrics (empty disables)")
	fs.StringVar(&o.MetricsListen, "metrics-listen", "", "address of /metrics served over TLS (a self-signed certificate) to callers kube-apiserver authenticates and authorizes for get on /metrics, as the manager's --metrics-secure (the agent's ServiceAccount needs system:auth-delegator; in-cluster config or KUBECONFIG); empty serves /metrics on --listen without authentication")
	fs.IntVar(&o.Concurrency, "concurrency", 64, "checks run at the same time")
	trustedCA := fs.String("trusted-ca-file", "", "PEM bundle of private CA certificates trusted in addition to the system roots")
	serverCA := fs.String("server-ca-file", "", "PEM CA bundle the manager's probe API certificate is verified against, instead of the system roots (reread when it changes)")
	logs := bindLogFlags(fs, LogJSON)
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if o.Region == "" || o.ServerURL == "" {
		return fmt.Errorf("--region and --server are required")
	}
	if err := checkTokenFile(o.TokenFile); err != nil {
		return err
	}
	if err := trust.LoadFile(*trustedCA); err != nil {
		return fmt.Errorf("--trusted-ca-file: %w", err)
	}
	if *serverCA != "" {
		rt, err := probeapi.CATransport(*serverCA)
		if err != nil {
			return fmt.Errorf("--server-ca-file: %w", err)
		}
		o.HTTPClient = &http.Client{Transport: rt}
	}
	log, err := logs.logger(stderr)
	if err != nil {
		return err
	}
	ctrl.SetLogger(log)
	o.Log = ctrl.Log.WithName("probe").WithValues("region", o.Region)
	if o.MetricsListen != "" {
		cfg, err := ctrl.GetConfig()
		if err != nil {
			return fmt.Errorf("--metrics-listen: %w", err)
		}
		if err := secureMetrics(&o, cfg); err != nil {
			return fmt.Errorf("--metrics-listen: %w", err)
		}
	}
	probes.TuneProcess()
	return probes.RunAgent(ctx, o)
}

// checkTokenFile refuses to start an agent whose token is shorter than a
// region token may be (a ServiceAccount token is much longer): the manager
// would refuse it on every request.
func checkTokenFile(path string) error {
	if path == "" {
		return nil
	}
	tok, err := probeapi.TokenFile(path)()
	if err != nil {
		return fmt.Errorf("--token-file: %w", err)
	}
	if n := len(strings.TrimSpace(tok)); n < probeapi.MinRegionTokenLength {
		return fmt.Errorf("--token-file: the token is %d characters; a region token must have at least %d (openssl rand -hex 32)", n, probeapi.MinRegionTokenLength)
	}
	return nil
}

// secureMetrics serves the agent's /metrics as the manager serves its own
// with --metrics-secure: TLS with a certificate made at start, and
// controller-runtime's filter, which answers a scrape only when
// kube-apiserver authenticates its bearer token (TokenReview) and
// authorizes it for get on the non-resource URL /metrics
// (SubjectAccessReview; the chart's metrics-reader ClusterRole), both
// cached for a while.
func secureMetrics(o *probes.AgentOptions, cfg *rest.Config) error {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	filter, err := filters.WithAuthenticationAndAuthorization(cfg, hc)
	if err != nil {
		return err
	}
	log := o.Log.WithName("metrics")
	o.MetricsAuth = func(h http.Handler) (http.Handler, error) { return filter(log, h) }
	ca, err := certs.NewCA("uptime-operator-probe-metrics")
	if err != nil {
		return err
	}
	cert, err := ca.ServingCert("localhost")
	if err != nil {
		return err
	}
	o.MetricsTLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	return nil
}
