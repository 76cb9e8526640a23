package apikeys

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]Level{"read-only": ReadOnly, "read_only": ReadOnly, "Standard": Standard, "automation": Automation} {
		got, err := ParseLevel(in)
		if err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseLevel("owner"); err == nil {
		t.Error("ParseLevel(owner) must fail: owner is not a key level")
	}
}

func TestGenerateIsRandomAndPrefixed(t *testing.T) {
	a, _ := Generate()
	b, _ := Generate()
	if a == b || !strings.HasPrefix(a, "sk_") || len(a) != 46 {
		t.Fatalf("bad keys %q %q", a, b)
	}
}

// The fake client is enough here: this is a narrow unit test of the Secret
// layout and lookup, not of API-server behaviour.
func TestCreateAuthenticateDelete(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()

	key, k, err := Create(ctx, c, "ws1", "ci", Automation)
	if err != nil {
		t.Fatal(err)
	}
	var secrets corev1.SecretList
	_ = c.List(ctx, &secrets)
	for _, s := range secrets.Items {
		for _, v := range s.Data {
			if strings.Contains(string(v), key) {
				t.Fatal("the full key must never be stored")
			}
		}
		for _, v := range s.StringData {
			if strings.Contains(v, key) {
				t.Fatal("the full key must never be stored")
			}
		}
	}
	got, err := Authenticate(ctx, c, key)
	if err != nil || got.Namespace != "ws1" || got.Level != Automation || got.Name != "ci" {
		t.Fatalf("Authenticate = %+v, %v", got, err)
	}
	if !strings.HasPrefix(key, k.DisplayPrefix) {
		t.Errorf("display prefix %q is not a prefix of the key", k.DisplayPrefix)
	}
	if _, err := Authenticate(ctx, c, key+"x"); err != ErrNotFound {
		t.Errorf("wrong key: err = %v, want ErrNotFound", err)
	}
	keys, _ := List(ctx, c, "ws1")
	if len(keys) != 1 {
		t.Fatalf("List = %d keys, want 1", len(keys))
	}
	if err := Delete(ctx, c, "ws1", "ci"); err != nil {
		t.Fatal(err)
	}
	if _, err := Authenticate(ctx, c, key); err != ErrNotFound {
		t.Errorf("deleted key: err = %v, want ErrNotFound", err)
	}
	if err := Delete(ctx, c, "ws1", "ci"); err != ErrNotFound {
		t.Errorf("second delete: err = %v, want ErrNotFound", err)
	}
}

// TestLevelsFailClosed: Create stores the normalised level, and a Secret
// whose level is anything but the three stored forms is refused with
// ErrUnknownLevel instead of acting as some other level.
func TestLevelsFailClosed(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	full, k, err := Create(ctx, c, "team", "ci", Level("ReadOnly"))
	if err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: k.SecretName}, &s); err != nil {
		t.Fatal(err)
	}
	if got := string(s.Data[keyLevel]); got != "read-only" || k.Level != ReadOnly {
		t.Fatalf("stored level %q (key %q), want read-only", got, k.Level)
	}
	for _, lvl := range []string{"readonly", "Standard", "admin", "owner", "", " standard"} {
		s.Data[keyLevel] = []byte(lvl)
		if err := c.Update(ctx, &s); err != nil {
			t.Fatal(err)
		}
		got, err := Authenticate(ctx, c, full)
		if !errors.Is(err, ErrUnknownLevel) || got == nil || got.SecretName != k.SecretName {
			t.Errorf("level %q: Authenticate = %+v, %v; want ErrUnknownLevel with the key", lvl, got, err)
		}
	}
	s.Data[keyLevel] = []byte("automation")
	if err := c.Update(ctx, &s); err != nil {
		t.Fatal(err)
	}
	if got, err := Authenticate(ctx, c, full); err != nil || got.Level != Automation {
		t.Fatalf("automation: %+v, %v", got, err)
	}
}
