package expiry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// clock is an injected, settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// rdapServer is a local RDAP service that knows one domain.
type rdapServer struct {
	*httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	expires  time.Time
	status   int
}

func newRDAP(t *testing.T, domain string, expires time.Time) *rdapServer {
	r := &rdapServer{expires: expires, status: http.StatusOK}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		r.mu.Lock()
		defer r.mu.Unlock()
		if req.URL.Path != "/domain/"+domain {
			http.NotFound(w, req)
			return
		}
		if r.status != http.StatusOK {
			w.WriteHeader(r.status)
			return
		}
		w.Header().Set("Content-Type", "application/rdap+json")
		fmt.Fprintf(w, `{"objectClassName":"domain","ldhName":%q,
 "events":[{"eventAction":"registration","eventDate":"2001-01-01T00:00:00Z"},
           {"eventAction":"expiration","eventDate":%q},
           {"eventAction":"last update of RDAP database","eventDate":"2026-01-01T00:00:00Z"}],
 "entities":[{"objectClassName":"entity","roles":["registrar"],
   "vcardArray":["vcard",[["version",{},"text","4.0"],["fn",{},"text","Example Registrar, Inc."]]]}]}`,
			domain, r.expires.Format(time.RFC3339))
	}))
	t.Cleanup(r.Close)
	return r
}

type fixture struct {
	st      store.Store
	clk     *clock
	checker *Checker
	k8s     client.Client
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = monv1.AddToScheme(s)
	return s
}

func newFixture(t *testing.T, rdapURL string, objs ...client.Object) *fixture {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	hook := &monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hook", UID: "ch-hook"},
		Spec: monv1.AlertChannelSpec{Type: monv1.ChannelWebhook}}
	other := &monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "only-db", UID: "ch-db"},
		Spec: monv1.AlertChannelSpec{Type: monv1.ChannelWebhook, Routing: &monv1.AlertRouting{Scope: "monitors", Monitors: []monv1.LocalObjectReference{{Name: "db"}}}}}
	k8s := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(append(objs, hook, other)...).Build()
	clk := &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	c := &Checker{Store: st, Reader: k8s, Notifier: &alerting.Router{Reader: k8s, BaseURL: "https://uptime.example.com", Now: clk.Now},
		Now: clk.Now, RDAPBaseURL: rdapURL, AllowPrivateTargets: true}
	return &fixture{st: st, clk: clk, checker: c, k8s: k8s}
}

func httpMonitor(name, url string, annotations map[string]string) *monv1.Monitor {
	return &monv1.Monitor{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: types.UID("uid-" + name), Annotations: annotations},
		Spec:       monv1.MonitorSpec{Name: "Shop " + name, Type: monv1.MonitorHTTP, URL: url},
	}
}

// notices returns the payloads delivered to the hook channel, oldest first.
func (f *fixture) notices(t *testing.T) []alertevent.ExpiryPayload {
	t.Helper()
	ds, err := f.st.ListDeliveries(context.Background(), store.DeliveryQuery{ChannelID: "ch-hook", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]alertevent.ExpiryPayload, 0, len(ds))
	for i := len(ds) - 1; i >= 0; i-- {
		var p alertevent.ExpiryPayload
		if err := json.Unmarshal(ds[i].Payload, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func (f *fixture) sweep(t *testing.T) time.Time {
	t.Helper()
	next, err := f.checker.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return next
}

func stages(ps []alertevent.ExpiryPayload) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Kind+":"+p.Stage)
	}
	return out
}

