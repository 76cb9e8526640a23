package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/aggregated"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// These tests use the fake client: they are narrow tests of who a limit
// counts, and every answer that is not 429 will do.

// kubeAPIServer is the one address every aggregated request comes from.
const kubeAPIServer = "10.96.0.1:443"

// callerFixture is the API with workspaces team-a and team-b and one
// standard key in team-a.
type callerFixture struct {
	t   *testing.T
	h   http.Handler
	key string
}

// serve sends r and checks the answer against docs/openapi.json.
func (f *callerFixture) serve(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	if err := coretest.CheckAnswer(r, w); err != nil {
		f.t.Error(err)
	}
	return w
}

func newCallerFixture(t *testing.T) *callerFixture {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = monv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}}).Build()
	full, _, err := apikeys.Create(context.Background(), c, "team-a", "ci", apikeys.Standard)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Client: c, Keys: c, Plans: &plans.Resolver{Reader: c}})
	return &callerFixture{t: t, h: s.Handler(), key: full}
}

// asUser sends a request as the aggregated door does: from kube-apiserver's
// address, with the Kubernetes user it vouched for.
func (f *callerFixture) asUser(user, namespace, method, path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.RemoteAddr = kubeAPIServer
	r.Header.Set("Content-Type", "application/json")
	r = InjectIdentity(r, aggregated.Identity{User: user, Namespace: namespace, Level: "standard"})
	return f.serve(r)
}

// fromAddr sends a request with the fixture's API key from addr.
func (f *callerFixture) fromAddr(addr, method, path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.RemoteAddr = addr
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+f.key)
	return f.serve(r)
}

// TestAggregatedLimitsCountPerUser (issue 27 row 5): through the aggregated
// door every request comes from kube-apiserver, so the per-address limits
// count the Kubernetes user instead. One user's 120 monitor writes and 1,000
// /stats calls use up that user's limits, not another user's.
func TestAggregatedLimitsCountPerUser(t *testing.T) {
	for _, tc := range []struct {
		name, method, path, body string
		limit                    int
	}{
		{"monitor writes", http.MethodPost, "/monitors", `{}`, 120},
		{"stats", http.MethodGet, "/stats/00000000-0000-0000-0000-000000000000/stats", "", 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCallerFixture(t)
			for i := range tc.limit {
				if w := f.asUser("alice", "team-a", tc.method, tc.path, tc.body); w.Code == http.StatusTooManyRequests {
					t.Fatalf("alice's request %d: 429", i+1)
				}
			}
			if w := f.asUser("alice", "team-a", tc.method, tc.path, tc.body); w.Code != http.StatusTooManyRequests {
				t.Fatalf("alice's request %d: %d, want 429", tc.limit+1, w.Code)
			}
			if w := f.asUser("bob", "team-b", tc.method, tc.path, tc.body); w.Code == http.StatusTooManyRequests {
				t.Fatalf("bob's first request in another workspace: 429 (%s)", w.Body.String())
			}
			if w := f.asUser("carol", "team-a", tc.method, tc.path, tc.body); w.Code == http.StatusTooManyRequests {
				t.Fatalf("carol's first request in alice's workspace: 429 (%s)", w.Body.String())
			}
			// An API-key client on the direct listener is counted by its
			// own address, apart from the aggregated users.
			if w := f.fromAddr("198.51.100.9:5000", tc.method, tc.path, tc.body); w.Code == http.StatusTooManyRequests {
				t.Fatalf("a key's first request: 429 (%s)", w.Body.String())
			}
		})
	}
}

// TestIPv6ClientsGroupedBy64 (issue 27 row 5): the per-address limits count
// an IPv6 client by its /64, which one host usually holds whole; a client
// rotating through its /64 stays in one bucket, another /64 has its own.
func TestIPv6ClientsGroupedBy64(t *testing.T) {
	f := newCallerFixture(t)
	for i := range 120 {
		addr := fmt.Sprintf("[2001:db8:1:2::%x]:5000", i+1)
		if w := f.fromAddr(addr, http.MethodPost, "/monitors", `{}`); w.Code == http.StatusTooManyRequests {
			t.Fatalf("write %d from %s: 429", i+1, addr)
		}
	}
	if w := f.fromAddr("[2001:db8:1:2:ffff::1]:5000", http.MethodPost, "/monitors", `{}`); w.Code != http.StatusTooManyRequests {
		t.Fatalf("121st write from the same /64: %d, want 429", w.Code)
	}
	if w := f.fromAddr("[2001:db8:1:3::1]:5000", http.MethodPost, "/monitors", `{}`); w.Code == http.StatusTooManyRequests {
		t.Fatal("a write from another /64: 429")
	}
}

// TestPublicStatusLimitIsShared: the public status endpoints, the HTML page
// and the forms count against one 60 a minute per client address, and the
// 429 carries the specification's headers.
func TestPublicStatusLimitIsShared(t *testing.T) {
	f := newProxyFixture(t)
	for i := range 60 {
		if code := f.do(http.MethodGet, "/status/page", "203.0.113.5", "", ""); code != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, code)
		}
	}
	for _, path := range []string{"/s/page", "/status/page/badge.svg"} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.RemoteAddr = "203.0.113.5:1234"
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" ||
			w.Header().Get("RateLimit-Limit") != "60" || w.Header().Get("RateLimit-Remaining") != "0" ||
			!strings.Contains(w.Body.String(), `"RATE_LIMITED"`) {
			t.Fatalf("%s after 60 requests: %d %v %s", path, w.Code, w.Header(), w.Body.String())
		}
	}
}
