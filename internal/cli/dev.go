package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/devmail"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/localcp"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/oidcdev"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"github.com/uptime-operator/uptime-operator/internal/trust"
	"github.com/uptime-operator/uptime-operator/probes"
)

// runDev starts a local control plane, installs the CRDs and webhooks, runs
// the manager against it with private targets allowed, and writes dev.env.
func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dev", stderr)
	stateDir := fs.String("state-dir", "./.uptime-dev", "directory for etcd data, certificates, kubeconfig and dev.env; reuse it to keep state")
	apiListen := fs.String("api-listen", "127.0.0.1:8080", "address of the direct REST API listener")
	aggListen := fs.String("aggregated-listen", "", "TLS address of the aggregated API that kube-apiserver proxies to (empty: a free port on 127.0.0.1)")
	verbose := fs.Bool("v", false, "log the manager's debug output")
	trustedCA := fs.String("trusted-ca-file", "", "PEM bundle of private CA certificates trusted in addition to the system roots (the manager and the local agent)")
	oidcProvider := fs.String("oidc-test-provider", "", "start a local OpenID Connect provider for sso status pages on this address (127.0.0.1:PORT) with the demo user demo / demo-password (group sre, e-mail demo@example.com), and configure the manager with it (empty: none)")
	logs := bindLogFlags(fs, LogConsole)
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if *verbose {
		logs.zap.Level = zapcore.DebugLevel
	}
	log, err := logs.logger(stderr)
	if err != nil {
		return err
	}
	ctrl.SetLogger(log)
	if err := trust.LoadFile(*trustedCA); err != nil {
		return fmt.Errorf("--trusted-ca-file: %w", err)
	}
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "dev: "+format+"\n", a...) }
	// Every listener the run needs is checked before anything starts: a
	// port in use should fail in a second, not after the control plane is up.
	listeners := []listener{{"--api-listen", *apiListen, "choose another address with --api-listen (make run API_LISTEN=127.0.0.1:PORT)"}}
	if *aggListen != "" {
		listeners = append(listeners, listener{"--aggregated-listen", *aggListen, "choose another address with --aggregated-listen, or leave it out for a free port"})
	} else {
		*aggListen = "127.0.0.1:0"
	}
	if *oidcProvider != "" {
		listeners = append(listeners, listener{"--oidc-test-provider", *oidcProvider, "choose another address for --oidc-test-provider"})
	}
	if err := checkListeners(listeners); err != nil {
		return err
	}
	var oidcCfg statuspage.OIDC
	if *oidcProvider != "" {
		prov, cfg, err := startDevOIDC(*oidcProvider, "http://"+*apiListen)
		if err != nil {
			return err
		}
		defer prov.Close()
		oidcCfg = cfg
		say("OpenID provider for sso status pages at %s: sign in as demo / demo-password (group sre), or other / other-password (group sales)", prov.Issuer)
	}

	dir, err := filepath.Abs(*stateDir)
	if err != nil {
		return err
	}
	say("state directory %s", dir)
	// One dev environment per state directory. The lock goes with the
	// process, even one killed with SIGKILL, so whatever still runs on the
	// state once it is held was left behind and can be stopped.
	unlock, err := lockState(dir)
	if err != nil {
		return err
	}
	defer unlock()
	if pids, err := localcp.StopLeftovers(dir); err != nil {
		return err
	} else if len(pids) > 0 {
		say("stopped etcd/kube-apiserver left running by a killed run on this state (pids %v)", pids)
	}
	env, err := localcp.New(localcp.Options{StateDir: dir, WebhookHost: "127.0.0.1", Progress: stderr})
	if err != nil {
		return err
	}
	say("starting etcd and kube-apiserver %s", localcp.KubernetesVersion)
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("start control plane: %w", err)
	}
	defer func() {
		say("stopping the control plane")
		if err := env.Stop(); err != nil {
			say("stop: %v", err)
		}
	}()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(env, kubeconfig); err != nil {
		return err
	}
	say("control plane is up at %s", cfg.Host)

	// Mail (alert emails, recipient confirmations, subscriber mail) goes to
	// a local sink that keeps each message as a file.
	mailDir := filepath.Join(dir, "mail")
	sink := &devmail.Sink{Dir: mailDir, Log: say}
	if err := sink.Listen(); err != nil {
		return err
	}
	go func() { _ = sink.Serve(ctx) }()

	c, err := client.New(cfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		return err
	}
	// The manager's namespace exists before the manager starts: it keeps
	// the status pages' signing key there (so sessions and unsubscribe links
	// survive restarts), the region token and the aggregated API's Service.
	if err := ensureNamespace(ctx, c, devNamespace); err != nil {
		return err
	}

	wo := env.Webhook
	m, err := manager.New(cfg, manager.Options{
		SMTP:                &alerting.SMTP{Addr: sink.Addr(), From: "uptime-operator <uptime@localhost>", TLSMode: alerting.SMTPTLSNone},
		MetricsAddr:         "0",
		HealthAddr:          "0",
		WebhookHost:         wo.Host,
		WebhookPort:         wo.Port,
		WebhookCertDir:      wo.CertDir,
		APIListen:           *apiListen,
		AggregatedListen:    *aggListen,
		AllowPrivateTargets: true,
		Store:               filepath.Join(dir, "uptime.db"),
		Retention:           30 * 24 * time.Hour,
		Namespace:           devNamespace,
		PublicURL:           "http://" + *apiListen,
		OIDC:                oidcCfg,
		// One dev environment per process, except in the test that restarts
		// it in one process; controller names need not be unique then.
		SkipNameValidation: true,
	})
	if err != nil {
		return err
	}
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	// startup ends when the manager stops: a manager that fails to start (a
	// port in use, say) must not leave the steps below waiting for it.
	startup, stopStartup := context.WithCancel(ctx)
	defer stopStartup()
	var startErr error
	go func() {
		err := m.Start(mctx)
		startErr = err
		stopStartup()
		done <- err
	}()
	failed := func(err error) error {
		if startup.Err() != nil && ctx.Err() == nil && startErr != nil {
			return fmt.Errorf("the manager stopped: %w", startErr)
		}
		return err
	}
	say("starting the manager (webhooks on %s:%d, API on %s)", wo.Host, wo.Port, *apiListen)
	tokenFile, err := localRegion(startup, c, dir)
	if err != nil {
		return failed(err)
	}
	if err := waitForListener(startup, *apiListen); err != nil {
		return failed(err)
	}
	key, err := devAPIKey(startup, c, dir)
	if err != nil {
		return failed(err)
	}
	aggAddr, err := registerAPIService(startup, c, m)
	if err != nil {
		return failed(err)
	}
	say("aggregated API on %s (set --aggregated-listen to choose the address)", aggAddr)
	say("starting the in-process probe agent of region local")
	go func() {
		err := probes.RunAgent(mctx, probes.AgentOptions{
			Region: "local", ServerURL: "http://" + *apiListen, TokenFile: tokenFile,
			AllowPrivate: true, BufferDir: filepath.Join(dir, "probe-buffer"),
			Log: ctrl.Log.WithName("probe").WithValues("region", "local"),
		})
		if err != nil && mctx.Err() == nil {
			say("local probe agent stopped: %v", err)
		}
	}()
	envFile := filepath.Join(dir, "dev.env")
	apiURL := "http://" + *apiListen
	content := fmt.Sprintf("KUBECONFIG=%s\nUPTIME_API_URL=%s\nUPTIME_API_KEY=%s\n", kubeconfig, apiURL, key)
	if err := os.WriteFile(envFile, []byte(content), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", envFile, err)
	}
	say("ready. In another shell:")
	fmt.Fprintf(stdout, "\n  set -a; . %s; set +a\n  kubectl apply -f config/samples/\n  kubectl get monitors,statuspages,alertchannels,slos\n  curl -H \"Authorization: Bearer $UPTIME_API_KEY\" $UPTIME_API_URL/automation/whoami\n  kubectl get --raw /apis/api.uptime-operator.io/v1/namespaces/default/monitors\n\n", envFile)
	say("mail the manager sends is kept in %s", mailDir)
	say("press Ctrl-C to stop")

	select {
	case <-ctx.Done():
		say("shutting down")
		cancel()
		<-done
		return nil
	case err := <-done:
		return err
	}
}

