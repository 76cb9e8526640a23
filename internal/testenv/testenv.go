// Package testenv starts what envtest suites share: a local control plane
// with the CRDs and webhooks installed (package localcp) and the real manager
// serving the webhooks and controllers against it, so suites test the same
// assembly that `uptime-operator dev` and the manager run.
package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	Client  client.Client
	Manager *manager.Manager
	env     *localcp.ControlPlane
	cancel  context.CancelFunc
	done    chan error
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
	e := &Env{Config: cfg, env: cp, done: make(chan error, 1)}
	wo := cp.Webhook
	opts.WebhookHost, opts.WebhookPort, opts.WebhookCertDir = wo.Host, wo.Port, wo.CertDir
	// Several managers may run in one test process (one per suite or test).
	opts.SkipNameValidation = true
	if opts.Store == "" {
		dir, err := os.MkdirTemp("", "uptime-testenv-")
		if err != nil {
			_ = cp.Stop()
			return nil, err
		}
		opts.Store = filepath.Join(dir, "uptime.db")
	}
	if opts.MetricsAddr == "" {
		opts.MetricsAddr = "0"
	}
	if opts.HealthAddr == "" {
		opts.HealthAddr = "0"
	}
	if e.Manager, err = manager.New(cfg, opts); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	if e.Client, err = client.New(cfg, client.Options{Scheme: manager.Scheme()}); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { e.done <- e.Manager.Start(ctx) }()
	if err := e.waitForWebhooks(ctx); err != nil {
		e.Stop()
		return nil, err
	}
	return e, nil
}

// waitForWebhooks creates a throwaway ProbeRegion until admission answers.
func (e *Env) waitForWebhooks(ctx context.Context) error {
	probe := &monv1.ProbeRegion{}
	probe.Name = "webhook-readiness-probe"
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		err := e.Client.Create(ctx, probe.DeepCopy())
		return err == nil || apierrors.IsAlreadyExists(err), nil
	})
	if err != nil {
		return fmt.Errorf("webhooks did not become ready: %w", err)
	}
	return client.IgnoreNotFound(e.Client.Delete(ctx, probe))
}

// WebhookCertDir holds the webhook serving certificate that the control
// plane trusts, for a second manager (another replica) to serve with.
func (e *Env) WebhookCertDir() string { return e.env.Webhook.CertDir }

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
	opts.SkipNameValidation = true
	wo := e.env.Webhook
	opts.WebhookHost, opts.WebhookPort, opts.WebhookCertDir = wo.Host, wo.Port, wo.CertDir
	if opts.MetricsAddr == "" {
		opts.MetricsAddr = "0"
	}
	if opts.HealthAddr == "" {
		opts.HealthAddr = "0"
	}
	m, err := manager.New(e.Config, opts)
	if err != nil {
		return err
	}
	e.Manager, e.done = m, make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { e.done <- m.Start(ctx) }()
	return nil
}

// Stop stops the manager and the control plane.
func (e *Env) Stop() {
	if e.cancel != nil {
		e.cancel()
		select {
		case <-e.done:
		case <-time.After(30 * time.Second):
		}
	}
	_ = e.env.Stop()
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
