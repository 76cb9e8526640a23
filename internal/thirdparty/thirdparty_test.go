package thirdparty

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// statuspageServer is a local Statuspage-compatible provider whose summary
// the test changes between polls. It answers 304 to a matching
// If-None-Match.
type statuspageServer struct {
	mu        sync.Mutex
	summary   string
	incidents string
	version   int
	requests  []string
	*httptest.Server
}

func newStatuspage(t *testing.T) *statuspageServer {
	s := &statuspageServer{incidents: `{"incidents":[]}`}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		etag := fmt.Sprintf(`"v%d"`, s.version)
		switch r.URL.Path {
		case "/api/v2/summary.json":
			if r.Header.Get("If-None-Match") == etag {
				s.requests = append(s.requests, "summary 304")
				w.WriteHeader(http.StatusNotModified)
				return
			}
			s.requests = append(s.requests, "summary 200")
			w.Header().Set("ETag", etag)
			_, _ = fmt.Fprint(w, s.summary)
		case "/api/v2/incidents.json":
			s.requests = append(s.requests, "incidents")
			_, _ = fmt.Fprint(w, s.incidents)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *statuspageServer) set(summary string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.summary = summary
	s.version++
}

func (s *statuspageServer) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[len(s.requests)-1]
}

func summary(indicator, components, incidents, maintenances string) string {
	return fmt.Sprintf(`{"page":{"id":"p","name":"Acme"},"status":{"indicator":%q},"components":[%s],"incidents":[%s],"scheduled_maintenances":[%s]}`,
		indicator, components, incidents, maintenances)
}

const (
	apiOK       = `{"id":"api","name":"API","status":"operational"}`
	apiPartial  = `{"id":"api","name":"API","status":"partial_outage"}`
	webOK       = `{"id":"web","name":"Website","status":"operational"}`
	groupOK     = `{"id":"grp","name":"Everything","status":"major_outage","group":true}`
	incOpen     = `{"id":"inc1","name":"Elevated API errors","status":"investigating","impact":"major","shortlink":"https://stspg.io/inc1","updated_at":"2026-05-01T12:00:00Z","incident_updates":[{"body":"We are investigating errors on the API."}],"components":[{"id":"api","name":"API"}]}`
	incUpdated  = `{"id":"inc1","name":"Elevated API errors","status":"identified","impact":"critical","shortlink":"https://stspg.io/inc1","updated_at":"2026-05-01T12:05:00Z","incident_updates":[{"body":"The cause is identified."}],"components":[{"id":"api","name":"API"}]}`
	incResolved = `{"id":"inc1","name":"Elevated API errors","status":"resolved","impact":"critical","shortlink":"https://stspg.io/inc1","updated_at":"2026-05-01T12:30:00Z","incident_updates":[{"body":"Fixed."}],"components":[{"id":"api","name":"API"}]}`
	maintSched  = `{"id":"m1","name":"Database upgrade","status":"scheduled","impact":"maintenance","components":[{"id":"web","name":"Website"}]}`
	maintActive = `{"id":"m1","name":"Database upgrade","status":"in_progress","impact":"maintenance","components":[{"id":"web","name":"Website"}]}`
)

type fixture struct {
	st  store.Store
	svc *Service
}

func newFixture(t *testing.T, providers ...Provider) *fixture {
	t.Helper()
	sch := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(sch)
	_ = monv1.AddToScheme(sch)
	hook := func(ns string) *monv1.AlertChannel {
		return &monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hook", UID: types.UID("hook-" + ns)},
			Spec: monv1.AlertChannelSpec{Type: monv1.ChannelWebhook}}
	}
	chat := &monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "chat", UID: "chat-team"},
		Spec: monv1.AlertChannelSpec{Type: monv1.ChannelSlack}}
	k8s := fake.NewClientBuilder().WithScheme(sch).WithObjects(hook("team"), hook("other"), chat).Build()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc := &Service{Store: st, Catalog: &Catalog{NoBuiltIn: true, Extra: providers}, Notifier: &alerting.Router{Reader: k8s},
		AllowPrivateTargets: true}
	return &fixture{st: st, svc: svc}
}

