package credsecrets

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
)

// recording is a direct reader that remembers every read: which Secrets
// had their data read, and which only their metadata.
type recording struct {
	client.Reader
	mu       sync.Mutex
	full     []string
	metadata []string
}

func (r *recording) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.mu.Lock()
	if _, ok := obj.(*metav1.PartialObjectMetadata); ok {
		r.metadata = append(r.metadata, key.Name)
	} else {
		r.full = append(r.full, key.Name)
	}
	r.mu.Unlock()
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestOnlyReferableSecretsReachTheManager (issue 27 row 8): a Secret
// without the opt-in label or the own-credentials label is never held by
// the cache and its data is never read (only its metadata, to say why it
// is refused); labelled ones are served, also when created after the
// start; a Secret outside the watched namespaces is not seen at all.
func TestOnlyReferableSecretsReachTheManager(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, ns := range []string{"team", "elsewhere"} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	secret := func(ns, name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			StringData: map[string]string{"token": name + "-value"}}
	}
	optIn := map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}
	for _, s := range []*corev1.Secret{
		secret("team", "db-password", nil),
		secret("team", "wrong-value", map[string]string{monv1.CredentialsLabel: "yes"}),
		secret("team", "api-token", optIn),
		secret("team", "web-credentials", map[string]string{monv1.CredentialsOfLabel: "web"}),
		secret("elsewhere", "api-token", optIn),
	} {
		if err := k8s.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}

	direct := &recording{Reader: k8s}
	c, err := New(cfg, Options{Scheme: scheme, Namespaces: []string{"team"}, Direct: direct})
	if err != nil {
		t.Fatal(err)
	}
	// Before the informers start: labelled Secrets from the API server,
	// unlabelled ones refused by their metadata.
	var early corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "api-token"}, &early); err != nil || string(early.Data["token"]) != "api-token-value" {
		t.Fatalf("before the start: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "db-password"}, &early); !errors.As(err, new(*credentials.NotAllowedError)) {
		t.Fatalf("before the start, an unlabelled Secret: got %v, want a NotAllowedError", err)
	}
	if len(direct.full) != 1 || direct.full[0] != "api-token" {
		t.Fatalf("read in full before the start: %v, want api-token only", direct.full)
	}
	direct.full = nil

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Start(runCtx) }()
	defer func() { stop(); <-done }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the caches never synced")
	}

	// What the informers hold: the two labelled Secrets of "team" only.
	var held []string
	for _, ic := range c.caches {
		var list corev1.SecretList
		if err := ic.List(ctx, &list); err != nil {
			t.Fatal(err)
		}
		for _, s := range list.Items {
			held = append(held, s.Namespace+"/"+s.Name)
		}
	}
	if len(held) != 2 || !contains(held, "team/api-token") || !contains(held, "team/web-credentials") {
		t.Fatalf("the caches hold %v, want team/api-token and team/web-credentials only", held)
	}

	get := func(ns, name string) (*corev1.Secret, error) {
		var s corev1.Secret
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s)
		return &s, err
	}
	for _, name := range []string{"api-token", "web-credentials"} {
		s, err := get("team", name)
		if err != nil || string(s.Data["token"]) != name+"-value" {
			t.Fatalf("%s: %v, data %q", name, err, s.Data)
		}
	}
	for _, name := range []string{"db-password", "wrong-value"} {
		_, err := get("team", name)
		var notAllowed *credentials.NotAllowedError
		if !errors.As(err, &notAllowed) {
			t.Fatalf("%s: got %v, want a NotAllowedError", name, err)
		}
	}
	if _, err := get("team", "absent"); !apierrors.IsNotFound(err) {
		t.Fatalf("absent: got %v, want NotFound", err)
	}
	// Outside the watched namespaces: refused, not read.
	if _, err := get("elsewhere", "api-token"); !errors.As(err, new(*credentials.NotAllowedError)) {
		t.Fatalf("a Secret outside the watched namespaces: got %v, want a NotAllowedError", err)
	}
	if len(direct.full) != 0 {
		t.Fatalf("Secrets read in full from the API server: %v; want none (unlabelled ones by metadata only)", direct.full)
	}
	if !contains(direct.metadata, "db-password") {
		t.Fatalf("metadata reads %v: want db-password's", direct.metadata)
	}

	// A large labelled Secret costs the cache its metadata only (issue 36,
	// row 8), and is still served, read from the API server.
	big := secret("team", "big", optIn)
	big.StringData = map[string]string{"blob": strings.Repeat("x", 512<<10), "token": "big-value"}
	if err := k8s.Create(ctx, big); err != nil {
		t.Fatal(err)
	}
	for {
		var cached corev1.Secret
		err := c.caches[0].Get(ctx, client.ObjectKey{Namespace: "team", Name: "big"}, &cached)
		if err == nil {
			if len(cached.Data) != 0 || cached.Annotations[trimmedAnnotation] != "true" {
				t.Fatalf("the cache keeps %d keys of a Secret over MaxCachedData", len(cached.Data))
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the informer never saw the large Secret: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if s, err := get("team", "big"); err != nil || string(s.Data["token"]) != "big-value" || len(s.Data["blob"]) != 512<<10 {
		t.Fatalf("big: %v", err)
	}
	if !contains(direct.full, "big") {
		t.Fatalf("the large Secret was not read from the API server: %v", direct.full)
	}

	// Labelled later: served as soon as it is (from the API server while the
	// informer has not caught up, then from the informer).
	if err := k8s.Create(ctx, secret("team", "later", optIn)); err != nil {
		t.Fatal(err)
	}
	if s, err := get("team", "later"); err != nil || string(s.Data["token"]) != "later-value" {
		t.Fatalf("later: %v", err)
	}
	// A label removed: refused again once the informer sees it.
	var token corev1.Secret
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "team", Name: "api-token"}, &token); err != nil {
		t.Fatal(err)
	}
	token.Labels = nil
	if err := k8s.Update(ctx, &token); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := get("team", "api-token")
		var notAllowed *credentials.NotAllowedError
		if errors.As(err, &notAllowed) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("api-token without its label: still %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
