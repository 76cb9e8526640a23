package sitehealth

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// testSite is a loopback website: an https site with broken links, an
// external link, mixed content, a redirect chain, a slow page and a
// robots.txt, and a plain-http "external" server on another port.
type testSite struct {
	site, ext *httptest.Server
	mu        sync.Mutex
	hits      []string
	extra     string // more links on the home page
}

func (ts *testSite) hit(p string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.hits = append(ts.hits, p)
}

func (ts *testSite) requested(p string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return slices.Contains(ts.hits, p)
}

func newTestSite(t *testing.T) *testSite {
	t.Helper()
	ts := &testSite{}
	ts.ext = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok", "/img.png", "/app.js", "/style.css":
		case "/head-refused":
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.ext.Close)
	page := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprintf(w, "<!doctype html><html lang=en><head><title>t</title></head><body>%s</body></html>", body)
	}
	ts.site = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.hit(r.URL.Path)
		e := ts.ext.URL
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = fmt.Fprint(w, "User-agent: *\nDisallow: /private\nAllow: /private/open\n")
		case "/":
			page(w, `<a href="/a">a</a> <a href="/missing">missing</a> <a href="/old">old</a> <a href="/slow">slow</a>
<a href="/private/secret">secret</a> <a href="/private/open">open</a> <a href="mailto:x@example.com">mail</a> <a href="#top">top</a>
<a href="`+e+`/ok">ok</a> <a href="`+e+`/gone">gone</a> <a href="`+e+`/head-refused">head</a>
<img src="`+e+`/img.png"> <script src="`+e+`/app.js"></script> <link rel="stylesheet" href="`+e+`/style.css">
<link rel="canonical" href="http://example.com/"> <img src="/logo.png">`+ts.extra)
		case "/a":
			page(w, `<a href="/deep">deep</a> <a href="/">home</a>`)
		case "/deep":
			page(w, `<a href="/deeper">deeper</a>`)
		case "/old":
			http.Redirect(w, r, "/mid", http.StatusMovedPermanently)
		case "/mid":
			http.Redirect(w, r, "/a", http.StatusFound)
		case "/slow":
			time.Sleep(2500 * time.Millisecond)
			page(w, "slow")
		case "/private/open", "/deeper", "/new-page":
			page(w, "ok")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.site.Close)
	return ts
}

// config crawls the test site. A page is slow after 2 s (the /slow page
// takes 2.5 s): on a loaded machine a TLS page of this site takes up to a
// second, which must not count as slow.
func (ts *testSite) config() CrawlConfig {
	return CrawlConfig{URL: ts.site.URL + "/", MaxPages: 50, MaxDepth: 1, CheckExternal: true,
		Guard: netguard.Guard{AllowPrivate: true}, SlowAfter: 2 * time.Second, Timeout: 5 * time.Second,
		TLSConfig: &tls.Config{RootCAs: ts.site.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}}
}

func issueSet(issues []store.HealthIssue) map[string]store.HealthIssue {
	out := map[string]store.HealthIssue{}
	for _, is := range issues {
		out[is.Kind+" "+is.URL] = is
	}
	return out
}

