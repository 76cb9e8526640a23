package manager

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// The status pages sign private-page sessions, unsubscribe links and
// subscribers' webhook signing secrets with an HMAC key. A key made in each
// process would sign visitors out and break every unsubscribe link and
// subscriber signature when the manager restarts, and would differ between
// replicas; so it lives in a Secret of the manager's namespace that the
// first manager creates and every replica reads.

const (
	// SigningKeySecret is the Secret holding the key.
	SigningKeySecret = "uptime-operator-signing-key"
	signingKeyField  = "key"
	signingKeyBytes  = 32
)

// signingKey returns the key of Secret SigningKeySecret in ns, creating the
// Secret with a random key when there is none. Replicas starting together
// race to create it; the loser reads the winner's.
func signingKey(ctx context.Context, r client.Reader, w client.Writer, ns string) ([]byte, error) {
	key := client.ObjectKey{Namespace: ns, Name: SigningKeySecret}
	var s corev1.Secret
	err := r.Get(ctx, key, &s)
	if err == nil {
		if k := s.Data[signingKeyField]; len(k) >= signingKeyBytes {
			return k, nil
		}
		return nil, fmt.Errorf("secret %s/%s has no %q of at least %d bytes", ns, SigningKeySecret, signingKeyField, signingKeyBytes)
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("read secret %s/%s: %w", ns, SigningKeySecret, err)
	}
	k := make([]byte, signingKeyBytes)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("make signing key: %w", err)
	}
	s = corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SigningKeySecret,
			Labels: map[string]string{monv1.ManagedByLabel: monv1.ManagedByValue}},
		Data: map[string][]byte{signingKeyField: k},
	}
	if err := w.Create(ctx, &s); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return signingKey(ctx, r, w, ns)
		}
		return nil, fmt.Errorf("create secret %s/%s: %w", ns, SigningKeySecret, err)
	}
	return k, nil
}
