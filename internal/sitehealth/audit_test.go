package sitehealth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

func TestAuditUnavailable(t *testing.T) {
	rep := (&Auditor{ChromePath: "/nonexistent/chromium"}).Audit(context.Background(), []string{"http://example.com/"}, store.HealthFormDesktop)
	if rep.Available || rep.Error != ErrAuditUnavailable.Error() || len(rep.Pages) != 0 {
		t.Fatalf("report = %+v", rep)
	}
}

func TestAuditInChromium(t *testing.T) {
	path := testutil.Chromium(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/good":
			fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Good</title>
<meta name="description" content="A good page"><meta name="viewport" content="width=device-width"></head>
<body><h1>Hello</h1><img src="/px.gif" alt="pixel" width="10" height="10"><label>Name <input name="n"></label></body></html>`)
		case "/bad":
			fmt.Fprint(w, `<!doctype html><html><head><meta name="robots" content="noindex"></head>
<body><p>text</p><img src="/px.gif"><input id="q"><script>console.error("boom")</script></body></html>`)
		case "/px.gif", "/favicon.ico":
			w.Header().Set("Content-Type", "image/gif")
			_, _ = w.Write([]byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	a := &Auditor{ChromePath: path, Guard: netguard.Guard{AllowPrivate: true}, Settle: 300 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep := a.Audit(ctx, []string{srv.URL + "/good", srv.URL + "/bad"}, store.HealthFormMobile)
	if !rep.Available || rep.Error != "" || len(rep.Pages) != 2 {
		t.Fatalf("report = %+v", rep)
	}
	good, bad := rep.Pages[0], rep.Pages[1]
	if good.Error != "" || bad.Error != "" {
		t.Fatalf("page errors: %q, %q", good.Error, bad.Error)
	}
	t.Logf("good: %+v %+v", good.Scores, good.Metrics)
	t.Logf("bad: %+v %+v", bad.Scores, bad.Metrics)
	if good.Scores[CategoryAccessibility] != 100 || good.Scores[CategorySEO] != 100 || good.Metrics.Requests < 2 || good.Metrics.FCPMs <= 0 {
		t.Errorf("good page = %+v", good)
	}
	// Plain http fails the https check only.
	if good.Scores[CategoryBestPractices] != 67 {
		t.Errorf("good best practices = %d: %+v", good.Scores[CategoryBestPractices], good.Checks[CategoryBestPractices])
	}
	// No lang, no title, no alt, an unlabelled field; noindex, no
	// description or viewport; a console error.
	if bad.Scores[CategoryAccessibility] != 0 || bad.Scores[CategorySEO] != 20 || bad.Scores[CategoryBestPractices] != 33 {
		t.Errorf("bad page scores = %+v, checks %+v", bad.Scores, bad.Checks)
	}

	// The guard applies to the browser too.
	blocked := (&Auditor{ChromePath: path, Settle: 100 * time.Millisecond}).Audit(ctx, []string{srv.URL + "/good"}, store.HealthFormDesktop)
	if len(blocked.Pages) != 1 {
		t.Fatalf("blocked report = %+v", blocked)
	}
	if p := blocked.Pages[0]; p.Error == "" && p.Scores[CategorySEO] == 100 {
		t.Errorf("a loopback page was audited through the guard: %+v", p)
	}
}
