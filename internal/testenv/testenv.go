// Package testenv starts what envtest suites share: a local control plane
// with the CRDs and webhooks installed (package localcp) and the real manager
// serving the webhooks and controllers against it, so suites test the same
// assembly that `uptime-operator dev` and the manager run.
//
// A package starts one Env for all its tests (Main, from TestMain, or a
// Ginkgo BeforeSuite): starting kube-apiserver and etcd costs seconds, a
// test in a namespace of its own (Namespace) costs nothing. A test whose
// subject is a manager option or the manager's start-up runs a manager of
// its own on the same control plane (RunManager, RunManagerAs), and one
// that needs no manager at all stops it (WithoutManager); the package's
// manager is started again for the next test that uses it (Use).
package testenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/localcp"
	"github.com/uptime-operator/uptime-operator/internal/manager"
)

// Env is a running control plane with the manager.
type Env struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client bypasses every cache: what it reads is what the server holds.
	Client client.Client
	// Manager is the manager running now: the package's, or the one a test
	// started with RunManager (nil after WithoutManager).
	Manager *manager.Manager
	// Options are the package's manager's, as it runs (the store, webhook
	// and listener fields filled in).
	Options manager.Options
	env     *localcp.ControlPlane
	cancel  context.CancelFunc
	done    chan error
	// own is false while a test's manager, or none, runs instead of the
	// package's; removed holds the webhook configurations WithoutManager
	// took away, put back before the next manager starts.
	own     bool
	removed []client.Object
	// tmp holds the package's manager's store when Start made one.
	tmp string
}

// Main runs a package's tests (m) against one Env started with opts, which
// use receives before they run, and stops it after them; call it from
// TestMain. Without envtest's binaries, or with -short, no Env is started
// and use is not called: the tests that need it skip (Use), except in CI,
// where they must not pass quietly (make test sets the binaries).
func Main(m *testing.M, opts manager.Options, use func(*Env) error) {
	os.Exit(run(m, opts, use))
}

func run(m *testing.M, opts manager.Options, use func(*Env) error) int {
	flagsParsed()
	if (os.Getenv("KUBEBUILDER_ASSETS") == "" && os.Getenv("CI") != "true") || testing.Short() {
		return m.Run()
	}
	env, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	defer env.Stop()
	if err := use(env); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	return m.Run()
}

// Use returns e with the package's manager running, started again if the
// previous test ran its own or none. It skips t when e is nil (see Main).
func Use(t testing.TB, e *Env) *Env {
	t.Helper()
	skipWithout(t, e)
	if !e.own {
		e.StopManager()
		if err := e.startManager(e.Config, e.Options); err != nil {
			t.Fatalf("start the package's manager again: %v", err)
		}
		e.own = true
	}
	return e
}

func skipWithout(t testing.TB, e *Env) {
	t.Helper()
	if e == nil {
		t.Skip("no control plane: KUBEBUILDER_ASSETS is not set (make test sets it) or -short")
	}
}

// Start starts the control plane and the manager with opts (the webhook
// fields are filled in) and waits until the webhooks answer.
func Start(opts manager.Options) (*Env, error) {
	cp, err := localcp.New(localcp.Options{WebhookHost: "127.0.0.1"})
	if err != nil {
		return nil, err
	}
	cfg, err := cp.Start()
	if err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	e := &Env{Config: cfg, env: cp}
	if opts.Store == "" {
		dir, err := os.MkdirTemp("", "uptime-testenv-")
		if err != nil {
			_ = cp.Stop()
			return nil, err
		}
		e.tmp, opts.Store = dir, filepath.Join(dir, "uptime.db")
	}
	e.Options = e.fill(opts)
	if e.Client, err = client.New(cfg, client.Options{Scheme: manager.Scheme()}); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	if err := e.startManager(cfg, e.Options); err != nil {
		e.Stop()
		return nil, err
	}
	e.own = true
	return e, nil
}

// fill sets the webhook fields of opts to where the control plane calls,
// and turns off the metrics and health listeners it leaves empty.
func (e *Env) fill(opts manager.Options) manager.Options {
	// Several managers may run in one test process (one after the other,
	// or replicas side by side).
	opts.SkipNameValidation = true
	wo := e.env.Webhook
	opts.WebhookHost, opts.WebhookPort, opts.WebhookCertDir = wo.Host, wo.Port, wo.CertDir
	if opts.MetricsAddr == "" {
		opts.MetricsAddr = "0"
	}
	if opts.HealthAddr == "" {
		opts.HealthAddr = "0"
	}
	return opts
}

