package statuspage

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func TestJoin(t *testing.T) {
	page := &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "status"}, Spec: monv1.StatusPageSpec{
		Monitors: []monv1.StatusPageMonitor{{MonitorRef: monv1.LocalObjectReference{Name: "api"}, Section: "Backend", DisplayName: "API"}}}}
	mon := func(ns, name, display, page, section string) monv1.Monitor {
		m := monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{}, Annotations: map[string]string{}}}
		m.Spec.Name = display
		if page != "" {
			m.Labels[monv1.StatusPageLabel] = page
		}
		if section != "" {
			m.Annotations[monv1.StatusPageSectionAnnotation] = section
		}
		return m
	}
	deleting := mon("shop", "old", "a old", "status", "")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	joined := []monv1.Monitor{
		mon("shop", "web-b", "b.example.com/", "status", "Web"),
		mon("shop", "web-a", "a.example.com/", "status", strings.Repeat("s", 120)),
		mon("shop", "api", "api", "status", "Joined"), // listed: keeps its entry
		mon("shop", "else", "else", "other", ""),      // another page's
		mon("other", "web-c", "c", "status", ""),      // another namespace's
		mon("shop", "plain", "plain", "", ""),         // not joining
		deleting,
	}
	got, leftOff := Join(page, joined)
	want := []monv1.StatusPageMonitor{page.Spec.Monitors[0],
		{MonitorRef: monv1.LocalObjectReference{Name: "web-a"}, Section: strings.Repeat("s", 100)},
		{MonitorRef: monv1.LocalObjectReference{Name: "web-b"}, Section: "Web"}}
	if leftOff != 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Join = %v, %d; want %v", got, leftOff, want)
	}
	if len(page.Spec.Monitors) != 1 {
		t.Error("Join wrote the page's list")
	}

	// The bound counts listed and joined monitors together.
	for i := range monv1.MaxStatusPageMonitors - 2 {
		page.Spec.Monitors = append(page.Spec.Monitors, monv1.StatusPageMonitor{MonitorRef: monv1.LocalObjectReference{Name: fmt.Sprintf("m%d", i)}})
	}
	got, leftOff = Join(page, joined)
	if len(got) != monv1.MaxStatusPageMonitors || leftOff != 1 || got[len(got)-1].MonitorRef.Name != "web-a" {
		t.Errorf("at the bound: %d entries, last %v, %d left off", len(got), got[len(got)-1], leftOff)
	}
}

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

