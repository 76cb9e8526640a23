package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/expiry"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// These tests drive the expiry and assist routes on a server over a fake
// client (narrow: no admission) with callers injected as the aggregated front
// door does; the envtest suite covers authentication.

type routeFixture struct {
	t   *testing.T
	srv *Server
	st  store.Store
	k8s client.Client
	clk *clocktesting.FakePassiveClock
}

func newRouteFixture(t *testing.T, objs ...client.Object) *routeFixture {
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
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	srv := New(Options{Client: k8s, Plans: &plans.Resolver{Reader: k8s}, Keys: k8s, Store: st, Clock: clk})
	return &routeFixture{t: t, srv: srv, st: st, k8s: k8s, clk: clk}
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
	req = req.WithContext(context.WithValue(req.Context(), callerKey{}, &Caller{Namespace: ns, Level: level, User: "alice"}))
	rec := httptest.NewRecorder()
	f.srv.Handler().ServeHTTP(rec, req)
	if err := CheckAnswer(req, rec); err != nil {
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

func TestExpiryRoutes(t *testing.T) {
	rdap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/domain/example.com" {
			http.NotFound(w, r)
			return
		}
		_, _ = fmt.Fprint(w, `{"objectClassName":"domain","events":[{"eventAction":"expiration","eventDate":"2026-05-08T00:00:00Z"}]}`)
	}))
	t.Cleanup(rdap.Close)
	shop := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "shop", UID: types.UID("uid-shop")},
		Spec: monv1.MonitorSpec{Name: "Shop", Type: monv1.MonitorHTTP, URL: "http://www.example.com/"}}
	ping := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "ping", UID: types.UID("uid-ping")},
		Spec: monv1.MonitorSpec{Name: "Ping", Type: monv1.MonitorPing}}
	f := newRouteFixture(t, shop, ping)
	x := &expiry.Checker{Store: f.st, Reader: f.k8s, Router: &alerting.Router{Reader: f.k8s}, Now: f.clk.Now, RDAPBaseURL: rdap.URL}
	f.srv.registerExpiryRoutes(x)

	got := expect(t, f.call("team", apikeys.ReadOnly, "GET", "/monitors/uid-shop/domain-ssl", nil), 200, "details before any lookup")
	if got["ssl"] != nil || got["domain"].(map[string]any)["expires_at"] != nil {
		t.Fatalf("details = %v", got)
	}
	expect(t, f.call("team", apikeys.ReadOnly, "POST", "/monitors/uid-shop/domain-ssl/refresh", nil), 403, "refresh with a read-only key")
	got = expect(t, f.call("team", apikeys.Standard, "POST", "/monitors/uid-shop/domain-ssl/refresh", nil), 200, "refresh")
	dom := got["domain"].(map[string]any)
	if dom["name"] != "example.com" || dom["expires_at"] != "2026-05-08T00:00:00Z" || dom["stage"] != "pre_7d" || dom["days_remaining"] != float64(6) {
		t.Fatalf("domain after refresh = %v", dom)
	}
	if n := got["notices"].([]any); len(n) != 1 || n[0].(map[string]any)["stage"] != "pre_7d" {
		t.Fatalf("notices = %v", n)
	}
	if got["refresh_error"] != nil {
		t.Fatalf("refresh_error = %v", got["refresh_error"])
	}
	expect(t, f.call("team", apikeys.Standard, "POST", "/monitors/uid-ping/domain-ssl/refresh", nil), 400, "refresh of a ping monitor")
	expect(t, f.call("other", apikeys.Standard, "GET", "/monitors/uid-shop/domain-ssl", nil), 404, "another workspace")

	// 20 refreshes per 15 minutes per workspace (two were made above).
	for i := range 18 {
		if rec := f.call("team", apikeys.Standard, "POST", "/monitors/uid-ping/domain-ssl/refresh", nil); rec.Code != 400 {
			t.Fatalf("refresh %d: %d", i+3, rec.Code)
		}
	}
	rec := f.call("team", apikeys.Standard, "POST", "/monitors/uid-shop/domain-ssl/refresh", nil)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("21st refresh: %d %v", rec.Code, rec.Header())
	}

	// Without a checker the endpoints answer 503.
	g := newRouteFixture(t, shop)
	g.srv.registerExpiryRoutes(nil)
	expect(t, g.call("team", apikeys.Standard, "GET", "/monitors/uid-shop/domain-ssl", nil), 503, "no checker")
}