// startManager starts a manager as cfg with opts (filled) and waits until
// it answers the webhooks.
func (e *Env) startManager(cfg *rest.Config, opts manager.Options) error {
	ctx := context.Background()
	for _, obj := range e.removed {
		if err := e.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("put back webhook configuration %s: %w", obj.GetName(), err)
		}
	}
	e.removed = nil
	m, err := manager.New(cfg, opts)
	if err != nil {
		return err
	}
	e.Manager, e.done = m, make(chan error, 1)
	ctx, cancel := context.WithCancel(ctx)
	e.cancel = cancel
	var startErr error
	exited := make(chan struct{})
	go func() {
		err := m.Start(ctx)
		startErr = err
		close(exited)
		e.done <- err
	}()
	// Waiting ends early when the manager stops (e.g. its caches cannot
	// sync), with its error.
	waitCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-exited:
			stop()
		case <-waitCtx.Done():
		}
	}()
	if err := e.waitForWebhooks(waitCtx); err != nil {
		select {
		case <-exited:
			err = fmt.Errorf("the manager stopped: %w", startErr)
		default:
		}
		e.StopManager()
		return err
	}
	return nil
}

// waitForWebhooks dry-runs the create of a ProbeRegion until the mutating
// webhook has defaulted its code: kube-apiserver calls the manager (and,
// after WithoutManager, has read the webhook configurations again).
func (e *Env) waitForWebhooks(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		probe := &monv1.ProbeRegion{}
		probe.Name = "webhook-readiness-probe"
		err := e.Client.Create(ctx, probe, client.DryRunAll)
		return err == nil && probe.Spec.Code == probe.Name, nil
	})
	if err != nil {
		return fmt.Errorf("webhooks did not become ready: %w", err)
	}
	return nil
}

// RunManager runs a manager with opts (the webhook fields filled in, a
// fresh store when Store is empty) instead of the package's until the test
// ends, for a test whose subject is a manager option or the manager's
// start-up. Called again, it replaces the test's manager.
func (e *Env) RunManager(t testing.TB, opts manager.Options) *manager.Manager {
	t.Helper()
	return e.RunManagerAs(t, e.Config, opts)
}

// RunManagerAs is RunManager with the manager authenticating as cfg (a
// user or ServiceAccount of the control plane, e.g. by impersonation).
func (e *Env) RunManagerAs(t testing.TB, cfg *rest.Config, opts manager.Options) *manager.Manager {
	t.Helper()
	skipWithout(t, e)
	e.StopManager()
	e.own = false
	if opts.Store == "" {
		opts.Store = filepath.Join(t.TempDir(), "uptime.db")
	}
	if err := e.startManager(cfg, e.fill(opts)); err != nil {
		t.Fatalf("start the test's manager: %v", err)
	}
	t.Cleanup(e.StopManager)
	return e.Manager
}

// StopForTest stops the manager until the test ends, leaving the webhook
// configurations to a manager the test starts itself (fill in its webhook
// fields with WebhookAddr and WebhookCertDir), for a test of how the
// manager starts or fails to. The configurations' webhooks are put back as
// they were when the test ends (such a manager may inject its own CA).
func (e *Env) StopForTest(t testing.TB) {
	t.Helper()
	skipWithout(t, e)
	e.StopManager()
	e.own = false
	saved, err := e.webhookConfigurations()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, was := range saved {
			var err error
			switch was := was.(type) {
			case *admissionv1.MutatingWebhookConfiguration:
				now := &admissionv1.MutatingWebhookConfiguration{}
				if err = e.Client.Get(ctx, client.ObjectKeyFromObject(was), now); err == nil {
					now.Webhooks = was.Webhooks
					err = e.Client.Update(ctx, now)
				}
			case *admissionv1.ValidatingWebhookConfiguration:
				now := &admissionv1.ValidatingWebhookConfiguration{}
				if err = e.Client.Get(ctx, client.ObjectKeyFromObject(was), now); err == nil {
					now.Webhooks = was.Webhooks
					err = e.Client.Update(ctx, now)
				}
			}
			if err != nil {
				t.Errorf("put back webhook configuration %s: %v", was.GetName(), err)
			}
		}
	})
}