func TestCertificateNoticesAtStages(t *testing.T) {
	m := httpMonitor("shop", "https://10.0.0.1/health", map[string]string{ReminderDaysAnnotation: "12"})
	f := newFixture(t, "", m)
	ctx := context.Background()
	start := f.clk.Now()
	notAfter := start.Add(20 * day)
	// Two regions: the one still serving the older certificate counts.
	if err := f.checker.ObserveTLS(ctx, "uid-shop", "eu-1", start, probeapi.TLSInfo{NotAfter: notAfter.Add(30 * day), Issuer: "CN=New CA", Subject: "CN=shop"}); err != nil {
		t.Fatal(err)
	}
	if err := f.checker.ObserveTLS(ctx, "uid-shop", "us-1", start, probeapi.TLSInfo{NotAfter: notAfter, Issuer: "CN=Old CA", Subject: "CN=shop"}); err != nil {
		t.Fatal(err)
	}
	next := f.sweep(t)
	if n := len(f.notices(t)); n != 0 {
		t.Fatalf("notices 20 days before expiry = %d, want 0", n)
	}
	if want := notAfter.Add(-15 * day); !next.Equal(want) {
		t.Fatalf("next boundary = %v, want %v (pre_15d)", next, want)
	}

	want := []string{}
	for _, step := range []struct {
		at    time.Time
		stage string
	}{
		{notAfter.Add(-15 * day), "pre_15d"},
		{notAfter.Add(-14 * day), ""}, // same stage again: nothing
		{notAfter.Add(-12 * day), "pre_12d"},
		{notAfter.Add(-7 * day), "pre_7d"},
		{notAfter.Add(-2 * day), "pre_2d"},
		{notAfter.Add(-day), "pre_24h"},
		{notAfter.Add(-time.Hour), ""},
		{notAfter.Add(time.Minute), "post_1d"},
		{notAfter.Add(day + time.Minute), "post_2d"},
		{notAfter.Add(2*day + time.Minute), "post_3d"},
		{notAfter.Add(5 * day), ""},
	} {
		f.clk.Set(step.at)
		f.sweep(t)
		f.sweep(t) // a second sweep at the same time sends nothing more
		if step.stage != "" {
			want = append(want, "ssl:"+step.stage)
		}
		got := stages(f.notices(t))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("at %v: notices = %v, want %v", step.at.Sub(notAfter), got, want)
		}
	}
	ps := f.notices(t)
	p := ps[0]
	if p.Event != alertevent.SSLExpiring || p.MonitorID != "uid-shop" || p.MonitorName != "Shop shop" ||
		p.DaysRemaining != 15 || p.ExpiresAt != notAfter.Format(time.RFC3339) ||
		p.URL != "https://uptime.example.com/monitors/uid-shop/domain-ssl" || p.MonitorURL != "https://10.0.0.1/health" {
		t.Errorf("first payload = %+v", p)
	}
	if last := ps[len(ps)-1]; last.DaysRemaining != -3 {
		t.Errorf("post_3d days_remaining = %d, want -3", last.DaysRemaining)
	}
	// The channel whose routing does not cover the monitor got nothing.
	ds, err := f.st.ListDeliveries(ctx, store.DeliveryQuery{ChannelID: "ch-db"})
	if err != nil || len(ds) != 0 {
		t.Fatalf("deliveries to an unrouted channel = %d, %v", len(ds), err)
	}

	// A renewed certificate is a new expiry date: its stages start over.
	f.clk.Set(notAfter.Add(6 * day))
	renewed := f.clk.Now().Add(5 * day)
	for _, r := range []string{"eu-1", "us-1"} {
		if err := f.checker.ObserveTLS(ctx, "uid-shop", r, f.clk.Now(), probeapi.TLSInfo{NotAfter: renewed, Issuer: "CN=CA", Subject: "CN=shop"}); err != nil {
			t.Fatal(err)
		}
	}
	f.sweep(t)
	if got := stages(f.notices(t)); got[len(got)-1] != "ssl:pre_7d" || len(got) != len(want)+1 {
		t.Fatalf("after renewal: notices = %v", got)
	}
}