// The fake client is enough here: a narrow test of the session cookie.
func TestSessions(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(now)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "shop-access"},
		Data: map[string][]byte{"password": []byte("hunter2\n")}}
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret).Build()
	p := &Public{Reader: c, SessionKey: []byte("k"), Clock: clk, CacheTTL: time.Second}
	newPage := func(uid string) *monv1.StatusPage {
		page := &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "shop", UID: types.UID(uid)}}
		page.Spec.Slug = "shop"
		page.Spec.Access = &monv1.StatusPageAccess{Mode: monv1.AccessPassword,
			PasswordSecretRef: &monv1.SecretKeySelector{Name: "shop-access", Key: "password"}}
		return page
	}
	page := newPage("uid-1")
	req := func(name, value string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/s/shop", nil)
		r.AddCookie(&http.Cookie{Name: name, Value: value})
		return r
	}
	gen, ok, err := p.checkPassword(context.Background(), page, "hunter2")
	if err != nil || !ok {
		t.Fatalf("checkPassword: %v %v", ok, err)
	}
	good := p.issueSession(page, gen, now)
	if !p.validSession(req("uo_status_shop", good), page, now.Add(time.Hour)) {
		t.Fatal("a fresh session is not valid")
	}
	if p.validSession(req("uo_status_shop", good), page, now.Add(SessionTTL+time.Second)) {
		t.Error("an expired session is valid")
	}
	if p.validSession(req("uo_status_shop", good+"x"), page, now) {
		t.Error("a tampered session is valid")
	}
	other := &Public{Reader: c, SessionKey: []byte("other"), Clock: clk}
	if other.validSession(req("uo_status_shop", good), page, now) {
		t.Error("a session signed with another key is valid")
	}
	// A later page with the same slug (deleted and created again) has
	// another UID: the old cookie does not open it.
	if p.validSession(req("uo_status_shop", good), newPage("uid-2"), now) {
		t.Error("a session of an earlier page with the same slug is valid")
	}
	page.Spec.Access.SessionsRevokedAt = &metav1.Time{Time: now.Add(time.Second)}
	if p.validSession(req("uo_status_shop", good), page, now.Add(time.Minute)) {
		t.Error("a revoked session is valid")
	}
	later := p.issueSession(page, gen, now.Add(2*time.Second))
	if !p.validSession(req("uo_status_shop", later), page, now.Add(time.Minute)) {
		t.Error("a session issued after the revocation is not valid")
	}
	// A new password signs everyone out once the cached generation expires.
	secret.Data["password"] = []byte("correct horse")
	if err := c.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(now.Add(2 * time.Minute))
	if p.validSession(req("uo_status_shop", later), page, now.Add(2*time.Minute)) {
		t.Error("a session from before the password change is valid")
	}
	gen2, ok, _ := p.checkPassword(context.Background(), page, "correct horse")
	if !ok || gen2 == gen {
		t.Fatalf("new password: ok=%v, generation unchanged=%v", ok, gen2 == gen)
	}
	if !p.validSession(req("uo_status_shop", p.issueSession(page, gen2, now.Add(2*time.Minute))), page, now.Add(2*time.Minute)) {
		t.Error("a session with the new password is not valid")
	}
	// A password that cannot be read fails closed.
	if err := c.Delete(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(now.Add(3 * time.Minute))
	if p.validSession(req("uo_status_shop", p.issueSession(page, gen2, now.Add(3*time.Minute))), page, now.Add(3*time.Minute)) {
		t.Error("a session is valid while the password Secret is missing")
	}
}

// TestLoginFailureLimits: failed sign-ins are limited per address and per
// page, and the per-page limit holds against guesses from many addresses.
func TestLoginFailureLimits(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(now)
	p := &Public{Clock: clk}
	page := &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{UID: "uid-1"}}
	from := func(addr string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/s/shop/login", nil)
		r.RemoteAddr = addr + ":1234"
		return r
	}
	blocked := func(r *http.Request) bool { return p.loginBlocked(httptest.NewRecorder(), r, page) }
	for range LoginFailuresPerAddress {
		if blocked(from("203.0.113.1")) {
			t.Fatal("blocked before the per-address limit")
		}
		p.loginFailed(from("203.0.113.1"), page)
	}
	w := httptest.NewRecorder()
	if !p.loginBlocked(w, from("203.0.113.1"), page) || w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("not blocked after %d failures: %d", LoginFailuresPerAddress, w.Code)
	}
	if blocked(from("203.0.113.2")) {
		t.Fatal("another address is blocked by the first one's failures")
	}
	// Guesses spread over many addresses stop at the per-page limit.
	for i := LoginFailuresPerAddress; i < LoginFailuresPerPage; i++ {
		p.loginFailed(from(fmt.Sprintf("198.51.100.%d", i%250)), page)
	}
	if !blocked(from("192.0.2.99")) {
		t.Fatalf("a fresh address is not blocked after %d failures on the page", LoginFailuresPerPage)
	}
	if p.loginBlocked(httptest.NewRecorder(), from("192.0.2.99"), &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{UID: "uid-2"}}) {
		t.Fatal("another page is blocked")
	}
	clk.SetTime(now.Add(LoginFailureWindow))
	if blocked(from("192.0.2.99")) || blocked(from("203.0.113.1")) {
		t.Fatal("still blocked after the window")
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

func TestDocTitle(t *testing.T) {
	for title, want := range map[string]string{
		"Shop":          "Shop status",
		"Shop status":   "Shop status",
		"Acme Status ":  "Acme Status ",
		"Status":        "Status",
		"Statuspage.io": "Statuspage.io status",
	} {
		if got := docTitle(title); got != want {
			t.Errorf("docTitle(%q) = %q, want %q", title, got, want)
		}
	}
}
