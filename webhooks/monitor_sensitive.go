package webhooks

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
)

// validateInlineCredentials refuses a credential written in plain text into
// a Monitor: a literal header value, new in this write, that carries one
// (credentials.SensitiveHeader), a literal entry of a step's secrets, or a
// step body with a literal password or token (credentials.BodyCredential). Kubernetes' built-in `view` role reads
// Monitors whole, so the value must come from a Secret (valueFrom). The
// REST API moves literal values into the Monitor's own Secret before it
// writes, so only kubectl and GitOps writes meet this.
func validateInlineCredentials(old, m *monv1.Monitor) field.ErrorList {
	var was *monv1.MonitorSpec
	if old != nil {
		was = &old.Spec
	}
	var errs field.ErrorList
	for _, h := range credentials.NewInlineCredentials(&m.Spec, was) {
		what := "header " + h.Name + " carries a credential"
		if h.Secret {
			what = "secret " + h.Name + " is a credential"
		}
		errs = append(errs, field.Forbidden(h.Path.Child("value"), fmt.Sprintf(
			"%s, and anyone who may read Monitors (Kubernetes' view role) would read it: "+
				"put it in a Secret and reference it with valueFrom {name, key} (the Secret labelled %s=%q, or the REST API, which stores it for you)",
			what, monv1.CredentialsLabel, monv1.CredentialsLabelValue)))
	}
	for _, b := range credentials.NewInlineBodies(&m.Spec, was) {
		errs = append(errs, field.Forbidden(b.Path, fmt.Sprintf(
			"the body's field %s holds a credential in plain text, and anyone who may read Monitors (Kubernetes' view role) would read it: "+
				"add it to this step's secrets with valueFrom {name, key} (the Secret labelled %s=%q) and write {{name}} in the body",
			b.Field, monv1.CredentialsLabel, monv1.CredentialsLabelValue)))
	}
	return errs
}

// validateChannelInlineCredentials refuses a token-bearing webhook URL
// written in plain text into an AlertChannel (credentials.ChannelURLIsSecret)
// when it is new in this write: a chat or automation hook URL, or a
// generic webhook URL with a credential in it, must come from a Secret
// (webhookURLFrom). A URL stored before and left as it was passes.
func validateChannelInlineCredentials(old, c *monv1.AlertChannel) field.ErrorList {
	s := &c.Spec
	if s.WebhookURL == "" || (old != nil && old.Spec.WebhookURL == s.WebhookURL) || !credentials.ChannelURLIsSecret(s.Type, s.WebhookURL) {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "webhookURL"), fmt.Sprintf(
		"the %s URL is a credential (whoever has it posts to the channel), and anyone who may read AlertChannels (Kubernetes' view role) would read it: "+
			"put it in a Secret and reference it with webhookURLFrom {name, key} (or create the connection through the REST API, which stores it for you)",
		s.Type))}
}
