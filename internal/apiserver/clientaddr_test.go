package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/clientip"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// These tests use the fake client: they are narrow tests of the per-address
// limits and of key refusal, not of API-server behaviour (the envtest suite
// covers that).

// proxyFixture is the API behind a trusted proxy on 127.0.0.0/8, with one
// valid standard key in workspace "team".
type proxyFixture struct {
	t        *testing.T
	h        http.Handler
	key      string
	client   client.Client
	recorder *record.FakeRecorder
}

// heartbeatEngine knows one heartbeat token; the other Engine methods are
// not used by these tests.
type heartbeatEngine struct{ Engine }

func (heartbeatEngine) HeartbeatByToken(_ context.Context, token string, _ engine.Ping) error {
	if token != "good-token" {
		return engine.ErrUnknownToken
	}
	return nil
}

// okPublic answers every public status request with 200.
type okPublic struct{ PublicStatus }

func (okPublic) ServeStatus(w http.ResponseWriter, _ *http.Request, _, _ string) {
	w.WriteHeader(http.StatusOK)
}

func newProxyFixture(t *testing.T) *proxyFixture {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = monv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}).Build()
	full, _, err := apikeys.Create(context.Background(), c, "team", "ci", apikeys.Standard)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.NewFakeRecorder(10)
	s := New(Options{Client: c, Keys: c, Plans: &plans.Resolver{Reader: c}, Engine: heartbeatEngine{},
		Public: okPublic{}, Recorder: rec})
	proxy := clientip.Resolver{Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	return &proxyFixture{t: t, h: proxy.Middleware(s.Handler()), key: full, client: c, recorder: rec}
}

// do sends a request from peer, with X-Forwarded-For when forwarded is set.
func (f *proxyFixture) do(method, path, peer, forwarded, key string) int {
	r := httptest.NewRequest(method, path, nil)
	r.RemoteAddr = peer + ":40000"
	if forwarded != "" {
		r.Header.Set("X-Forwarded-For", forwarded)
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	if err := coretest.CheckAnswer(r, w); err != nil {
		f.t.Error(err)
	}
	return w.Code
}

// TestInvalidKeysBehindTrustedProxy: a client that sends 100 bad keys
// through the proxy is blocked; another client behind the same proxy is not.
func TestInvalidKeysBehindTrustedProxy(t *testing.T) {
	f := newProxyFixture(t)
	const proxy, attacker, user = "127.0.0.1", "203.0.113.66", "198.51.100.7"
	bad := "sk_" + strings.Repeat("x", 43)
	for i := range 100 {
		if code := f.do("GET", "/automation/whoami", proxy, "10.9.9.9, "+attacker, bad); code != http.StatusUnauthorized {
			t.Fatalf("bad key %d: %d", i, code)
		}
	}
	if code := f.do("GET", "/automation/whoami", proxy, attacker, f.key); code != http.StatusTooManyRequests {
		t.Fatalf("the attacker's address after 100 bad keys: %d, want 429", code)
	}
	if code := f.do("GET", "/automation/whoami", proxy, user, f.key); code != http.StatusOK {
		t.Fatalf("another client behind the same proxy: %d, want 200", code)
	}
	// A forged left part does not get the attacker out of the block.
	if code := f.do("GET", "/automation/whoami", proxy, user+", "+attacker, f.key); code != http.StatusTooManyRequests {
		t.Fatalf("forged X-Forwarded-For: %d, want 429", code)
	}
}

// TestUntrustedPeerCannotSpoof: a peer that is not a trusted proxy is the
// client, whatever X-Forwarded-For says.
func TestUntrustedPeerCannotSpoof(t *testing.T) {
	f := newProxyFixture(t)
	const peer = "192.0.2.10"
	bad := "sk_" + strings.Repeat("y", 43)
	for i := range 100 {
		f.do("GET", "/automation/whoami", peer, fmt.Sprintf("203.0.113.%d", i), bad)
	}
	if code := f.do("GET", "/automation/whoami", peer, "198.51.100.200", f.key); code != http.StatusTooManyRequests {
		t.Fatalf("untrusted peer with a fresh X-Forwarded-For: %d, want 429", code)
	}
}

// TestHeartbeatFailuresBehindTrustedProxy: 600 failed pings from one client
// behind the proxy do not block another client's cron pings.
func TestHeartbeatFailuresBehindTrustedProxy(t *testing.T) {
	f := newProxyFixture(t)
	const proxy, noisy, cron = "127.0.0.1", "203.0.113.66", "198.51.100.7"
	for i := range 600 {
		if code := f.do("GET", fmt.Sprintf("/heartbeat/bad-%d", i), proxy, noisy, ""); code != http.StatusNotFound {
			t.Fatalf("bad ping %d: %d", i, code)
		}
	}
	if code := f.do("GET", "/heartbeat/good-token", proxy, noisy, ""); code != http.StatusTooManyRequests {
		t.Fatalf("noisy client after 600 failures: %d, want 429", code)
	}
	if code := f.do("GET", "/heartbeat/good-token", proxy, cron, ""); code != http.StatusOK {
		t.Fatalf("another client's ping: %d, want 200", code)
	}
}

// TestPublicStatusBehindTrustedProxy: status-page visitors behind the proxy
// each have their own 60 requests a minute.
func TestPublicStatusBehindTrustedProxy(t *testing.T) {
	f := newProxyFixture(t)
	const proxy, busy, visitor = "127.0.0.1", "203.0.113.66", "198.51.100.7"
	for i := range 60 {
		if code := f.do("GET", "/status/page", proxy, busy, ""); code != http.StatusOK {
			t.Fatalf("request %d: %d", i, code)
		}
	}
	if code := f.do("GET", "/status/page", proxy, busy, ""); code != http.StatusTooManyRequests {
		t.Fatalf("61st request: %d, want 429", code)
	}
	if code := f.do("GET", "/status/page", proxy, visitor, ""); code != http.StatusOK {
		t.Fatalf("another visitor: %d, want 200", code)
	}
}

// TestUnknownKeyLevelRefused: a key whose Secret holds an unknown level is
// refused with 401 and a Warning Event on the Secret, not served as another
// level, and its refusals do not count as invalid keys.
func TestUnknownKeyLevelRefused(t *testing.T) {
	f := newProxyFixture(t)
	ctx := context.Background()
	var list corev1.SecretList
	if err := f.client.List(ctx, &list, client.InNamespace("team")); err != nil || len(list.Items) != 1 {
		t.Fatalf("key secrets: %v %d", err, len(list.Items))
	}
	s := &list.Items[0]
	s.Data["level"] = []byte("readonly")
	if err := f.client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	for range 120 {
		if code := f.do("GET", "/automation/whoami", "192.0.2.1", "", f.key); code != http.StatusUnauthorized {
			t.Fatalf("key with level readonly: %d, want 401", code)
		}
	}
	select {
	case ev := <-f.recorder.Events:
		if !strings.Contains(ev, "Warning "+core.ReasonUnknownAccessLevel) || !strings.Contains(ev, `"readonly"`) {
			t.Fatalf("event %q", ev)
		}
	default:
		t.Fatal("no Event recorded")
	}
	if len(f.recorder.Events) != 0 {
		t.Fatalf("%d more Events for the same key within a minute", len(f.recorder.Events))
	}
	s.Data["level"] = []byte("standard")
	if err := f.client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	if code := f.do("GET", "/automation/whoami", "192.0.2.1", "", f.key); code != http.StatusOK {
		t.Fatalf("fixed key: %d, want 200", code)
	}
}
