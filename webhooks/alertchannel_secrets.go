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
		for _, ref := range channelSecretRefs(&old.Spec) {
			had[*ref.sel] = true
		}
	}
	var errs field.ErrorList
	for _, ref := range channelSecretRefs(&c.Spec) {
		if had[*ref.sel] || len(validation.IsDNS1123Subdomain(ref.sel.Name)) > 0 {
			continue
		}
		var sec corev1.Secret
		err := w.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: ref.sel.Name}, &sec)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read secret %s: %w", ref.sel.Name, err)
		}
		if err := credentials.ChannelReferable(&sec, c); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("spec", ref.field, "name"), err.Error()))
		}
	}
	return errs, nil
}

// channelSecretRef is one Secret reference of a channel spec and its field.
type channelSecretRef struct {
	field string
	sel   *monv1.SecretKeySelector
}

func channelSecretRefs(s *monv1.AlertChannelSpec) []channelSecretRef {
	var out []channelSecretRef
	for _, r := range []channelSecretRef{{"webhookURLFrom", s.WebhookURLFrom}, {"integrationKeyFrom", s.IntegrationKeyFrom},
		{"apiKeyFrom", s.APIKeyFrom}, {"botTokenFrom", s.BotTokenFrom}, {"tokenFrom", s.TokenFrom}, {"signingSecretRef", s.SigningSecretRef}} {
		if r.sel != nil {
			out = append(out, r)
		}
	}
	return out
}