// notices returns the payloads enqueued for a channel since the last call
// (delivered ones are marked so they are not returned again).
func (f *fixture) notices(t *testing.T, channel string) []alertevent.ThirdPartyPayload {
	t.Helper()
	ds, err := f.st.ListDeliveries(context.Background(), store.DeliveryQuery{ChannelID: channel, Status: store.DeliveryPending, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []alertevent.ThirdPartyPayload
	for i := len(ds) - 1; i >= 0; i-- {
		var p alertevent.ThirdPartyPayload
		if err := json.Unmarshal(ds[i].Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p.Event != ds[i].Kind {
			t.Fatalf("event %q carries payload event %q", ds[i].Kind, p.Event)
		}
		out = append(out, p)
	}
	leased, err := f.st.LeaseDeliveries(context.Background(), "test", 1000, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range leased {
		if err := f.st.CompleteDelivery(context.Background(), "test", store.DeliveryAttempt{DeliveryID: d.ID, Attempt: 1, At: time.Now(), StatusCode: 200}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func kinds(ps []alertevent.ThirdPartyPayload) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Event+"/"+p.Kind+"/"+p.Severity)
	}
	return out
}

func (f *fixture) poll(t *testing.T, p Provider) {
	t.Helper()
	if err := f.svc.PollAll(context.Background()); err != nil {
		t.Fatalf("poll %s: %v", p.ID, err)
	}
}

func TestStatuspagePolling(t *testing.T) {
	sp := newStatuspage(t)
	acme := Provider{ID: "acme", Name: "Acme", Kind: KindStatuspage, URL: sp.URL}
	f := newFixture(t, acme)
	ctx := context.Background()
	_, err := f.st.InsertThirdPartySubscription(ctx, store.ThirdPartySubscription{Namespace: "team", ProviderID: "acme",
		Notify: true, NotifyMaintenance: true, MinSeverity: SeverityMinor})
	if err != nil {
		t.Fatal(err)
	}
	// "other" follows only the website, at major and above, without
	// maintenance.
	_, err = f.st.InsertThirdPartySubscription(ctx, store.ThirdPartySubscription{Namespace: "other", ProviderID: "acme",
		Notify: true, MinSeverity: SeverityMajor, ComponentIDs: []string{"web"}})
	if err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		name      string
		summary   string
		wantTeam  []string
		wantOther []string
		wantReq   string
	}{
		{"baseline: nothing announced", summary("none", apiOK+","+webOK+","+groupOK, "", maintSched), nil, nil, "summary 200"},
		{"unchanged: 304", "", nil, nil, "summary 304"},
		{"incident opens and the component degrades", summary("major", apiPartial+","+webOK+","+groupOK, incOpen, maintSched),
			[]string{"third_party.incident/incident_opened/major", "third_party.incident/component_degraded/major"}, nil, "summary 200"},
		{"incident updated", summary("critical", apiPartial+","+webOK+","+groupOK, incUpdated, maintSched),
			[]string{"third_party.incident/incident_updated/critical"}, nil, "summary 200"},
		{"maintenance starts", summary("critical", apiPartial+","+webOK+","+groupOK, incUpdated, maintActive),
			[]string{"third_party.maintenance/maintenance_started/maintenance"}, nil, "summary 200"},
		{"incident resolves, component recovers, maintenance completes", summary("none", apiOK+","+webOK+","+groupOK, incResolved, ""),
			[]string{"third_party.resolved/incident_resolved/operational", "third_party.maintenance/maintenance_completed/maintenance",
				"third_party.resolved/component_recovered/operational"}, nil, "summary 200"},
	}
	for _, step := range steps {
		if step.summary != "" {
			sp.set(step.summary)
		}
		f.poll(t, acme)
		if got := sp.last(); got != step.wantReq {
			t.Fatalf("%s: last request %q, want %q", step.name, got, step.wantReq)
		}
		team := f.notices(t, "hook-team")
		if got := kinds(team); !slices.Equal(got, step.wantTeam) {
			t.Fatalf("%s: team notices %v, want %v", step.name, got, step.wantTeam)
		}
		if got := kinds(f.notices(t, "hook-other")); !slices.Equal(got, step.wantOther) {
			t.Fatalf("%s: other notices %v, want %v", step.name, got, step.wantOther)
		}
		if got := f.notices(t, "chat-team"); len(got) != 0 {
			t.Fatalf("%s: a chat channel got third-party notices %v", step.name, got)
		}
		if step.name == "incident opens and the component degrades" {
			p := team[0]
			if p.ProviderID != "acme" || p.ProviderName != "Acme" || p.Detail != "Elevated API errors" || p.Title != "Acme: Elevated API errors" ||
				!slices.Equal(p.Components, []string{"API"}) || p.IncidentURL != "https://stspg.io/inc1" || p.StatusPageURL != sp.URL || p.URL == "" {
				t.Fatalf("incident payload = %+v", p)
			}
			if c := team[1]; c.Detail != "API: partial outage" || !slices.Equal(c.Components, []string{"API"}) {
				t.Fatalf("component payload = %+v", c)
			}
		}
	}

	// An incident that leaves the summary is resolved with incidents.json's
	// final update.
	sp.set(summary("minor", apiOK+","+webOK, `{"id":"inc2","name":"Slow website","status":"investigating","impact":"minor","updated_at":"x","components":[{"id":"web","name":"Website"}]}`, ""))
	f.poll(t, acme)
	if got := kinds(f.notices(t, "hook-team")); !slices.Equal(got, []string{"third_party.incident/incident_opened/minor"}) {
		t.Fatalf("second incident: %v", got)
	}
	if got := f.notices(t, "hook-other"); len(got) != 0 {
		t.Fatalf("minor website incident reached a major-only subscription: %v", kinds(got))
	}
	sp.mu.Lock()
	sp.incidents = `{"incidents":[{"id":"inc2","name":"Slow website (fixed)","status":"resolved","impact":"minor","components":[{"id":"web","name":"Website"}]}]}`
	sp.mu.Unlock()
	sp.set(summary("none", apiOK+","+webOK, "", ""))
	f.poll(t, acme)
	got := f.notices(t, "hook-team")
	if k := kinds(got); !slices.Equal(k, []string{"third_party.resolved/incident_resolved/operational"}) || got[0].Detail != "Slow website (fixed)" {
		t.Fatalf("incident gone from the summary: %v %+v", k, got)
	}
	if got := sp.last(); got != "incidents" {
		t.Fatalf("incidents.json not fetched: last request %q", got)
	}

	st, err := f.st.GetThirdPartyState(ctx, "acme")
	if err != nil || st.ETag == "" || st.Error != "" {
		t.Fatalf("state = %+v, %v", st, err)
	}
	d, err := f.svc.Details(ctx, "acme")
	if err != nil || len(d.Components) != 2 || d.Indicator != "none" {
		t.Fatalf("details = %+v, %v", d, err)
	}

	// A failing provider records the error and announces nothing.
	sp.Close()
	if err := f.svc.PollAll(ctx); err == nil {
		t.Fatal("poll of a closed provider succeeded")
	}
	st, _ = f.st.GetThirdPartyState(ctx, "acme")
	if st.Error == "" || len(st.Snapshot) == 0 {
		t.Fatalf("state after a failed poll = %+v", st)
	}
}

const atomFeed = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Cloud status</title>
  %s
</feed>`

func entry(id, title, summary, updated string) string {
	return fmt.Sprintf(`<entry><id>%s</id><title>%s</title><link rel="alternate" href="https://status.example.com/%s"/><updated>%s</updated><summary type="html">%s</summary></entry>`,
		id, title, id, updated, summary)
}

func TestAtomFeedPolling(t *testing.T) {
	var mu sync.Mutex
	body, lastMod := fmt.Sprintf(atomFeed, entry("e0", "Old incident", "Resolved long ago", "2026-04-01T00:00:00Z")), "Wed, 01 Apr 2026 00:00:00 GMT"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("If-Modified-Since") == lastMod {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Last-Modified", lastMod)
		w.Header().Set("Content-Type", "application/atom+xml")
		_, _ = fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	cloud := Provider{ID: "cloud", Name: "Cloud", Kind: KindFeed, URL: srv.URL + "/feed.atom", StatusPageURL: "https://status.example.com"}
	f := newFixture(t, cloud)
	ctx := context.Background()
	if _, err := f.st.InsertThirdPartySubscription(ctx, store.ThirdPartySubscription{Namespace: "team", ProviderID: "cloud",
		Notify: true, MinSeverity: SeverityMinor, Keywords: []string{"Compute"}}); err != nil {
		t.Fatal(err)
	}
	set := func(entries ...string) {
		mu.Lock()
		defer mu.Unlock()
		body = fmt.Sprintf(atomFeed, fmt.Sprint(entries))
		lastMod = time.Date(2026, 5, 1, 12, len(entries), 0, 0, time.UTC).Format(http.TimeFormat)
	}
	f.poll(t, cloud) // baseline
	if got := f.notices(t, "hook-team"); len(got) != 0 {
		t.Fatalf("baseline announced %v", kinds(got))
	}
	f.poll(t, cloud) // 304
	set(entry("e1", "Compute Engine outage in us-east1", "<p>Instances are unavailable.</p>", "2026-05-01T12:00:00Z"),
		entry("e2", "Storage latency", "Investigating", "2026-05-01T12:00:00Z"))
	f.poll(t, cloud)
	got := f.notices(t, "hook-team")
	if k := kinds(got); !slices.Equal(k, []string{"third_party.incident/incident_opened/major"}) {
		t.Fatalf("new entries: %v (the keyword filter keeps Compute only)", k)
	}
	if got[0].IncidentURL != "https://status.example.com/e1" || got[0].StatusPageURL != "https://status.example.com" || len(got[0].Components) != 0 {
		t.Fatalf("feed payload = %+v", got[0])
	}
	set(entry("e1", "Compute Engine outage in us-east1", "<p>The issue has been resolved.</p>", "2026-05-01T13:00:00Z"),
		entry("e2", "Storage latency", "Investigating", "2026-05-01T12:00:00Z"), entry("e3", "x", "y", "z"))
	f.poll(t, cloud)
	if k := kinds(f.notices(t, "hook-team")); !slices.Equal(k, []string{"third_party.resolved/incident_resolved/operational"}) {
		t.Fatalf("resolved entry: %v", k)
	}
}

func TestMatches(t *testing.T) {
	incident := Change{Kind: KindIncidentOpened, Severity: SeverityMajor, Rank: 2, ComponentIDs: []string{"api"}, Text: "API errors in EU"}
	resolvedMajor := Change{Kind: KindIncidentResolved, Severity: SeverityOperational, Rank: 2}
	maint := Change{Kind: KindMaintenanceStarted, Severity: SeverityMaintenance, ComponentIDs: []string{"db"}}
	noComponents := Change{Kind: KindIncidentOpened, Severity: SeverityMinor, Rank: 1, Text: "Something"}
	sub := func(mod func(*store.ThirdPartySubscription)) store.ThirdPartySubscription {
		s := store.ThirdPartySubscription{Notify: true, NotifyMaintenance: true, MinSeverity: SeverityMinor}
		mod(&s)
		return s
	}
	tests := []struct {
		name string
		sub  store.ThirdPartySubscription
		ch   Change
		want bool
	}{
		{"everything", sub(func(*store.ThirdPartySubscription) {}), incident, true},
		{"notify off", sub(func(s *store.ThirdPartySubscription) { s.Notify = false }), incident, false},
		{"notify off keeps maintenance", sub(func(s *store.ThirdPartySubscription) { s.Notify = false }), maint, true},
		{"maintenance not followed", sub(func(s *store.ThirdPartySubscription) { s.NotifyMaintenance = false }), maint, false},
		{"below min severity", sub(func(s *store.ThirdPartySubscription) { s.MinSeverity = SeverityCritical }), incident, false},
		{"at min severity", sub(func(s *store.ThirdPartySubscription) { s.MinSeverity = SeverityMajor }), incident, true},
		{"resolution ranked by what it ends", sub(func(s *store.ThirdPartySubscription) { s.MinSeverity = SeverityMajor }), resolvedMajor, true},
		{"min severity ignores maintenance", sub(func(s *store.ThirdPartySubscription) { s.MinSeverity = SeverityCritical }), maint, true},
		{"component followed", sub(func(s *store.ThirdPartySubscription) { s.ComponentIDs = []string{"web", "api"} }), incident, true},
		{"component not followed", sub(func(s *store.ThirdPartySubscription) { s.ComponentIDs = []string{"web"} }), incident, false},
		{"change without components passes", sub(func(s *store.ThirdPartySubscription) { s.ComponentIDs = []string{"web"} }), noComponents, true},
		{"keyword case-insensitive", sub(func(s *store.ThirdPartySubscription) { s.Keywords = []string{"eu"} }), incident, true},
		{"keyword missing", sub(func(s *store.ThirdPartySubscription) { s.Keywords = []string{"us-east"} }), incident, false},
	}
	for _, tc := range tests {
		if got := Matches(tc.sub, tc.ch); got != tc.want {
			t.Errorf("%s: Matches = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCatalogConfigMap(t *testing.T) {
	sch := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(sch)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "uptime-system", Name: DefaultConfigMapName}, Data: map[string]string{
		ConfigMapKey: `
- id: github
  disabled: true
- id: cloudflare
  name: Cloudflare (mirror)
  kind: statuspage
  url: https://mirror.example.com
- id: internal-idp
  name: Internal IdP
  kind: feed
  url: https://idp.example.com/status.rss
`}}
	k8s := fake.NewClientBuilder().WithScheme(sch).WithObjects(cm).Build()
	c := &Catalog{Reader: k8s, Namespace: "uptime-system", Extra: []Provider{{ID: "extra", Name: "Extra", Kind: KindFeed, URL: "https://x.example.com/feed"}}}
	list, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]Provider{}
	for _, p := range list {
		ids[p.ID] = p
	}
	if _, ok := ids["github"]; ok {
		t.Fatal("a disabled built-in provider is listed")
	}
	if ids["cloudflare"].URL != "https://mirror.example.com" || ids["internal-idp"].Kind != KindFeed || ids["extra"].Name != "Extra" || ids["aws"].Kind != KindFeed {
		t.Fatalf("catalog = %v", ids)
	}
	if _, err := ParseProviders([]byte(`- id: x
  kind: carrier-pigeon
  url: https://x`)); err == nil {
		t.Fatal("unknown kind accepted")
	}
	var _ client.Reader = k8s
}
