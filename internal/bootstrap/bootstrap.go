// Package bootstrap applies the ProbeRegions and Plans an installation
// declares in a file: the Helm chart's `regions` and `plans` values, rendered
// into a ConfigMap that the manager mounts.
//
// Why the manager and not Helm: the chart ships its CRDs as templates (so
// `helm upgrade` upgrades them), and Helm maps every object of a release to a
// served API before it creates any. On a first install the ProbeRegion and
// Plan kinds are not served yet, so Helm cannot create them in the same
// release, not even as post-install hooks: Helm builds hooks with the REST
// mapping it discovered before the CRDs existed ("resource mapping not found
// … ensure CRDs are installed first"). The manager starts after the CRDs are
// in, and retries until they are served.
//
// What is applied is owned by the field manager FieldManager and labelled
// Label=<release>; an object that carries the label but is no longer in the
// file is deleted, so removing a region from the values removes it from the
// cluster. Objects without the label (made with kubectl or GitOps) are never
// touched. Each applied object also gets an owner reference to a
// cluster-scoped object of the release (the chart's
// ValidatingWebhookConfiguration), so `helm uninstall` removes the regions,
// and with them their probe Deployments, through garbage collection, as if
// Helm had made them.
package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The manager's permissions for what it applies; only ProbeRegions and
// Plans, both cluster-scoped and outside every access role.
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=proberegions;plans,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get

const (
	// Label marks the objects applied from a bootstrap file; its value is
	// the Helm release. The ProbeRegion and Plan admission webhooks skip
	// objects with it (the manager applies them before its own webhook
	// server is reachable through its Service), which is why the chart
	// fills in defaults and checks at render time what the webhooks would.
	Label = "uptime-operator.io/helm-bootstrap"
	// FieldManager owns the applied fields.
	FieldManager = "uptime-operator-bootstrap"
)

// group is the API group of the kinds a bootstrap file may hold.
const group = "monitoring.uptime-operator.io"

// kinds a bootstrap file may hold, with their list kinds: the manager is not a
// general-purpose applier.
var kinds = map[string]string{"ProbeRegion": "ProbeRegionList", "Plan": "PlanList"}

