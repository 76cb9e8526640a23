// Package apikeys creates, finds and deletes API keys. A key is a Secret of
// type uptime-operator.io/api-key in the workspace's namespace holding only the
// SHA-256 hash of the key, its access level, name and display prefix: the full
// key is shown once, at creation, and cannot be recovered.
package apikeys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Level is a key's access level, chosen at creation and immutable.
type Level string

// The access levels of the specification.
const (
	ReadOnly   Level = "read-only"
	Standard   Level = "standard"
	Automation Level = "automation"
)

// Valid reports whether l is one of the three levels exactly as stored.
// Authentication accepts nothing else: a Secret written by hand with a
// level such as "readonly" or "admin" is refused, never read as another
// level.
func (l Level) Valid() bool {
	return l == ReadOnly || l == Standard || l == Automation
}

// ParseLevel accepts a level as the CLI or the REST API spells it and
// returns its stored (normalised) form.
func ParseLevel(s string) (Level, error) {
	switch strings.ReplaceAll(strings.ToLower(s), "_", "-") {
	case "read-only", "readonly":
		return ReadOnly, nil
	case "standard":
		return Standard, nil
	case "automation":
		return Automation, nil
	}
	return "", fmt.Errorf("unknown access level %q: use read-only, standard or automation", s)
}

// Secret layout.
const (
	// SecretType marks API key Secrets.
	SecretType corev1.SecretType = "uptime-operator.io/api-key"
	// HashLabel holds the first 32 hex digits of the key's SHA-256, so a
	// presented key is found by label selector rather than by listing.
	HashLabel = "uptime-operator.io/api-key-hash"
	// HashIndex is the cache field index on HashLabel the manager
	// registers: a label selector makes the cache test every key's labels
	// on every request, the index finds the one key.
	HashIndex = "metadata.labels.api-key-hash"
	// DisabledAnnotation is "true" on keys disabled by a lower plan key limit.
	DisabledAnnotation = "uptime-operator.io/disabled"

	keyHash   = "hash"
	keyLevel  = "level"
	keyName   = "name"
	keyPrefix = "prefix"

	// Prefix starts every key.
	Prefix       = "sk_"
	secretPrefix = "uptime-apikey-"
	maxNameLen   = 100
)

// Key is an API key as stored (without the key itself).
type Key struct {
	// ID is the Secret's UID.
	ID string
	// Namespace is the workspace the key acts on.
	Namespace string
	// SecretName is the Secret holding the key.
	SecretName string
	Name       string
	Level      Level
	// DisplayPrefix is the key's first characters, for recognising it.
	DisplayPrefix string
	CreatedAt     time.Time
	Disabled      bool
}

// Hash returns the hex SHA-256 of a presented key.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Generate returns a new random key: sk_ followed by 43 base62 characters
// (256 bits of entropy).
func Generate() (string, error) {
	var b strings.Builder
	b.WriteString(Prefix)
	max := big.NewInt(int64(len(alphabet)))
	for range 43 {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("generate key: %w", err)
		}
		b.WriteByte(alphabet[n.Int64()])
	}
	return b.String(), nil
}

// Create stores a new key in namespace ns and returns the full key, which is
// never available again.
func Create(ctx context.Context, c client.Client, ns, name string, level Level) (string, *Key, error) {
	if name == "" || len(name) > maxNameLen {
		return "", nil, fmt.Errorf("key name must be 1-%d characters", maxNameLen)
	}
	level, err := ParseLevel(string(level))
	if err != nil {
		return "", nil, err
	}
	key, err := Generate()
	if err != nil {
		return "", nil, err
	}
	h := Hash(key)
	display := key[:len(Prefix)+6]
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    ns,
			GenerateName: secretPrefix,
			Labels:       map[string]string{HashLabel: h[:32]},
		},
		Type: SecretType,
		Data: map[string][]byte{
			keyHash: []byte(h), keyLevel: []byte(level), keyName: []byte(name), keyPrefix: []byte(display),
		},
	}
	if err := c.Create(ctx, s); err != nil {
		return "", nil, fmt.Errorf("create api key secret: %w", err)
	}
	return key, fromSecret(s), nil
}