func TestCrawl(t *testing.T) {
	ts := newTestSite(t)
	res, err := Crawl(context.Background(), ts.config())
	if err != nil {
		t.Fatal(err)
	}
	s, e := ts.site.URL, ts.ext.URL
	got := issueSet(res.Issues)
	want := map[string]string{
		KindBrokenLink + " " + s + "/missing":     "HTTP 404",
		KindBrokenExternal + " " + e + "/gone":    "HTTP 404",
		KindMixedContent + " " + e + "/img.png":   "<img>",
		KindMixedContent + " " + e + "/app.js":    "<script>",
		KindMixedContent + " " + e + "/style.css": "<link>",
		KindRedirectChain + " " + s + "/old":      "2 redirects",
		KindSlowPage + " " + s + "/slow":          "loaded in",
	}
	for k, detail := range want {
		is, ok := got[k]
		if !ok {
			t.Errorf("missing issue %s; got %v", k, res.Issues)
			continue
		}
		if !strings.Contains(is.Detail, detail) {
			t.Errorf("%s detail = %q, want %q", k, is.Detail, detail)
		}
	}
	if len(got) != len(want) {
		t.Errorf("issues = %d, want %d: %+v", len(got), len(want), res.Issues)
	}
	if is := got[KindBrokenLink+" "+s+"/missing"]; is.SourceURL != s+"/" {
		t.Errorf("source of the broken link = %q", is.SourceURL)
	}
	// robots.txt: /private is disallowed, /private/open allowed.
	if ts.requested("/private/secret") || !ts.requested("/private/open") || res.RobotsSkipped != 1 {
		t.Errorf("robots: secret requested %v, open requested %v, skipped %d", ts.requested("/private/secret"), ts.requested("/private/open"), res.RobotsSkipped)
	}
	// Depth 1: /a is parsed, /deep (depth 2) checked but not parsed.
	if !ts.requested("/deep") || ts.requested("/deeper") {
		t.Errorf("depth: deep %v, deeper %v", ts.requested("/deep"), ts.requested("/deeper"))
	}
	if res.ExternalChecked != 3 {
		t.Errorf("external checked = %d", res.ExternalChecked)
	}
	if c := CountIssues(res.Issues); CrawlScore(c) != 100-5-2-9-1-2 {
		t.Errorf("score = %d for %+v", CrawlScore(c), c)
	}

	// max_pages bounds the requests to the site.
	ts.hits = nil
	cfg := ts.config()
	cfg.MaxPages, cfg.CheckExternal = 3, false
	res, err = Crawl(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	pages := 0
	for _, h := range ts.hits {
		if h != "/robots.txt" {
			pages++
		}
	}
	if res.Pages != 3 || pages != 3 {
		t.Errorf("pages = %d, requests %v", res.Pages, ts.hits)
	}
	if slices.ContainsFunc(res.Issues, func(is store.HealthIssue) bool { return is.Kind == KindBrokenExternal }) {
		t.Errorf("external links checked although off")
	}
}

func TestCrawlStartPage(t *testing.T) {
	ts := newTestSite(t)
	cfg := ts.config()
	cfg.URL = ts.site.URL + "/missing"
	var se *StartError
	if _, err := Crawl(context.Background(), cfg); !errors.As(err, &se) {
		t.Fatalf("missing start page: %v", err)
	}
	// Without AllowPrivate the guard refuses loopback, redirects included.
	cfg = ts.config()
	cfg.Guard = netguard.Guard{}
	_, err := Crawl(context.Background(), cfg)
	if !errors.As(err, &se) || !netguard.IsBlocked(err) {
		t.Fatalf("guarded crawl of loopback: %v", err)
	}
}

func TestRobots(t *testing.T) {
	rb := ParseRobots(strings.NewReader(`
User-agent: *
Disallow: /

User-agent: uptime-operator
User-agent: other
Disallow: /admin
Allow: /admin/public$
Disallow: /*.pdf$
`), RobotsAgent)
	for path, want := range map[string]bool{
		"/": true, "/admin": false, "/admin/x": false, "/admin/public": true, "/admin/public/x": false,
		"/doc.pdf": false, "/doc.pdf?x": true, "/docs": true,
	} {
		if got := rb.Allowed(path); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", path, got, want)
		}
	}
	star := ParseRobots(strings.NewReader("User-agent: *\nDisallow: /tmp\n"), RobotsAgent)
	if star.Allowed("/tmp/x") || !star.Allowed("/x") {
		t.Error("star group not applied")
	}
	open := ParseRobots(strings.NewReader("User-agent: *\nDisallow: /\n\nUser-agent: uptime-operator\nDisallow:\n"), RobotsAgent)
	if !open.Allowed("/x") {
		t.Error("an empty named group must allow everything")
	}
}

func TestScores(t *testing.T) {
	for _, tc := range []struct {
		m    Metrics
		want int
	}{
		{Metrics{TTFBMs: 100, FCPMs: 500, LCPMs: 900, CLS: 0, TotalBytes: 1000}, 100},
		{Metrics{TTFBMs: 1800, FCPMs: 3000, LCPMs: 4000, CLS: 0.25, TotalBytes: 4e6}, 50},
		{Metrics{TTFBMs: 9000, FCPMs: 9000, LCPMs: 9000, CLS: 1, TotalBytes: 9e6}, 0},
	} {
		if got := PerformanceScore(tc.m); got != tc.want {
			t.Errorf("PerformanceScore(%+v) = %d, want %d", tc.m, got, tc.want)
		}
	}
	if got := CategoryScore([]Check{{Passed: 1}, {Passed: 0.5}, {Passed: 0}, {Passed: 1}}); got != 63 {
		t.Errorf("CategoryScore = %d", got)
	}
	if CrawlScore(Counts{BrokenLinks: 100}) != 60 || CrawlScore(Counts{BrokenLinks: 100, BrokenExternal: 100, MixedContent: 100, RedirectChains: 100, SlowPages: 100}) != 0 {
		t.Error("crawl score caps")
	}
	prev := &AuditReport{Pages: []PageAudit{{URL: "u", Scores: map[string]int{CategoryPerformance: 90, CategorySEO: 100}}}}
	cur := &AuditReport{Pages: []PageAudit{{URL: "u", Scores: map[string]int{CategoryPerformance: 70, CategorySEO: 95}}}}
	drops := ScoreDrops(prev, cur, 10)
	if len(drops) != 1 || drops[0].Category != CategoryPerformance || drops[0].From != 90 || drops[0].To != 70 {
		t.Errorf("drops = %+v", drops)
	}
}

