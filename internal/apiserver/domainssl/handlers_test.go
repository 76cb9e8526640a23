package domainssl

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/expiry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

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
	f := coretest.New(t, shop, ping)
	x := &expiry.Checker{Store: f.Store, Reader: f.K8s, Notifier: &alerting.Router{Reader: f.K8s}, Now: f.Clock.Now, RDAPBaseURL: rdap.URL}
	New(f.Deps, x).Routes(f.Router)

	got := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/monitors/uid-shop/domain-ssl", nil), 200, "details before any lookup")
	if got["ssl"] != nil || got["domain"].(map[string]any)["expires_at"] != nil {
		t.Fatalf("details = %v", got)
	}
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "POST", "/monitors/uid-shop/domain-ssl/refresh", nil), 403, "refresh with a read-only key")
	got = coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/monitors/uid-shop/domain-ssl/refresh", nil), 200, "refresh")
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
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/monitors/uid-ping/domain-ssl/refresh", nil), 400, "refresh of a ping monitor")
	coretest.Expect(t, f.Call("other", apikeys.Standard, "GET", "/monitors/uid-shop/domain-ssl", nil), 404, "another workspace")

	// 20 refreshes per 15 minutes per workspace (two were made above).
	for i := range 18 {
		if rec := f.Call("team", apikeys.Standard, "POST", "/monitors/uid-ping/domain-ssl/refresh", nil); rec.Code != 400 {
			t.Fatalf("refresh %d: %d", i+3, rec.Code)
		}
	}
	rec := f.Call("team", apikeys.Standard, "POST", "/monitors/uid-shop/domain-ssl/refresh", nil)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("21st refresh: %d %v", rec.Code, rec.Header())
	}

	// Without a checker the endpoints answer 503.
	g := coretest.New(t, shop)
	New(g.Deps, nil).Routes(g.Router)
	coretest.Expect(t, g.Call("team", apikeys.Standard, "GET", "/monitors/uid-shop/domain-ssl", nil), 503, "no checker")
}