func writeKubeconfig(cp *localcp.ControlPlane, path string) error {
	raw, err := cp.Kubeconfig("dev-admin", "system:masters")
	if err != nil {
		return fmt.Errorf("create admin user: %w", err)
	}
	return os.WriteFile(path, raw, 0o600)
}

// registerAPIService points the APIService at the manager's aggregated
// listener.
func registerAPIService(ctx context.Context, c client.Client, m *manager.Manager) (string, error) {
	addr, err := m.AggregatedAddr(ctx)
	if err != nil {
		return "", err
	}
	return addr, localcp.RegisterAPIService(ctx, c, devNamespace, addr, m.AggregatedCA())
}

// ensureNamespace creates namespace ns unless it exists.
func ensureNamespace(ctx context.Context, c client.Client, ns string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return nil
}

// listener is an address a flag asks the run to listen on, with advice
// for when it is taken.
type listener struct{ flag, addr, advice string }

// checkListeners binds and releases each address, and fails naming the
// flag of the first one that cannot be bound (a port in use, most often a
// second dev environment).
func checkListeners(ls []listener) error {
	for _, l := range ls {
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				return fmt.Errorf("%s %s: the address is already in use (another `make run` or dev environment?); %s", l.flag, l.addr, l.advice)
			}
			return fmt.Errorf("%s %s: cannot listen: %w", l.flag, l.addr, err)
		}
		ln.Close()
	}
	return nil
}