// List returns the keys of namespace ns, oldest first.
func List(ctx context.Context, r client.Reader, ns string) ([]Key, error) {
	var list corev1.SecretList
	if err := r.List(ctx, &list, client.InNamespace(ns), client.HasLabels{HashLabel}); err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	var out []Key
	for i := range list.Items {
		if list.Items[i].Type == SecretType {
			out = append(out, *fromSecret(&list.Items[i]))
		}
	}
	slices.SortFunc(out, func(a, b Key) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// Delete removes the key whose name, display prefix, id or Secret name is ref.
// Deletion is permanent and takes effect at once.
func Delete(ctx context.Context, c client.Client, ns, ref string) error {
	keys, err := List(ctx, c, ns)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.Name == ref || k.DisplayPrefix == ref || k.ID == ref || k.SecretName == ref {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: k.SecretName}}
			if err := c.Delete(ctx, s); err != nil {
				return fmt.Errorf("delete api key %s: %w", ref, err)
			}
			return nil
		}
	}
	return ErrNotFound
}

// Errors of Authenticate.
var (
	// ErrNotFound: no key matches.
	ErrNotFound = errors.New("Invalid API key")
	// ErrDisabled: the key is disabled by a lower plan key limit.
	ErrDisabled = errors.New("API key disabled")
	// ErrUnknownLevel: the key's Secret holds a level other than the three
	// stored forms, so the key is refused (fail closed) until its Secret is
	// fixed or the key is recreated.
	ErrUnknownLevel = errors.New("API key has an unknown access level")
)

// Authenticate finds the key presented in an Authorization header. It
// returns ErrNotFound for unknown keys, and the key together with
// ErrUnknownLevel (a wrapped error naming the level) or ErrDisabled for keys
// that may not be used.
// r may be a cached client: the hash label makes the lookup an index hit.
func Authenticate(ctx context.Context, r client.Reader, presented string) (*Key, error) {
	if !strings.HasPrefix(presented, Prefix) {
		return nil, ErrNotFound
	}
	h := Hash(presented)
	var list corev1.SecretList
	// Readers without the index (the API server, tests' fakes) refuse the
	// field selector and are asked by label.
	if err := r.List(ctx, &list, client.MatchingFields{HashIndex: h[:32]}); err != nil {
		if err := r.List(ctx, &list, client.MatchingLabels{HashLabel: h[:32]}); err != nil {
			return nil, fmt.Errorf("look up api key: %w", err)
		}
	}
	for i := range list.Items {
		s := &list.Items[i]
		if s.Type != SecretType || subtle.ConstantTimeCompare(s.Data[keyHash], []byte(h)) != 1 {
			continue
		}
		k := fromSecret(s)
		if !k.Level.Valid() {
			return k, fmt.Errorf("%w %q: use read-only, standard or automation", ErrUnknownLevel, k.Level)
		}
		if k.Disabled {
			return k, ErrDisabled
		}
		return k, nil
	}
	return nil, ErrNotFound
}

func fromSecret(s *corev1.Secret) *Key {
	get := func(k string) string { return string(s.Data[k]) }
	return &Key{
		ID:            string(s.UID),
		Namespace:     s.Namespace,
		SecretName:    s.Name,
		Name:          get(keyName),
		Level:         Level(get(keyLevel)),
		DisplayPrefix: get(keyPrefix),
		CreatedAt:     s.CreationTimestamp.Time,
		Disabled:      s.Annotations[DisabledAnnotation] == "true",
	}
}

// maxCachedValue bounds each data value of an API key Secret kept in the
// manager's cache: a hash, a level, a name of up to 100 characters and a
// display prefix are all far shorter.
const maxCachedValue = 512

// TrimForCache is the manager cache's transform of the Secrets it selects
// by HashLabel. Anyone who may write a Secret can set that label, so the
// cache keeps of each only what Authenticate and the key listing read: no
// data at all for a Secret that is not of SecretType, and only the four
// keys of an API key, each bounded. A labelled Secret of 1 MiB then costs
// its metadata only, not a megabyte of the manager's memory.
func TrimForCache(obj any) (any, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	s.ManagedFields = nil
	if s.Type != SecretType {
		s.Data, s.StringData = nil, nil
		return s, nil
	}
	kept := map[string][]byte{}
	for _, k := range []string{keyHash, keyLevel, keyName, keyPrefix} {
		if v, ok := s.Data[k]; ok && len(v) <= maxCachedValue {
			kept[k] = v
		}
	}
	s.Data, s.StringData = kept, nil
	return s, nil
}
