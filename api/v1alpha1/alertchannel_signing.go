package v1alpha1

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// FieldOwner is the field manager of the operator's writes to the API
// server: controllers and the REST API patch as the same owner, so
// managedFields show one writer. The exception is a status with two
// writers, where each applies its own fields as a field manager of its own.
const FieldOwner = "uptime-operator"

// The field managers of AlertChannel status, written by server-side apply:
// each writer owns its fields and neither overwrites the other's.
const (
	// AlertChannelControllerFieldOwner owns observedGeneration,
	// connectionID, signingSecretName and the Ready, Reconciling and
	// Stalled conditions.
	AlertChannelControllerFieldOwner = "uptime-operator-alertchannel"
	// DeliveryFieldOwner, the delivery worker, owns consecutiveFailures,
	// lastDeliveryAt, lastDeliveryStatus and the Failing condition.
	DeliveryFieldOwner = "uptime-operator-delivery"
)

// DeliveryStatusFields are the AlertChannel status fields of
// DeliveryFieldOwner, as package ssa names them.
var DeliveryStatusFields = []string{"consecutiveFailures", "lastDeliveryAt", "lastDeliveryStatus",
	"conditions/" + AlertChannelConditionFailing}

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

// NewSigningSecret returns a new random webhook signing secret: "whsec_"
// and 32 random bytes in hex. The whole string is the HMAC key receivers
// use. The AlertChannel controller generates one for a webhook channel
// without a secret, and the REST API when it creates a webhook channel or
// rotates its secret.
func NewSigningSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate signing secret: %w", err)
	}
	return "whsec_" + hex.EncodeToString(b), nil
}
