package statuspage

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func TestOverallStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		states []string
		want   Overall
	}{
		{"no monitors", nil, Operational},
		{"all up", []string{"up", "up"}, Operational},
		{"pending, unknown and blocked are not problems", []string{"up", "pending", "unknown", "blocked"}, Operational},
		{"one degraded", []string{"up", "degraded"}, Degraded},
		{"maintenance", []string{"up", "maintenance"}, Maintenance},
		{"degraded beats maintenance", []string{"maintenance", "degraded"}, Degraded},
		{"one of three down", []string{"up", "up", "down"}, PartialOutage},
		{"half down is partial", []string{"up", "down"}, PartialOutage},
		{"more than half down", []string{"up", "down", "down"}, MajorOutage},
		{"single monitor down", []string{"down"}, MajorOutage},
		{"outage beats maintenance", []string{"maintenance", "up", "up", "down"}, PartialOutage},
		{"paused and missing are left out", []string{"paused", "missing", "down", "up", "up"}, PartialOutage},
		{"only paused", []string{"paused"}, Operational},
		{"down among paused", []string{"paused", "paused", "down"}, MajorOutage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OverallStatus(tc.states); got != tc.want {
				t.Errorf("OverallStatus(%v) = %s, want %s", tc.states, got, tc.want)
			}
		})
	}
}

func TestPublicState(t *testing.T) {
	for in, want := range map[monv1.MonitorStatusValue]string{
		monv1.StatusUp: "up", monv1.StatusDown: "down", monv1.StatusDegraded: "degraded",
		monv1.StatusMaintenance: "maintenance", monv1.StatusPaused: "paused",
		monv1.StatusBlocked: "unknown", monv1.StatusPending: "unknown", "": "unknown",
	} {
		if got := PublicState(in); got != want {
			t.Errorf("PublicState(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLimiter(t *testing.T) {
	var l limiter
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range RateLimit {
		d := l.take("a", now)
		if !d.allowed {
			t.Fatalf("request %d refused", i+1)
		}
		if d.remaining != RateLimit-1-i {
			t.Fatalf("request %d: remaining %d", i+1, d.remaining)
		}
	}
	d := l.take("a", now)
	if d.allowed || d.retryAfter != time.Second || d.reset != time.Minute {
		t.Fatalf("61st request: %+v", d)
	}
	if !l.take("b", now).allowed {
		t.Fatal("another client was limited")
	}
	if !l.take("a", now.Add(time.Second)).allowed {
		t.Fatal("a token did not refill after a second")
	}
	if l.take("a", now.Add(time.Second)).allowed {
		t.Fatal("more than one token refilled")
	}
}

func TestClientKeyGroupsIPv6(t *testing.T) {
	p := &Public{}
	r1 := httptest.NewRequest(http.MethodGet, "/", nil)
	r1.RemoteAddr = "[2001:db8:1:2::1]:443"
	r2 := httptest.NewRequest(http.MethodGet, "/", nil)
	r2.RemoteAddr = "[2001:db8:1:2:ffff::9]:443"
	if p.clientKey(r1) != p.clientKey(r2) {
		t.Errorf("addresses of one /64 have different keys: %s, %s", p.clientKey(r1), p.clientKey(r2))
	}
	r3 := httptest.NewRequest(http.MethodGet, "/", nil)
	r3.RemoteAddr = "[::ffff:192.0.2.7]:1"
	if got := p.clientKey(r3); got != "192.0.2.7" {
		t.Errorf("mapped IPv4 key = %s", got)
	}
}

func TestSessions(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := &Public{SessionKey: []byte("k")}
	page := &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}
	page.Spec.Slug = "shop"
	page.Spec.Access = &monv1.StatusPageAccess{Mode: monv1.AccessPassword}
	req := func(name, value string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/s/shop", nil)
		r.AddCookie(&http.Cookie{Name: name, Value: value})
		return r
	}
	good := p.issueSession("shop", now)
	if !p.validSession(req("uo_status_shop", good), page, now.Add(time.Hour)) {
		t.Fatal("a fresh session is not valid")
	}
	if p.validSession(req("uo_status_shop", good), page, now.Add(SessionTTL+time.Second)) {
		t.Error("an expired session is valid")
	}
	if p.validSession(req("uo_status_shop", good+"x"), page, now) {
		t.Error("a tampered session is valid")
	}
	other := &Public{SessionKey: []byte("other")}
	if other.validSession(req("uo_status_shop", good), page, now) {
		t.Error("a session signed with another key is valid")
	}
	if p.validSession(req("uo_status_shop", p.issueSession("blog", now)), page, now) {
		t.Error("another page's session is valid")
	}
	page.Spec.Access.SessionsRevokedAt = &metav1.Time{Time: now.Add(time.Second)}
	if p.validSession(req("uo_status_shop", good), page, now.Add(time.Minute)) {
		t.Error("a revoked session is valid")
	}
	if !p.validSession(req("uo_status_shop", p.issueSession("shop", now.Add(2*time.Second))), page, now.Add(time.Minute)) {
		t.Error("a session issued after the revocation is not valid")
	}
}

func TestPickLanguage(t *testing.T) {
	page := &monv1.StatusPage{}
	page.Spec.Languages = &monv1.StatusPageLanguages{Default: "en", Enabled: []string{"de"},
		Translations: []monv1.StatusPageTranslation{{Language: "fr", Title: "Statut"}}}
	for _, tc := range []struct{ query, accept, want string }{
		{"", "", "en"},
		{"lang=de", "", "de"},
		{"lang=FR", "", "fr"},
		{"lang=xx", "", "en"},
		{"", "fr-CH, fr;q=0.9, en;q=0.8", "fr"},
		{"", "de-AT", "de"},
		{"", "ja", "en"},
		{"lang=en", "de", "en"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/s/x?"+tc.query, nil)
		if tc.accept != "" {
			r.Header.Set("Accept-Language", tc.accept)
		}
		if got := pickLanguage(r, page); got != tc.want {
			t.Errorf("pickLanguage(%q, %q) = %q, want %q", tc.query, tc.accept, got, tc.want)
		}
	}
}

func TestBadgeIsWellFormed(t *testing.T) {
	u := 99.987
	for _, st := range []Overall{Operational, Degraded, PartialOutage, MajorOutage, Maintenance} {
		svg := Badge("status <&>", st, &u)
		dec := xml.NewDecoder(strings.NewReader(string(svg)))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: badge is not XML: %v\n%s", st, err, svg)
			}
		}
		for _, want := range []string{`role="img"`, "<title>", `aria-label="status &lt;&amp;&gt;: ` + shortLabels[st] + ` · 99.99%"`} {
			if !strings.Contains(string(svg), want) {
				t.Errorf("%s: badge lacks %s:\n%s", st, want, svg)
			}
		}
	}
}

func TestUptimeColor(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		v    *float64
		want string
	}{{nil, "#8c959f"}, {f(100), "#1a7f37"}, {f(99.5), "#1a7f37"}, {f(99), "#9a6700"}, {f(96), "#bc4c00"}, {f(50), "#cf222e"}} {
		if got := uptimeColor(tc.v); got != tc.want {
			t.Errorf("uptimeColor(%v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}
