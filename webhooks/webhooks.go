package webhooks

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// maxConnectionsPerType is the specification's limit of alert channels of
// one type per workspace.
const maxConnectionsPerType = 10

// Deps are what every webhook needs: a reader that bypasses the cache (so two
// objects created back to back see each other), the plan resolver and the
// cluster's private-target setting.
type Deps struct {
	// Reader reads objects directly from the API server.
	Reader client.Reader
	// Cache is the manager's cache, read first for what rarely changes and
	// is read on every create (the namespace, its plan, the region codes);
	// what it does not have yet is read again through Reader. May be nil.
	Cache client.Reader
	// Secrets reads the Secrets a Monitor's header may reference (the
	// manager's credsecrets cache: labelled Secrets only, a
	// *credentials.NotAllowedError for others); nil means Reader.
	Secrets client.Reader
	// Reviews asks whether the user of a request may read a Secret
	// (validateCredentialMoves); nil refuses every such write.
	Reviews AccessReviewer
	// Plans resolves a namespace's plan.
	Plans *plans.Resolver
	// AllowPrivateTargets lets monitors and webhooks target private,
	// loopback and link-local addresses (in-cluster monitoring, dev mode).
	AllowPrivateTargets bool
	// SSOUnavailable names the install setting that sso status pages lack
	// ("" when they can be served): a page switched to sso is refused with
	// it.
	SSOUnavailable string
}

// secrets is the reader of Secrets a Monitor may reference.
func (d *Deps) secrets() client.Reader {
	if d.Secrets != nil {
		return d.Secrets
	}
	return d.Reader
}

// Guard returns the address guard admission checks hosts with.
func (d *Deps) Guard() monitor.HostChecker {
	return netguard.Guard{AllowPrivate: d.AllowPrivateTargets}
}

// Options configure SetupWithManager.
type Options struct {
	// DefaultPlan names the Plan of namespaces without the plan label.
	DefaultPlan string
	// AllowPrivateTargets: see Deps.
	AllowPrivateTargets bool
	// Secrets: see Deps.
	Secrets client.Reader
	// SSOUnavailable: see Deps.
	SSOUnavailable string
}

// SetupWithManager registers the defaulting and validating webhooks of every
// kind with the manager's webhook server.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	deps := &Deps{
		Reader:              mgr.GetAPIReader(),
		Cache:               mgr.GetClient(),
		Reviews:             mgr.GetClient(),
		Plans:               &plans.Resolver{Reader: cacheFirst{cache: mgr.GetClient(), direct: mgr.GetAPIReader()}, DefaultPlan: opts.DefaultPlan},
		AllowPrivateTargets: opts.AllowPrivateTargets,
		Secrets:             opts.Secrets,
		SSOUnavailable:      opts.SSOUnavailable,
	}
	regs := []func() error{
		func() error {
			w := MonitorWebhook{deps}
			return ctrl.NewWebhookManagedBy(mgr, &monv1.Monitor{}).WithDefaulter(w).WithValidator(w).Complete()
		},
		func() error {
			w := MonitorGroupWebhook{deps}
			return ctrl.NewWebhookManagedBy(mgr, &monv1.MonitorGroup{}).WithDefaulter(w).WithValidator(w).Complete()
		},
		func() error {
			w := StatusPageWebhook{deps}
			return ctrl.NewWebhookManagedBy(mgr, &monv1.StatusPage{}).WithDefaulter(w).WithValidator(w).Complete()
		},
		func() error {
			w := AlertChannelWebhook{deps}
			return ctrl.NewWebhookManagedBy(mgr, &monv1.AlertChannel{}).WithDefaulter(w).WithValidator(w).Complete()
		},
		func() error {
			w := SLOWebhook{deps}
			return ctrl.NewWebhookManagedBy(mgr, &monv1.SLO{}).WithDefaulter(w).WithValidator(w).Complete()
		},
		func() error {
			w := MaintenanceWindowWebhook{deps}
			return ctrl.NewWebhookManagedBy(mgr, &monv1.MaintenanceWindow{}).WithDefaulter(w).WithValidator(w).Complete()
		},
		func() error {
			w := EscalationPolicyWebhook{deps}
			return ctrl.NewWebhookManagedBy(mgr, &monv1.EscalationPolicy{}).WithValidator(w).Complete()
		},
		func() error {
			w := ProbeRegionWebhook{deps}
			return ctrl.NewWebhookManagedBy(mgr, &monv1.ProbeRegion{}).WithDefaulter(w).WithValidator(w).Complete()
		},
		func() error {
			w := OnCallScheduleWebhook{deps}
			return ctrl.NewWebhookManagedBy(mgr, &monv1.OnCallSchedule{}).WithValidator(w).Complete()
		},
		func() error {
			w := PlanWebhook{deps}
			return ctrl.NewWebhookManagedBy(mgr, &monv1.Plan{}).WithValidator(w).Complete()
		},
	}
	for _, reg := range regs {
		if err := reg(); err != nil {
			return fmt.Errorf("register webhook: %w", err)
		}
	}
	return nil
}

// invalid turns a field error list into the API server's Invalid status
// error, or nil when the list is empty.
func invalid(obj client.Object, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kind = reflect.TypeOf(obj).Elem().Name()
	}
	gk := schema.GroupKind{Group: monv1.GroupVersion.Group, Kind: kind}
	return apierrors.NewInvalid(gk, obj.GetName(), errs)
}

// cacheFirst gets objects from the cache and, when the cache does not have
// them (created a moment ago), from the API server; it lists from the API
// server.
type cacheFirst struct{ cache, direct client.Reader }

func (c cacheFirst) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.cache.Get(ctx, key, obj, opts...)
	if apierrors.IsNotFound(err) {
		return c.direct.Get(ctx, key, obj, opts...)
	}
	return err
}

func (c cacheFirst) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.direct.List(ctx, list, opts...)
}

// mustExist returns an error when the named object does not exist in ns.
func (d *Deps) mustExist(ctx context.Context, ns, name string, obj client.Object) error {
	return d.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
}

// namesIn is the set of names of list's kind in ns, read with one list:
// an object that references hundreds of others (a maintenance window's
// 500 monitors) is checked with one read, not one per reference, so
// admission answers within its timeout (docs/security.md, "Bounded work
// per request").
func (d *Deps) namesIn(ctx context.Context, ns string, list client.ObjectList) (map[string]bool, error) {
	if err := d.Reader.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list %T: %w", list, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(items))
	for _, it := range items {
		if obj, ok := it.(client.Object); ok {
			names[obj.GetName()] = true
		}
	}
	return names, nil
}

// featureError is the refusal for a feature the plan lacks.
func featureError(path *field.Path, plan *monv1.Plan, f monv1.Feature) *field.Error {
	return field.Forbidden(path, fmt.Sprintf("the %s plan does not include %s (%s)", plan.Name, f, monitor.CodeFeatureNotAvail))
}