// devNamespace is the manager's namespace in dev mode.
const devNamespace = "uptime-operator-system"

// localRegion creates the built-in local ProbeRegion with its region token
// (retrying until the admission webhooks answer, which proves the manager
// serves them) and writes the token where the in-process agent reads it.
func localRegion(ctx context.Context, c client.Client, dir string) (string, error) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "uptime-probe-local", Namespace: devNamespace}}
	if err := c.Get(ctx, client.ObjectKeyFromObject(secret), secret); apierrors.IsNotFound(err) {
		secret.Data = map[string][]byte{probeserver.RegionTokenKey: []byte(engine.NewHeartbeatToken() + engine.NewHeartbeatToken())}
		if err := c.Create(ctx, secret); err != nil {
			return "", fmt.Errorf("create region token: %w", err)
		}
	} else if err != nil {
		return "", fmt.Errorf("read region token: %w", err)
	}
	tokenFile := filepath.Join(dir, "probe-token")
	if err := os.WriteFile(tokenFile, secret.Data[probeserver.RegionTokenKey], 0o600); err != nil {
		return "", err
	}
	region := &monv1.ProbeRegion{}
	region.Name = "local"
	region.Spec = monv1.ProbeRegionSpec{
		DisplayName: "Local (in-process)", City: "localhost",
		Placement: monv1.ProbePlacement{
			Mode:           monv1.PlacementLocal,
			Namespace:      devNamespace,
			TokenSecretRef: &monv1.SecretKeySelector{Name: secret.Name, Key: probeserver.RegionTokenKey},
		},
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, region.DeepCopy())
		return err == nil || apierrors.IsAlreadyExists(err), nil
	})
	return tokenFile, err
}

func waitForListener(ctx context.Context, addr string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			var op *net.OpError
			if errors.As(err, &op) {
				return false, nil
			}
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// devAPIKey reuses the key saved in the state dir while it still works, and
// otherwise creates an Automation key in namespace default.
func devAPIKey(ctx context.Context, c client.Client, dir string) (string, error) {
	path := filepath.Join(dir, "api-key")
	if raw, err := os.ReadFile(path); err == nil {
		key := strings.TrimSpace(string(raw))
		if _, err := apikeys.Authenticate(ctx, c, key); err == nil {
			return key, nil
		}
	}
	key, _, err := apikeys.Create(ctx, c, "default", "dev", apikeys.Automation)
	if err != nil {
		return "", err
	}
	return key, os.WriteFile(path, []byte(key+"\n"), 0o600)
}

// lockState takes the exclusive lock of state directory dir.
func lockState(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "dev.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another dev environment is running on %s (stop it first): %w", dir, err)
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// Client of the --oidc-test-provider provider.
const (
	devOIDCClientID     = "uptime-operator-dev"
	devOIDCClientSecret = "dev-client-secret"
)

// startDevOIDC starts the dev OpenID provider on addr for the status pages
// at publicURL, with a demo user who is in group sre and one who is not.
func startDevOIDC(addr, publicURL string) (*oidcdev.Provider, statuspage.OIDC, error) {
	prov, err := oidcdev.Start(oidcdev.Options{
		Addr: addr, ClientID: devOIDCClientID, ClientSecret: devOIDCClientSecret,
		RedirectURIs: []string{publicURL + statuspage.SSOCallbackPath},
		Users: []oidcdev.User{
			{Username: "demo", Password: "demo-password", Email: "demo@example.com", EmailVerified: true, Name: "Demo User", Groups: []string{"sre"}},
			{Username: "other", Password: "other-password", Email: "other@example.org", EmailVerified: true, Name: "Other User", Groups: []string{"sales"}},
		},
	})
	if err != nil {
		return nil, statuspage.OIDC{}, err
	}
	return prov, statuspage.OIDC{IssuerURL: prov.Issuer, ClientID: devOIDCClientID, ClientSecret: devOIDCClientSecret}, nil
}
