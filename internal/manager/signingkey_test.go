package manager

import (
	"bytes"
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// staleReader misses the Secret once, as a replica that lost the race to
// create it sees the world.
type staleReader struct {
	client.Reader
	missed bool
}

func (r *staleReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if !r.missed {
		r.missed = true
		return r.Reader.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: "nothing-here"}, obj, opts...)
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

func TestSigningKeyIsSharedAndKept(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(Scheme()).Build()
	first, err := signingKey(ctx, c, c, "ops")
	if err != nil || len(first) != signingKeyBytes {
		t.Fatalf("first start: %d bytes, %v", len(first), err)
	}
	again, err := signingKey(ctx, c, c, "ops")
	if err != nil || !bytes.Equal(first, again) {
		t.Fatal("a restarted manager must read the same key")
	}
	loser, err := signingKey(ctx, &staleReader{Reader: c}, c, "ops")
	if err != nil || !bytes.Equal(first, loser) {
		t.Fatalf("a replica that lost the race must read the winner's key (%v)", err)
	}
	other, err := signingKey(ctx, c, c, "elsewhere")
	if err != nil || bytes.Equal(first, other) {
		t.Fatal("another installation gets its own key")
	}

	bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "broken", Name: SigningKeySecret},
		Data: map[string][]byte{signingKeyField: []byte("short")}}
	if err := c.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := signingKey(ctx, c, c, "broken"); err == nil {
		t.Fatal("a key shorter than 32 bytes must be refused")
	}
}
