package assign

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CredentialsTTL is how long a Secret read for an assignment is reused: a
// rotated credential reaches the agents within it.
const CredentialsTTL = 30 * time.Second

// secretCache is the narrow Secret reader of assignments: it reads through
// to the API server (the manager's cache holds only API key Secrets, so
// the manager's memory does not grow with the cluster's Secrets) and keeps
// each Secret it found for a short while, so recomputing every region's
// assignments costs one read per referenced Secret per TTL rather than one
// per monitor header. Missing Secrets are not remembered: a Secret created
// after its Monitor is picked up at the next computation.
type secretCache struct {
	reader SecretReader
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[client.ObjectKey]cachedSecret
}

type cachedSecret struct {
	secret *corev1.Secret
	at     time.Time
}

// maxCachedSecrets bounds the cache; it starts over when full.
const maxCachedSecrets = 10_000

// NewSecretCache returns a SecretReader over r that keeps found Secrets for
// ttl, by the clock now.
func NewSecretCache(r SecretReader, ttl time.Duration, now func() time.Time) SecretReader {
	return &secretCache{reader: r, ttl: ttl, now: now, entries: map[client.ObjectKey]cachedSecret{}}
}

// Get implements SecretReader for Secrets; other objects are read through.
func (c *secretCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	sec, ok := obj.(*corev1.Secret)
	if !ok {
		return c.reader.Get(ctx, key, obj, opts...)
	}
	now := c.now()
	c.mu.Lock()
	e, hit := c.entries[key]
	c.mu.Unlock()
	if hit && now.Sub(e.at) < c.ttl {
		e.secret.DeepCopyInto(sec)
		return nil
	}
	if err := c.reader.Get(ctx, key, sec, opts...); err != nil {
		c.mu.Lock()
		delete(c.entries, key)
		c.mu.Unlock()
		return err
	}
	c.mu.Lock()
	if len(c.entries) >= maxCachedSecrets {
		c.entries = map[client.ObjectKey]cachedSecret{}
	}
	c.entries[key] = cachedSecret{secret: sec.DeepCopy(), at: now}
	c.mu.Unlock()
	return nil
}
