// Package coretest drives the routes of one resource package on a core
// router over a fake Kubernetes client (no admission) and a SQLite store,
// with callers injected as the aggregated front door does. The envtest
// suite of internal/apiserver covers authentication and admission; these
// fixtures let each resource package test its handlers next to them.
package coretest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
	"github.com/uptime-operator/uptime-operator/internal/writethrough"
)

// Fixture is a core router with no routes yet, its Deps and a store. The
// workspaces "team" and "other" are on the plan "pro" (every feature),
// "free-ws" on "free" (none).
type Fixture struct {
	Deps   *core.Deps
	Router *core.Router
	Store  store.Store
	// K8s is the fake client under the read-your-writes overlay.
	K8s   client.Client
	Clock *clocktesting.FakePassiveClock

	t testing.TB
}

// New starts a fixture holding objs besides the plans and namespaces.
func New(t testing.TB, objs ...client.Object) *Fixture {
	t.Helper()
	sch := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(sch)
	_ = monv1.AddToScheme(sch)
	base := []client.Object{
		&monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "pro"}, Spec: monv1.PlanSpec{Features: plans.AllFeatures()}},
		&monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "free"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{monv1.PlanLabel: "pro"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{monv1.PlanLabel: "pro"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "free-ws", Labels: map[string]string{monv1.PlanLabel: "free"}}},
	}
	k8s := fake.NewClientBuilder().WithScheme(sch).WithObjects(append(base, objs...)...).Build()
	// The store reads the fixture's clock too, so what it computes from
	// "now" (daily uptime, retention) agrees with the handlers.
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"), sqlite.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	overlay := &writethrough.Overlay{}
	deps := &core.Deps{Client: overlay.Client(k8s), Reader: k8s, Overlay: overlay, Plans: &plans.Resolver{Reader: k8s}, Clock: clk}
	rt := core.NewRouter(deps, core.RouterOptions{Keys: k8s, Store: st})
	return &Fixture{Deps: deps, Router: rt, Store: st, K8s: k8s, Clock: clk, t: t}
}

// Call sends a request as a caller of ns at level (the user "alice"). A
// string body is sent as it is, anything else as JSON.
func (f *Fixture) Call(ns string, level apikeys.Level, method, path string, body any) *httptest.ResponseRecorder {
	return f.CallAs(&core.Caller{Namespace: ns, Level: level, User: "alice"}, method, path, body)
}

// CallAs sends a request as caller c (an owner: Owner true, Level
// automation, as the aggregated door makes one). The answer must match its
// operation in docs/openapi.json (CheckAnswer).
func (f *Fixture) CallAs(c *core.Caller, method, path string, body any) *httptest.ResponseRecorder {
	var rd *bytes.Reader
	if body == nil {
		rd = bytes.NewReader(nil)
	} else if s, ok := body.(string); ok {
		rd = bytes.NewReader([]byte(s))
	} else {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	req = core.WithCaller(req, c)
	rec := httptest.NewRecorder()
	f.Router.Mux.ServeHTTP(rec, req)
	if err := CheckAnswer(req, rec); err != nil {
		f.t.Error(err)
	}
	return rec
}

// Decode decodes a JSON object answer.
func Decode(t testing.TB, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("response %d %q: %v", rec.Code, rec.Body.String(), err)
	}
	return m
}

// DecodeList decodes a JSON array of objects into v and returns its length.
func DecodeList(t testing.TB, rec *httptest.ResponseRecorder, v *[]map[string]any) int {
	t.Helper()
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	return len(*v)
}

// Expect fails t unless rec has status code; it returns the decoded JSON
// object answer, or nil for other content types.
func Expect(t testing.TB, rec *httptest.ResponseRecorder, code int, what string) map[string]any {
	t.Helper()
	if rec.Code != code {
		t.Fatalf("%s: status %d, want %d: %s", what, rec.Code, code, rec.Body.String())
	}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		return Decode(t, rec)
	}
	return nil
}