func TestServiceRunsAndNotifies(t *testing.T) {
	ts := newTestSite(t)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	sch := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(sch)
	_ = monv1.AddToScheme(sch)
	hook := &monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hook", UID: types.UID("ch-hook")},
		Spec: monv1.AlertChannelSpec{Type: monv1.ChannelWebhook, WebhookURL: "https://hooks.example.com/x"}}
	k8s := fake.NewClientBuilder().WithScheme(sch).WithObjects(hook).Build()
	cfg := ts.config()
	svc := &Service{Store: st, Notifier: &alerting.Router{Reader: k8s, BaseURL: "https://uptime.example.com"}, AllowPrivateTargets: true,
		Crawl: CrawlConfig{SlowAfter: cfg.SlowAfter, Timeout: cfg.Timeout, TLSConfig: cfg.TLSConfig}}
	site, err := st.CreateHealthSite(ctx, store.HealthSite{Namespace: "team", Name: "Shop", URL: ts.site.URL + "/", MaxPages: 50, MaxDepth: 1,
		CheckExternalLinks: true, PerfAuditFormFactor: store.HealthFormMobile, Schedule: store.HealthScheduleDaily,
		NotifyOnIssues: true, ScoreDropThresh: 10, IsActive: true})
	if err != nil {
		t.Fatal(err)
	}
	deliveries := func() []store.Delivery {
		d, err := st.ListDeliveries(ctx, store.DeliveryQuery{ChannelID: "ch-hook", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	run, err := svc.RunNow(ctx, site, TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != store.HealthRunCompleted || run.Score == nil {
		t.Fatalf("run = %+v", run)
	}
	d := deliveries()
	if len(d) != 1 {
		t.Fatalf("deliveries after the first run = %d", len(d))
	}
	var p alertevent.SiteHealthPayload
	if err := json.Unmarshal(d[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Event != alertevent.SiteHealthIssues || p.SiteID != site.ID || p.RunID != run.ID || p.Status != store.HealthRunCompleted ||
		p.BrokenLinks != 2 || p.MixedContent != 3 || len(p.NewErrors) != 5 || p.URL != "https://uptime.example.com/website-health/reports/"+run.ID {
		t.Fatalf("payload = %+v", p)
	}

	// The same problems again: nothing new, no event.
	if _, err := svc.RunNow(ctx, site, TriggerManual); err != nil {
		t.Fatal(err)
	}
	if n := len(deliveries()); n != 1 {
		t.Fatalf("deliveries after an unchanged run = %d", n)
	}

	// A new broken link is new_errors' only item.
	ts.extra = `<a href="/also-missing">x</a>`
	if _, err := svc.RunNow(ctx, site, TriggerScheduled); err != nil {
		t.Fatal(err)
	}
	d = deliveries()
	if len(d) != 2 {
		t.Fatalf("deliveries after a new error = %d", len(d))
	}
	p = alertevent.SiteHealthPayload{}
	_ = json.Unmarshal(d[0].Payload, &p)
	if len(p.NewErrors) != 1 || p.NewErrors[0].Kind != KindBrokenLink || p.NewErrors[0].TargetURL != ts.site.URL+"/also-missing" {
		t.Fatalf("new errors = %+v", p.NewErrors)
	}

	// A site that cannot be crawled fails and notifies.
	site.URL = ts.site.URL + "/missing"
	failed, err := svc.RunNow(ctx, site, TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	if failed.Status != store.HealthRunFailed || !strings.Contains(failed.Error, "HTTP 404") || len(deliveries()) != 3 {
		t.Fatalf("failed run = %+v, deliveries %d", failed, len(deliveries()))
	}

	// Scheduling: the daily site ran just now, so it is not due.
	runs, _ := st.ListHealthRuns(ctx, site.ID, 1)
	if Due(site, &runs[0], time.Now()) || !Due(site, &runs[0], time.Now().Add(25*time.Hour)) || !Due(site, nil, time.Now()) {
		t.Error("daily schedule")
	}
	site.Schedule = store.HealthScheduleManual
	if Due(site, nil, time.Now()) {
		t.Error("a manual site is never due")
	}

	// Trigger runs in the background, one at a time per site.
	site.URL = ts.site.URL + "/"
	bg, err := svc.Trigger(ctx, site, TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Trigger(ctx, site, TriggerManual); !errors.Is(err, ErrRunInProgress) {
		t.Fatalf("second trigger: %v", err)
	}
	svc.Wait()
	rep, err := LoadReport(ctx, st, bg.ID)
	if err != nil || rep.Status != store.HealthRunCompleted || rep.Summary == nil || rep.Summary.Counts.MixedContent != 3 || len(rep.Issues) == 0 {
		t.Fatalf("report = %+v, %v", rep, err)
	}
}
