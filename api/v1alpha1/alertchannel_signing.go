package v1alpha1

// FieldOwner is the field manager of every write the operator makes to the
// API server: controllers, the alert worker and the REST API all patch as
// the same owner, so server-side apply and managedFields show one writer.
const FieldOwner = "uptime-operator"

// SigningSecretKey is the data key of the signing secret in the Secret the
// AlertChannel controller generates.
const SigningSecretKey = "signing-secret"

// SigningSecretName is the name of the Secret generated for a webhook
// channel without spec.signingSecretRef.
func SigningSecretName(channelName string) string { return channelName + "-signing" }

// SigningSecret is where a webhook channel's signing secret lives: the
// spec's reference, else the generated Secret named in status; nil until the
// controller has generated it. The controller writes the Secret, alerting
// signs deliveries with it and the REST API rotates it.
func (ch *AlertChannel) SigningSecret() *SecretKeySelector {
	if ch.Spec.SigningSecretRef != nil {
		return ch.Spec.SigningSecretRef
	}
	if ch.Status.SigningSecretName != "" {
		return &SecretKeySelector{Name: ch.Status.SigningSecretName, Key: SigningSecretKey}
	}
	return nil
}
