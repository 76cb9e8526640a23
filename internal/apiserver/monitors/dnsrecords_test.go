package monitors

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// These tests drive the expiry and assist routes on a server over a fake
// client (narrow: no admission) with callers injected as the aggregated front
// door does; the envtest suite covers authentication.

type routeFixture struct {
	t   *testing.T
	srv *testServer
	st  store.Store
	k8s client.Client
	clk *clocktesting.FakePassiveClock
}

func newRouteFixture(t *testing.T, objs ...client.Object) *routeFixture {
	t.Helper()
	// The workspaces, plans and store of coretest, under a whole server.
	w := coretest.New(t, objs...)
	srv := newTestServer(testOptions{Client: w.K8s, Plans: w.Deps.Plans, Keys: w.K8s, Store: w.Store, Clock: w.Clock})
	return &routeFixture{t: t, srv: srv, st: w.Store, k8s: w.K8s, clk: w.Clock}
}

// call sends a request as a caller of ns at level.
func (f *routeFixture) call(ns string, level apikeys.Level, method, path string, body any) *httptest.ResponseRecorder {
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
	req = core.WithCaller(req, &core.Caller{Namespace: ns, Level: level, User: "alice"})
	rec := httptest.NewRecorder()
	f.srv.Handler().ServeHTTP(rec, req)
	if err := coretest.CheckAnswer(req, rec); err != nil {
		f.t.Error(err)
	}
	return rec
}

func decode(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("response %d %q: %v", rec.Code, rec.Body.String(), err)
	}
	return m
}

func expect(t *testing.T, rec *httptest.ResponseRecorder, code int, what string) map[string]any {
	t.Helper()
	if rec.Code != code {
		t.Fatalf("%s: status %d, want %d: %s", what, rec.Code, code, rec.Body.String())
	}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		return decode(t, rec)
	}
	return nil
}

func TestAcceptDNSRecords(t *testing.T) {
	dns := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dns", UID: types.UID("uid-dns")},
		Spec: monv1.MonitorSpec{Name: "DNS", Type: monv1.MonitorDNS, DNS: &monv1.DNSConfig{Name: "example.com", ExpectedValues: []string{"192.0.2.1"}}}}
	fresh := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "fresh", UID: types.UID("uid-fresh")},
		Spec: monv1.MonitorSpec{Name: "Fresh", Type: monv1.MonitorDNS, DNS: &monv1.DNSConfig{Name: "example.org", RecordType: "AAAA"}}}
	web := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", UID: types.UID("uid-web")},
		Spec: monv1.MonitorSpec{Name: "Web", Type: monv1.MonitorHTTP, URL: "https://example.com"}}
	f := newRouteFixture(t, dns, fresh, web)
	ctx := context.Background()
	at := time.Date(2026, 5, 1, 11, 0, 0, 0, time.UTC)
	for i, answers := range [][]string{{"192.0.2.1"}, {"198.51.100.7", "198.51.100.8", "198.51.100.7"}} {
		if _, err := f.st.RecordDNS(ctx, store.DNSRecord{MonitorID: "uid-dns", ObservedAt: at.Add(time.Duration(i) * time.Minute), RecordType: "A", Answers: answers}); err != nil {
			t.Fatal(err)
		}
	}
	// An answer of another record type (the monitor changed type since) is not taken.
	if _, err := f.st.RecordDNS(ctx, store.DNSRecord{MonitorID: "uid-fresh", ObservedAt: at, RecordType: "A", Answers: []string{"192.0.2.9"}}); err != nil {
		t.Fatal(err)
	}

	expect(t, f.call("team", apikeys.ReadOnly, "POST", "/monitors/uid-dns/dns-records/accept", nil), 403, "read-only key")
	got := expect(t, f.call("team", apikeys.Standard, "POST", "/monitors/uid-dns/dns-records/accept", nil), 200, "accept")
	if fmt.Sprint(got["expected_values"]) != "[198.51.100.7 198.51.100.8]" || got["record_type"] != "A" || got["observed_at"] != "2026-05-01T11:01:00.000000Z" {
		t.Fatalf("accept = %v", got)
	}
	var m monv1.Monitor
	if err := f.k8s.Get(ctx, client.ObjectKey{Namespace: "team", Name: "dns"}, &m); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(m.Spec.DNS.ExpectedValues) != "[198.51.100.7 198.51.100.8]" || m.Spec.DNS.Name != "example.com" {
		t.Fatalf("spec.dns after accept = %+v", m.Spec.DNS)
	}
	expect(t, f.call("team", apikeys.Standard, "POST", "/monitors/uid-fresh/dns-records/accept", nil), 409, "no answer of the record type")
	expect(t, f.call("team", apikeys.Standard, "POST", "/monitors/uid-web/dns-records/accept", nil), 400, "not a dns monitor")
	expect(t, f.call("other", apikeys.Standard, "POST", "/monitors/uid-dns/dns-records/accept", nil), 404, "another workspace")
}