func TestAcceptDNSRecords(t *testing.T) {
	dns := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dns", UID: types.UID("uid-dns")},
		Spec: monv1.MonitorSpec{Name: "DNS", Type: monv1.MonitorDNS, DNS: &monv1.DNSConfig{Name: "example.com", ExpectedValues: []string{"192.0.2.1"}}}}
	fresh := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "fresh", UID: types.UID("uid-fresh")},
		Spec: monv1.MonitorSpec{Name: "Fresh", Type: monv1.MonitorDNS, DNS: &monv1.DNSConfig{Name: "example.org", RecordType: "AAAA"}}}
	web := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", UID: types.UID("uid-web")},
		Spec: monv1.MonitorSpec{Name: "Web", Type: monv1.MonitorHTTP, URL: "https://example.com"}}
	f := newRouteFixture(t, dns, fresh, web)
	f.srv.registerExpiryRoutes(nil)
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

// chatStub speaks the chat-completions API.
func chatStub(t *testing.T) (*httptest.Server, *int) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-llm" {
			t.Errorf("chat request %s auth %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		var req struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Model != "writer" {
			t.Errorf("model = %q", req.Model)
		}
		_, _ = fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"We are investigating."},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestAssistRoutes(t *testing.T) {
	f := newRouteFixture(t)
	chat, calls := chatStub(t)
	svc := &assist.Service{Config: assist.Config{URL: chat.URL + "/v1", Model: "writer", APIKey: "sk-llm", MonthlyAllowance: 100},
		Store: f.st, Now: f.clk.Now}
	f.srv.registerAssistRoutes(svc)
	ctx := context.Background()
	inc, err := f.st.OpenIncident(ctx, store.Incident{Namespace: "team", MonitorID: "m1", MonitorName: "Shop", StartedAt: f.clk.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	freeInc, err := f.st.OpenIncident(ctx, store.Incident{Namespace: "free-ws", MonitorID: "m2", MonitorName: "Free"})
	if err != nil {
		t.Fatal(err)
	}
	base := "/incident-comms/incidents/" + inc.ID

	st := expect(t, f.call("team", apikeys.ReadOnly, "GET", "/incident-comms/status", nil), 200, "status")
	if st["available"] != true || st["model"] != "writer" || st["allowance"].(map[string]any)["remaining"] != float64(100) {
		t.Fatalf("status = %v", st)
	}
	fe := expect(t, f.call("free-ws", apikeys.Standard, "POST", "/incident-comms/incidents/"+freeInc.ID+"/summary", nil), 403, "plan without ai-assist")
	if fe["code"] != CodeFeatureNotAvailable {
		t.Fatalf("free plan = %v", fe)
	}
	expect(t, f.call("team", apikeys.ReadOnly, "POST", base+"/summary", nil), 403, "read-only key generating")

	sum := expect(t, f.call("team", apikeys.Standard, "POST", base+"/summary", nil), 200, "summary")
	if sum["body"] != "We are investigating." || sum["kind"] != "summary" {
		t.Fatalf("summary = %v", sum)
	}
	expect(t, f.call("other", apikeys.Standard, "POST", base+"/summary", nil), 404, "incident of another workspace")

	for _, bad := range []any{
		map[string]any{"phase": "panicking"},
		map[string]any{"guidance": strings.Repeat("x", 1001)},
		map[string]any{"tone": "calm"},
	} {
		expect(t, f.call("team", apikeys.Standard, "POST", base+"/status-updates", bad), 400, fmt.Sprint("bad status update ", bad))
	}
	d := expect(t, f.call("team", apikeys.Standard, "POST", base+"/status-updates", map[string]any{"phase": "identified", "guidance": "Be brief."}), 201, "status update")
	draftID := d["id"].(string)
	if d["status"] != "draft" || d["phase"] != "identified" {
		t.Fatalf("draft = %v", d)
	}
	expect(t, f.call("team", apikeys.Standard, "PATCH", "/incident-comms/status-updates/"+draftID, map[string]any{"body": strings.Repeat("x", 5001)}), 400, "body too long")
	ed := expect(t, f.call("team", apikeys.Standard, "PATCH", "/incident-comms/status-updates/"+draftID, map[string]any{"body": "We found the cause.", "phase": "monitoring"}), 200, "edit")
	if ed["body"] != "We found the cause." || ed["phase"] != "monitoring" {
		t.Fatalf("edited = %v", ed)
	}
	expect(t, f.call("other", apikeys.Standard, "POST", "/incident-comms/status-updates/"+draftID+"/publish", nil), 404, "draft of another workspace")
	pub := expect(t, f.call("team", apikeys.Standard, "POST", "/incident-comms/status-updates/"+draftID+"/publish", nil), 200, "publish")
	note := pub["note"].(map[string]any)
	if note["public"] != true || note["body"] != "We found the cause." || note["author"] != "alice" || pub["draft"].(map[string]any)["status"] != "published" {
		t.Fatalf("publish = %v", pub)
	}
	notes, err := f.st.ListNotes(ctx, inc.ID)
	if err != nil || len(notes) != 1 || !notes[0].Public {
		t.Fatalf("notes = %+v, %v", notes, err)
	}
	expect(t, f.call("team", apikeys.Standard, "POST", "/incident-comms/status-updates/"+draftID+"/publish", nil), 409, "publish twice")
	expect(t, f.call("team", apikeys.Standard, "POST", "/incident-comms/status-updates/"+draftID+"/discard", nil), 409, "discard a published draft")
	expect(t, f.call("team", apikeys.Standard, "PATCH", "/incident-comms/status-updates/"+draftID, map[string]any{"body": "x"}), 409, "edit a published draft")

	pm := expect(t, f.call("team", apikeys.Standard, "POST", base+"/postmortem/generate", map[string]any{}), 200, "postmortem")
	if pm["kind"] != "postmortem" {
		t.Fatalf("postmortem = %v", pm)
	}
	expect(t, f.call("team", apikeys.Standard, "POST", base+"/postmortem/generate", map[string]any{"overwrite": false}), 409, "postmortem exists")
	expect(t, f.call("team", apikeys.Standard, "POST", base+"/postmortem/generate", map[string]any{"overwrite": true}), 200, "overwrite")

	saved := expect(t, f.call("team", apikeys.ReadOnly, "GET", base, nil), 200, "saved content")
	if saved["summary"].(map[string]any)["body"] != "We are investigating." || saved["postmortem"] == nil || len(saved["status_updates"].([]any)) != 1 {
		t.Fatalf("saved = %v", saved)
	}

	// 30 generations per 10 minutes per workspace: eight requests so far
	// (one summary, three invalid and one valid status update, three
	// postmortems, one of them refused as existing); refusals count too.
	made := 8
	for i := made; i < 30; i++ {
		expect(t, f.call("team", apikeys.Standard, "POST", base+"/summary", nil), 200, fmt.Sprintf("generation %d", i+1))
	}
	rec := f.call("team", apikeys.Standard, "POST", base+"/summary", nil)
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("31st generation: %d %s", rec.Code, rec.Body.String())
	}
	f.clk.SetTime(f.clk.Now().Add(10 * time.Minute))
	expect(t, f.call("team", apikeys.Standard, "POST", base+"/summary", nil), 200, "after the window")
	if *calls != 27 {
		t.Fatalf("model calls = %d, want 27", *calls)
	}
}

func TestAssistAllowanceAndUnavailable(t *testing.T) {
	f := newRouteFixture(t)
	chat, _ := chatStub(t)
	svc := &assist.Service{Config: assist.Config{URL: chat.URL + "/v1", Model: "writer", APIKey: "sk-llm", MonthlyAllowance: 1},
		Store: f.st, Now: f.clk.Now}
	f.srv.registerAssistRoutes(svc)
	inc, err := f.st.OpenIncident(context.Background(), store.Incident{Namespace: "team", MonitorID: "m1", MonitorName: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	base := "/incident-comms/incidents/" + inc.ID
	expect(t, f.call("team", apikeys.Standard, "POST", base+"/summary", nil), 200, "first")
	lim := expect(t, f.call("team", apikeys.Standard, "POST", base+"/summary", nil), 403, "over the allowance")
	if lim["code"] != CodeEntitlementLimit || lim["details"].(map[string]any)["limit"] != float64(1) {
		t.Fatalf("allowance error = %v", lim)
	}

	g := newRouteFixture(t)
	g.srv.registerAssistRoutes(&assist.Service{Store: g.st, Now: g.clk.Now})
	inc2, err := g.st.OpenIncident(context.Background(), store.Incident{Namespace: "team", MonitorID: "m1", MonitorName: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	st := expect(t, g.call("team", apikeys.Standard, "GET", "/incident-comms/status", nil), 200, "status without a model")
	if st["available"] != false || st["features"].(map[string]any)["summary"] != false || st["reason"] == nil {
		t.Fatalf("status = %v", st)
	}
	un := expect(t, g.call("team", apikeys.Standard, "POST", "/incident-comms/incidents/"+inc2.ID+"/status-updates", map[string]any{"phase": "investigating"}), 503, "generation without a model")
	if un["code"] != CodeAIUnavailable {
		t.Fatalf("unavailable = %v", un)
	}
}
