// Package credsecrets is the manager's view of the Secrets a Monitor's
// header may reference (credentials.Referable): an informer cache that
// holds only Secrets labelled monv1.CredentialsLabel: "true" (opt-in) or
// carrying monv1.CredentialsOfLabel (a Monitor's own credentials Secret,
// labelled so by the REST API that makes it), and no other Secret.
//
// The manager used to read referenced Secrets straight from the API server
// with its cluster-wide permission, so any Secret of the cluster could pass
// through its memory. Label selectors are applied by the API server, so a
// Secret without one of the two labels never reaches this process: not in
// the cache, and its value never read. Kubernetes RBAC cannot grant "only
// labelled Secrets", so this is the narrowing the process itself does; the
// chart's secrets.namespaces narrows the grant itself to listed namespaces
// (docs/security.md, "Manager permissions").
//
// A label selector cannot say "this label or that one", hence one informer
// per label.
//
// Anyone who may write a Secret can set the opt-in label, so the cache
// bounds what each Secret costs: it keeps the data of a Secret only while
// the data is at most MaxCachedData bytes (header values and heartbeat
// tokens are far smaller), else only its metadata (trimForCache), and a
// read of such a Secret goes to the API server. The cache's memory is
// then at most the count of labelled Secrets times (metadata +
// MaxCachedData), whatever their size.
package credsecrets

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
)

// Cache reads the Secrets Monitors may reference. It is a manager
// runnable that runs on every replica (the webhooks and APIs of each one
// read it) and a client.Reader for Secrets.
type Cache struct {
	caches []cache.Cache
	// namespaces are the only ones watched (nil: every namespace).
	namespaces map[string]bool
	// meta reads a missed Secret's metadata (never its data) from the API
	// server, to tell a Secret that does not exist from one that does not
	// opt in, and full labelled Secrets the informers have not seen yet.
	direct client.Reader
}

// Options configure New.
type Options struct {
	// Scheme has the core kinds.
	Scheme *runtime.Scheme
	// Namespaces limits the watch to these namespaces (empty: every
	// namespace), for a manager whose RBAC grants Secrets in these only.
	Namespaces []string
	// Direct reads from the API server (the manager's API reader).
	Direct client.Reader
}

// New returns a Cache of cfg's cluster; it holds nothing until started.
func New(cfg *rest.Config, opts Options) (*Cache, error) {
	c := &Cache{direct: opts.Direct}
	if len(opts.Namespaces) > 0 {
		c.namespaces = map[string]bool{}
		for _, ns := range opts.Namespaces {
			c.namespaces[ns] = true
		}
	}
	for _, sel := range Selectors() {
		by := cache.ByObject{Label: sel, Transform: trimForCache}
		if len(opts.Namespaces) > 0 {
			by.Namespaces = map[string]cache.Config{}
			for _, ns := range opts.Namespaces {
				by.Namespaces[ns] = cache.Config{}
			}
		}
		ic, err := cache.New(cfg, cache.Options{
			Scheme:           opts.Scheme,
			ByObject:         map[client.Object]cache.ByObject{&corev1.Secret{}: by},
			DefaultTransform: cache.TransformStripManagedFields(),
			// Only Secrets are ever read here; anything else is a bug.
			ReaderFailOnMissingInformer: true,
		})
		if err != nil {
			return nil, fmt.Errorf("credential secrets cache: %w", err)
		}
		// Registered now, started with the cache: until then a read says
		// the cache has not started, and Get asks the API server.
		if _, err := ic.GetInformer(context.Background(), &corev1.Secret{}, cache.BlockUntilSynced(false)); err != nil {
			return nil, fmt.Errorf("credential secrets informer: %w", err)
		}
		c.caches = append(c.caches, ic)
	}
	return c, nil
}

// MaxCachedData is the most data (sum of key and value lengths) of a
// Secret the cache keeps; a larger Secret is kept as metadata only.
const MaxCachedData = 16 << 10

// trimmedAnnotation marks a cached Secret whose data trimForCache dropped;
// only the cache's copy carries it.
const trimmedAnnotation = "uptime-operator.io/cache-trimmed"

