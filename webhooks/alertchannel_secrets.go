package webhooks

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
)

// validateChannelSecretRefs refuses a Secret reference of an AlertChannel,
// new in this write, that names a Secret the channel may not read
// (credentials.ChannelReferable: its own or opted in with the credentials
// label), as validateSecretRefs does for Monitors. A Secret that does not
// exist yet passes (the controller reports it; delivery checks the rule
// again), and references kept as they were are not checked again.
func (w AlertChannelWebhook) validateChannelSecretRefs(ctx context.Context, old, c *monv1.AlertChannel) (field.ErrorList, error) {
	had := map[monv1.SecretKeySelector]bool{}
	if old != nil {
		for _, ref := range old.Spec.SecretRefs() {
			had[ref.Ref] = true
		}
	}
	var errs field.ErrorList
	for _, ref := range c.Spec.SecretRefs() {
		if had[ref.Ref] || len(validation.IsDNS1123Subdomain(ref.Ref.Name)) > 0 {
			continue
		}
		var sec corev1.Secret
		err := w.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: ref.Ref.Name}, &sec)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read secret %s: %w", ref.Ref.Name, err)
		}
		if err := credentials.ChannelReferable(&sec, c); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("spec", ref.Field, "name"), err.Error()))
		}
	}
	return errs, nil
}
