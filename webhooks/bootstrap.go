package webhooks

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// BootstrapValidator checks the objects of the bootstrap file
// (package bootstrap) with the checks admission applies to them. The
// chart's ProbeRegion and Plan webhooks skip objects labelled as
// bootstrapped (the manager applies them before its own webhook server is
// reachable), so without this whoever may write the bootstrap ConfigMap
// would create cluster-scoped regions and plans no admission has seen.
// reader reads the stored objects (the one being replaced, and the other
// regions whose codes must differ) from the API server.
func BootstrapValidator(reader client.Reader) func(context.Context, *unstructured.Unstructured) error {
	deps := &Deps{Reader: reader}
	return func(ctx context.Context, u *unstructured.Unstructured) error {
		switch u.GetKind() {
		case "ProbeRegion":
			var r monv1.ProbeRegion
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r); err != nil {
				return fmt.Errorf("decode: %w", err)
			}
			w := ProbeRegionWebhook{deps}
			_ = w.Default(ctx, &r)
			old := &monv1.ProbeRegion{}
			if err := stored(ctx, reader, r.Name, old); err != nil {
				return err
			} else if old.Name == "" {
				old = nil
			}
			return w.validate(ctx, old, &r)
		case "Plan":
			var p monv1.Plan
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
				return fmt.Errorf("decode: %w", err)
			}
			return invalid(&p, validatePlan(&p.Spec, field.NewPath("spec")))
		}
		return fmt.Errorf("%s is not a kind of the bootstrap file", u.GetKind())
	}
}

// stored reads the cluster-scoped object name into obj, leaving obj empty
// when there is none.
func stored(ctx context.Context, reader client.Reader, name string, obj client.Object) error {
	err := reader.Get(ctx, client.ObjectKey{Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	return nil
}