// trimForCache is the informers' transform: it drops managedFields, and the
// data of a Secret over MaxCachedData, marking it so Get reads it from the
// API server.
func trimForCache(obj any) (any, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	s.ManagedFields = nil
	size := 0
	for k, v := range s.Data {
		size += len(k) + len(v)
	}
	if size > MaxCachedData {
		s.Data, s.StringData = nil, nil
		ann := make(map[string]string, len(s.Annotations)+1)
		for k, v := range s.Annotations {
			ann[k] = v
		}
		ann[trimmedAnnotation] = "true"
		s.Annotations = ann
	}
	return s, nil
}

// Selectors are the label selectors of the Secrets a Monitor may
// reference: opted in, or a Monitor's own credentials.
func Selectors() []labels.Selector {
	optIn, err := labels.NewRequirement(monv1.CredentialsLabel, selection.Equals, []string{monv1.CredentialsLabelValue})
	must(err)
	own, err := labels.NewRequirement(monv1.CredentialsOfLabel, selection.Exists, nil)
	must(err)
	return []labels.Selector{labels.NewSelector().Add(*optIn), labels.NewSelector().Add(*own)}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// Start runs the informers until ctx ends.
func (c *Cache) Start(ctx context.Context) error {
	errs := make(chan error, len(c.caches))
	for _, ic := range c.caches {
		go func() { errs <- ic.Start(ctx) }()
	}
	var all []error
	for range c.caches {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// NeedLeaderElection is false: every replica admits Monitors and serves
// the REST API, both of which read referenced Secrets.
func (c *Cache) NeedLeaderElection() bool { return false }

// WaitForCacheSync waits until every informer has listed its Secrets.
func (c *Cache) WaitForCacheSync(ctx context.Context) bool {
	for _, ic := range c.caches {
		if !ic.WaitForCacheSync(ctx) {
			return false
		}
	}
	return true
}

// Get reads the Secret key into obj (a *corev1.Secret). A Secret in
// neither informer is looked at by its metadata only: absent, it is
// NotFound; carrying neither label, the answer is a
// *credentials.NotAllowedError and its data is never read; labelled (an
// informer that has not seen it yet, or informers not started yet), it is
// read from the API server. A namespace outside Options.Namespaces is
// refused with a *credentials.NotAllowedError.
func (c *Cache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	sec, ok := obj.(*corev1.Secret)
	if !ok {
		return fmt.Errorf("credential secrets: cannot read %T", obj)
	}
	if c.namespaces != nil && !c.namespaces[key.Namespace] {
		return &credentials.NotAllowedError{Secret: key.Name, Reason: fmt.Sprintf(
			"the operator may not read Secrets in namespace %s (it is not among the chart's rbac.secretNamespaces)", key.Namespace)}
	}
	for _, ic := range c.caches {
		err := ic.Get(ctx, key, sec, opts...)
		var notStarted *cache.ErrCacheNotStarted
		if errors.As(err, &notStarted) {
			break // the first moments after the start: ask the API server
		}
		if err == nil && sec.Annotations[trimmedAnnotation] == "true" && c.direct != nil {
			// Too large to cache; labelled, so it may be read.
			return c.direct.Get(ctx, key, sec, opts...)
		}
		if err == nil || !apierrors.IsNotFound(err) {
			return err
		}
	}
	if c.direct == nil {
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := c.direct.Get(ctx, key, meta); err != nil {
		return err
	}
	for _, sel := range Selectors() {
		if sel.Matches(labels.Set(meta.Labels)) {
			return c.direct.Get(ctx, key, sec, opts...)
		}
	}
	return &credentials.NotAllowedError{Secret: key.Name, Reason: fmt.Sprintf(
		"it is not a monitor's own credentials Secret and does not opt in with the label %s=%q",
		monv1.CredentialsLabel, monv1.CredentialsLabelValue)}
}

// List is not offered: nothing lists the Secrets Monitors may reference.
func (c *Cache) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("credential secrets: list is not supported")
}