func TestDomainExpiryViaRDAP(t *testing.T) {
	expires := time.Date(2026, 5, 6, 0, 0, 0, 0, time.UTC) // 4.5 days after the start
	rdap := newRDAP(t, "example.co.uk", expires)
	m := httpMonitor("shop", "http://shop.example.co.uk/", nil)
	f := newFixture(t, rdap.URL, m, httpMonitor("blog", "http://blog.example.co.uk/", nil))
	ctx := context.Background()

	next := f.sweep(t)
	if n := rdap.requests.Load(); n != 1 {
		t.Fatalf("RDAP requests = %d, want 1 for two monitors on one domain", n)
	}
	got := stages(f.notices(t))
	if fmt.Sprint(got) != "[domain:pre_7d domain:pre_7d]" {
		t.Fatalf("notices = %v, want one pre_7d per monitor (no ssl: plain http)", got)
	}
	// The next lookup (a day later) comes before the pre_2d boundary.
	if want := f.clk.Now().Add(DomainLookupInterval); !next.Equal(want) {
		t.Fatalf("next = %v, want %v", next, want)
	}
	p := f.notices(t)[0]
	if p.Event != alertevent.DomainExpiring || p.Kind != "domain" || p.DaysRemaining != 4 {
		t.Errorf("payload = %+v", p)
	}

	// Within a day the cached lookup is used, also across sweeps.
	f.clk.Set(f.clk.Now().Add(23 * time.Hour))
	f.sweep(t)
	if n := rdap.requests.Load(); n != 1 {
		t.Fatalf("RDAP requests after 23h = %d, want 1", n)
	}
	// A day later the domain is looked up again; the registrant renewed.
	rdap.mu.Lock()
	rdap.expires = expires.AddDate(1, 0, 0)
	rdap.mu.Unlock()
	f.clk.Set(f.clk.Now().Add(2 * time.Hour))
	f.sweep(t)
	if n := rdap.requests.Load(); n != 2 {
		t.Fatalf("RDAP requests after 25h = %d, want 2", n)
	}
	if n := len(f.notices(t)); n != 2 {
		t.Fatalf("notices after renewal = %d, want still 2", n)
	}
	d, err := f.checker.Details(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if d.SSL != nil || d.Domain == nil || d.Domain.Name != "example.co.uk" || *d.Domain.ExpiresAt != "2027-05-06T00:00:00Z" ||
		*d.Domain.Registrar != "Example Registrar, Inc." || d.Domain.Error != nil || d.Domain.Stage != nil || len(d.Notices) != 1 {
		t.Fatalf("details = %s", mustJSON(d))
	}

	// A failing registry keeps the last known date and reports the error.
	rdap.mu.Lock()
	rdap.status = http.StatusServiceUnavailable
	rdap.mu.Unlock()
	f.clk.Set(f.clk.Now().Add(25 * time.Hour))
	f.sweep(t)
	d, err = f.checker.Details(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if d.Domain.Error == nil || *d.Domain.Error != "rdap lookup of example.co.uk: HTTP 503" || d.Domain.ExpiresAt == nil {
		t.Fatalf("details after a failed lookup = %s", mustJSON(d))
	}
}

func TestRefreshFetchesCertificate(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	m := httpMonitor("local", srv.URL+"/health", nil)
	f := newFixture(t, "", m)
	cert := srv.Certificate()
	f.clk.Set(cert.NotAfter.Add(-10 * day)) // pre_15d once fetched
	d, err := f.checker.Refresh(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if d.SSL == nil || d.SSL.ExpiresAt == nil || *d.SSL.ExpiresAt != cert.NotAfter.UTC().Format(time.RFC3339) ||
		len(d.SSL.Regions) != 1 || d.SSL.Regions[0].Region != ManagerRegion || *d.SSL.Stage != "pre_15d" || *d.SSL.DaysRemaining != 10 {
		t.Fatalf("details = %s", mustJSON(d))
	}
	if d.Domain != nil {
		t.Errorf("an IP target has no domain: %s", mustJSON(d.Domain))
	}
	if got := stages(f.notices(t)); fmt.Sprint(got) != "[ssl:pre_15d]" {
		t.Fatalf("notices = %v", got)
	}

	// Without private targets the guard refuses the loopback address.
	f.checker.AllowPrivateTargets = false
	_, err = f.checker.Refresh(context.Background(), m)
	var fe *FetchError
	if !errors.As(err, &fe) || !netguard.IsBlocked(err) {
		t.Fatalf("refresh of a loopback target = %v, want a blocked FetchError", err)
	}
}

// A gRPC monitor's certificate is fetched from its target with the server
// name it declares, like an https URL's.
func TestRefreshFetchesGRPCCertificate(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	m := httpMonitor("rpc", "", nil)
	m.Spec.Type, m.Spec.URL = monv1.MonitorGRPC, ""
	m.Spec.GRPC = &monv1.GRPCConfig{Target: srv.Listener.Addr().String(), ServerName: "example.com"}
	f := newFixture(t, "", m)
	cert := srv.Certificate()
	f.clk.Set(cert.NotAfter.Add(-10 * day))
	d, err := f.checker.Refresh(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if d.SSL == nil || d.SSL.Endpoint != srv.Listener.Addr().String() || d.SSL.ExpiresAt == nil ||
		*d.SSL.ExpiresAt != cert.NotAfter.UTC().Format(time.RFC3339) {
		t.Fatalf("details = %s", mustJSON(d))
	}
	if got := stages(f.notices(t)); fmt.Sprint(got) != "[ssl:pre_15d]" {
		t.Fatalf("notices = %v", got)
	}
}

func TestTargets(t *testing.T) {
	port := &monv1.Monitor{Spec: monv1.MonitorSpec{Type: monv1.MonitorPort, Port: &monv1.PortConfig{Host: "mail.example.com", Port: 993, TLS: true}}}
	for _, tc := range []struct {
		m            *monv1.Monitor
		applies      bool
		tlsAddr, dom string
	}{
		{httpMonitor("a", "https://www.shop.example.com/x", nil), true, "www.shop.example.com:443", "example.com"},
		{httpMonitor("b", "https://api.example.org:8443", nil), true, "api.example.org:8443", "example.org"},
		{httpMonitor("c", "http://example.net", nil), true, "", "example.net"},
		{httpMonitor("d", "https://[2001:db8::1]/", nil), true, "[2001:db8::1]:443", ""},
		{port, true, "mail.example.com:993", "example.com"},
		{&monv1.Monitor{Spec: monv1.MonitorSpec{Type: monv1.MonitorPort, Port: &monv1.PortConfig{Host: "db.example.com", Port: 5432}}}, false, "db.example.com:5432", "example.com"},
		{&monv1.Monitor{Spec: monv1.MonitorSpec{Type: monv1.MonitorPing}}, false, "", ""},
		{&monv1.Monitor{Spec: monv1.MonitorSpec{Type: monv1.MonitorPing, Ping: &monv1.PingConfig{Host: "www.example.com"}}}, false, "", ""},
		{&monv1.Monitor{Spec: monv1.MonitorSpec{Type: monv1.MonitorBrowser, URL: "https://app.example.com/login"}}, true, "app.example.com:443", "example.com"},
		{&monv1.Monitor{Spec: monv1.MonitorSpec{Type: monv1.MonitorGRPC, GRPC: &monv1.GRPCConfig{Target: "rpc.example.com:9090"}}}, true, "rpc.example.com:9090", "example.com"},
		{&monv1.Monitor{Spec: monv1.MonitorSpec{Type: monv1.MonitorGRPC, GRPC: &monv1.GRPCConfig{Target: "rpc.example.com:9090", Plaintext: true}}}, false, "", ""},
		{&monv1.Monitor{Spec: monv1.MonitorSpec{Type: monv1.MonitorWebSocket, WebSocket: &monv1.WebSocketConfig{URL: "wss://live.example.org/ws"}}}, true, "live.example.org:443", "example.org"},
		{&monv1.Monitor{Spec: monv1.MonitorSpec{Type: monv1.MonitorWebSocket, WebSocket: &monv1.WebSocketConfig{URL: "ws://live.example.org/ws"}}}, false, "", ""},
		{&monv1.Monitor{Spec: monv1.MonitorSpec{Type: monv1.MonitorDNS, DNS: &monv1.DNSConfig{Name: "example.com", RecordType: "A"}}}, false, "", ""},
	} {
		if got := Applies(tc.m); got != tc.applies {
			t.Errorf("Applies(%s %s) = %v", tc.m.Spec.Type, tc.m.Spec.URL, got)
		}
		if !tc.applies {
			continue
		}
		tg := targetOf(tc.m)
		if tg.tlsAddr != tc.tlsAddr || tg.domain != tc.dom {
			t.Errorf("target of %s = %+v, want %s %s", tc.m.Spec.URL, tg, tc.tlsAddr, tc.dom)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
