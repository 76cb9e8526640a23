package credentials

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// ChannelReferable returns nil when AlertChannel ch may read Secret sec
// through one of its Secret references (webhookURLFrom, signingSecretRef,
// the keys and tokens), else a *ChannelNotAllowedError that says why. It is the
// Monitor rule (Referable) for channels: an AlertChannel writer who may
// not read Secrets must not make the manager read one for them, for
// instance sign every delivery to their server with an application
// password as the HMAC key (an offline-guessing oracle). So a channel
// reads only
//
//   - its own Secrets: those it owns (the REST API's <channel>-credentials
//     and the signing secret the controller generates), and
//   - Secrets that opt in with monv1.CredentialsLabel: "true";
//
// and never a Secret the operator made for something else, labelled or not.
// ch may be unsaved (no UID yet, as in admission of a create).
func ChannelReferable(sec *corev1.Secret, ch *monv1.AlertChannel) error {
	for _, o := range sec.OwnerReferences {
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err != nil || gv.Group != monv1.GroupVersion.Group {
			continue
		}
		if o.Kind == "AlertChannel" && ((ch.UID != "" && o.UID == ch.UID) || (ch.UID == "" && o.Name == ch.Name)) {
			return nil
		}
		return notAllowedForChannel(sec.Name, fmt.Sprintf("it belongs to %s %s", o.Kind, o.Name))
	}
	if of, ok := sec.Labels[monv1.CredentialsOfLabel]; ok {
		return notAllowedForChannel(sec.Name, fmt.Sprintf("it holds the credentials of monitor %s", of))
	}
	if why := madeForItself(sec); why != "" {
		return notAllowedForChannel(sec.Name, why)
	}
	if sec.Labels[monv1.CredentialsLabel] == monv1.CredentialsLabelValue {
		return nil
	}
	return notAllowedForChannel(sec.Name, fmt.Sprintf(
		"it is not one of the channel's own Secrets and does not opt in with the label %s=%q",
		monv1.CredentialsLabel, monv1.CredentialsLabelValue))
}

// ChannelNotAllowedError says why an AlertChannel may not read a Secret.
type ChannelNotAllowedError struct{ NotAllowedError }

func (e *ChannelNotAllowedError) Error() string {
	return fmt.Sprintf("secret %s may not be used by this channel: %s", e.Secret, e.Reason)
}

func notAllowedForChannel(secret, reason string) error {
	return &ChannelNotAllowedError{NotAllowedError{Secret: secret, Reason: reason}}
}

// madeForItself says why sec is a Secret the operator made for its own use
// (API keys, the manager's keys), or "".
func madeForItself(sec *corev1.Secret) string {
	if sec.Labels[monv1.ManagedByLabel] == monv1.ManagedByValue {
		return "the operator made it for its own use"
	}
	if t := string(sec.Type); len(t) > len("uptime-operator.io/") && t[:len("uptime-operator.io/")] == "uptime-operator.io/" {
		return fmt.Sprintf("the operator made it (type %s)", sec.Type)
	}
	return ""
}