// webhookConfigurations lists the mutating and validating webhook
// configurations.
func (e *Env) webhookConfigurations() ([]client.Object, error) {
	ctx := context.Background()
	var mutating admissionv1.MutatingWebhookConfigurationList
	var validating admissionv1.ValidatingWebhookConfigurationList
	if err := e.Client.List(ctx, &mutating); err != nil {
		return nil, err
	}
	if err := e.Client.List(ctx, &validating); err != nil {
		return nil, err
	}
	var objs []client.Object
	for i := range mutating.Items {
		objs = append(objs, &mutating.Items[i])
	}
	for i := range validating.Items {
		objs = append(objs, &validating.Items[i])
	}
	return objs, nil
}

// WithoutManager stops the manager and takes the webhook configurations
// away until the test ends: what remains is kube-apiserver with the CRDs,
// so the reconciler under test is the only writer and objects are stored
// as sent.
func (e *Env) WithoutManager(t testing.TB) {
	t.Helper()
	skipWithout(t, e)
	e.StopManager()
	e.own = false
	ctx := context.Background()
	objs, err := e.webhookConfigurations()
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if err := e.Client.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
		obj.SetResourceVersion("")
		obj.SetUID("")
		obj.SetCreationTimestamp(metav1.Time{})
		obj.SetManagedFields(nil)
		e.removed = append(e.removed, obj)
	}
	// Until kube-apiserver has read that they are gone, it still calls them.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		probe := &monv1.ProbeRegion{}
		probe.Name = "webhook-readiness-probe"
		return e.Client.Create(ctx, probe, client.DryRunAll) == nil && probe.Spec.Code == "", nil
	})
	if err != nil {
		t.Fatalf("kube-apiserver kept calling the webhooks: %v", err)
	}
}

// Namespace creates a namespace of its own for t, named after it, with
// labels (e.g. a plan), so that tests sharing the control plane never see
// each other's objects.
func (e *Env) Namespace(t testing.TB, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: NamePrefix(t), Labels: labels}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

var notName = regexp.MustCompile(`[^a-z0-9]+`)

// NamePrefix is a DNS-label prefix made from t's name (ending in "-"),
// for the names of cluster-scoped objects a test creates.
func NamePrefix(t testing.TB) string {
	s := strings.Trim(notName.ReplaceAllString(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), "-"), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	return s + "-"
}

// WebhookCertDir holds the webhook serving certificate that the control
// plane trusts, for a second manager (another replica) to serve with.
func (e *Env) WebhookCertDir() string { return e.env.Webhook.CertDir }

// WebhookAddr is where kube-apiserver calls the admission webhooks, for
// a manager run in another process.
func (e *Env) WebhookAddr() (host string, port int) { return e.env.Webhook.Host, e.env.Webhook.Port }

// StopManager stops the manager, leaving the control plane running.
func (e *Env) StopManager() {
	if e.cancel != nil {
		e.cancel()
		select {
		case <-e.done:
		case <-time.After(30 * time.Second):
		}
		e.cancel = nil
	}
}

// StartManager starts a new manager against the running control plane, as a
// restarted or newly elected replica would (webhook settings are reused).
func (e *Env) StartManager(opts manager.Options) error {
	return e.startManager(e.Config, e.fill(opts))
}

// Stop stops the manager and the control plane.
func (e *Env) Stop() {
	e.StopManager()
	_ = e.env.Stop()
	if e.tmp != "" {
		_ = os.RemoveAll(e.tmp)
	}
}

// Kubeconfig writes a kubeconfig into dir for a user of the control plane
// with its own client certificate, so kubectl (or a kubectl plugin)
// authenticates as that user rather than impersonating it, and returns the
// file's path.
func (e *Env) Kubeconfig(dir, name string, groups ...string) (string, error) {
	raw, err := e.env.Kubeconfig(name, groups...)
	if err != nil {
		return "", fmt.Errorf("add user %s: %w", name, err)
	}
	path := filepath.Join(dir, name+".kubeconfig")
	return path, os.WriteFile(path, raw, 0o600)
}

// KubeconfigBytes renders a kubeconfig for a user of the control plane
// (see Kubeconfig), for a process of its own.
func (e *Env) KubeconfigBytes(name string, groups ...string) ([]byte, error) {
	return e.env.Kubeconfig(name, groups...)
}

// flagsParsed parses the test flags if TestMain has not yet, so that
// testing.Short can be read before m.Run.
func flagsParsed() {
	if !flag.Parsed() {
		flag.Parse()
	}
}