// Parse reads the objects of a bootstrap file: YAML documents (or JSON), each
// a ProbeRegion or Plan of monitoring.uptime-operator.io. Empty documents are
// skipped. Every object gets Label=release.
func Parse(r io.Reader, release string) ([]*unstructured.Unstructured, error) {
	if release == "" {
		return nil, errors.New("bootstrap: the release name (the value of " + Label + ") is empty")
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var objs []*unstructured.Unstructured
	seen := map[string]bool{}
	for i := 1; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("bootstrap: document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		gvk := u.GroupVersionKind()
		if _, ok := kinds[gvk.Kind]; !ok || gvk.Group != group {
			return nil, fmt.Errorf("bootstrap: document %d: %s is not a ProbeRegion or Plan of %s", i, gvk, group)
		}
		if u.GetName() == "" {
			return nil, fmt.Errorf("bootstrap: document %d: %s without metadata.name", i, gvk.Kind)
		}
		if u.GetNamespace() != "" {
			return nil, fmt.Errorf("bootstrap: document %d: %s %q: both kinds are cluster-scoped, metadata.namespace must be empty", i, gvk.Kind, u.GetName())
		}
		id := gvk.Kind + "/" + u.GetName()
		if seen[id] {
			return nil, fmt.Errorf("bootstrap: document %d: %s is declared twice", i, id)
		}
		seen[id] = true
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[Label] = release
		u.SetLabels(labels)
		objs = append(objs, u)
	}
}

// Applier applies a bootstrap file once, after the manager won its election,
// retrying until the API server accepts every object. The chart changes the
// Deployment's pod template when the file changes, so a new manager applies
// the new file.
type Applier struct {
	Client client.Client
	// File is the path of the bootstrap file.
	File string
	// Release is the value of Label on what the file declares.
	Release string
	// OwnerWebhook names the ValidatingWebhookConfiguration of the release
	// that owns what is applied (garbage collection removes it with the
	// release); empty: no owner.
	OwnerWebhook string
	// Reader reads OwnerWebhook (uncached: one read at start); nil uses
	// Client.
	Reader client.Reader
	// Validate checks an object as admission would (the webhooks skip
	// objects carrying Label; webhooks.BootstrapValidator); an object it
	// refuses is not applied and is reported. nil checks nothing.
	Validate func(context.Context, *unstructured.Unstructured) error
	Log      logr.Logger
	// Retry is the first wait after a failed attempt (doubled up to a
	// minute); zero means 2 s.
	Retry time.Duration
}

// NeedLeaderElection makes one replica apply.
func (a *Applier) NeedLeaderElection() bool { return true }

// Start applies the file, retrying on errors until ctx ends. A file that does
// not parse is not retried: it fails the manager at once, saying why.
func (a *Applier) Start(ctx context.Context) error {
	data, err := os.ReadFile(a.File)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	objs, err := Parse(bytes.NewReader(data), a.Release)
	if err != nil {
		return err
	}
	wait := a.Retry
	if wait <= 0 {
		wait = 2 * time.Second
	}
	for {
		err := a.setOwner(ctx, objs)
		if err == nil {
			err = a.Apply(ctx, objs)
		}
		if err == nil {
			a.Log.Info("applied the bootstrap file", "file", a.File, "objects", len(objs), "release", a.Release)
			return nil
		}
		if refused := (*RefusedError)(nil); errors.As(err, &refused) {
			// Not retried: the file says the same on the next attempt.
			a.Log.Error(err, "refused objects of the bootstrap file; the others are applied", "file", a.File, "release", a.Release)
			return nil
		}
		a.Log.Error(err, "applying the bootstrap file; retrying", "file", a.File, "in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Minute)
	}
}

// setOwner makes OwnerWebhook the owner of objs.
func (a *Applier) setOwner(ctx context.Context, objs []*unstructured.Unstructured) error {
	if a.OwnerWebhook == "" {
		return nil
	}
	reader := a.Reader
	if reader == nil {
		reader = a.Client
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := reader.Get(ctx, types.NamespacedName{Name: a.OwnerWebhook}, &vwc); err != nil {
		return fmt.Errorf("the owner of the bootstrap objects, ValidatingWebhookConfiguration %q: %w", a.OwnerWebhook, err)
	}
	ref := metav1.OwnerReference{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration",
		Name: vwc.Name, UID: vwc.UID}
	for _, u := range objs {
		u.SetOwnerReferences([]metav1.OwnerReference{ref})
	}
	return nil
}

// RefusedError lists the objects of a bootstrap file that Validate refused.
// They were not applied; an object of that name applied earlier is kept as
// it was.
type RefusedError struct{ Errs []error }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("bootstrap: %d objects refused, not applied: %v", len(e.Errs), errors.Join(e.Errs...))
}

// Apply applies objs with server-side apply and deletes the objects labelled
// with the release that objs no longer declares. Objects Validate refuses
// are not applied and come back in a *RefusedError, once the rest is
// applied.
func (a *Applier) Apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	want := map[string]bool{}
	var refused []error
	for _, u := range objs {
		if a.Validate != nil {
			if err := a.Validate(ctx, u.DeepCopy()); err != nil {
				if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
					return fmt.Errorf("validate %s %q: %w", u.GetKind(), u.GetName(), err)
				}
				refused = append(refused, fmt.Errorf("%s %q: %w", u.GetKind(), u.GetName(), err))
				want[u.GetKind()+"/"+u.GetName()] = true
				continue
			}
		}
		if err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
			client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %q: %w", u.GetKind(), u.GetName(), err)
		}
		want[u.GetKind()+"/"+u.GetName()] = true
	}
	var errs []error
	for _, kind := range slices.Sorted(maps.Keys(kinds)) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: kinds[kind]})
		if err := a.Client.List(ctx, list, client.MatchingLabels{Label: a.Release}); err != nil {
			errs = append(errs, fmt.Errorf("list %s: %w", kinds[kind], err))
			continue
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if want[kind+"/"+obj.GetName()] || obj.GetDeletionTimestamp() != nil {
				continue
			}
			if err := a.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("delete %s %q, no longer in the bootstrap file: %w", kind, obj.GetName(), err))
				continue
			}
			a.Log.Info("deleted an object no longer in the bootstrap file", "kind", kind, "name", obj.GetName())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(refused) > 0 {
		return &RefusedError{Errs: refused}
	}
	return nil
}
