package thirdpartystatus

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/thirdparty"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestThirdPartyRoutes(t *testing.T) {
	sp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprint(w, `{"status":{"indicator":"minor"},"components":[{"id":"api","name":"API","status":"degraded_performance"}],"incidents":[],"scheduled_maintenances":[]}`)
	}))
	t.Cleanup(sp.Close)
	page := &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "public", UID: types.UID("uid-page")}}
	f := coretest.New(t, page)
	svc := &thirdparty.Service{Store: f.Store, Notifier: &alerting.Router{Reader: f.K8s}, AllowPrivateTargets: true,
		Catalog: &thirdparty.Catalog{NoBuiltIn: true, Extra: []thirdparty.Provider{{ID: "acme", Name: "Acme", Kind: thirdparty.KindStatuspage, URL: sp.URL}}}}
	New(f.Deps, f.Store, svc).Routes(f.Router)

	var list []map[string]any
	rec := f.Call("free-ws", apikeys.ReadOnly, "GET", "/third-party-status/providers", nil)
	if rec.Code != 200 || coretest.DecodeList(t, rec, &list) != 1 || list[0]["id"] != "acme" {
		t.Fatalf("providers: %d %s", rec.Code, rec.Body)
	}
	got := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/third-party-status/providers/acme", nil), 200, "provider")
	if comps := got["components"].([]any); len(comps) != 1 || comps[0].(map[string]any)["status"] != "degraded_performance" {
		t.Fatalf("provider details = %v", got)
	}
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/third-party-status/providers/nope", nil), 404, "unknown provider")

	coretest.Expect(t, f.Call("free-ws", apikeys.Standard, "POST", "/third-party-status/subscriptions", map[string]any{"provider_id": "acme"}), 403, "plan without the feature")
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "POST", "/third-party-status/subscriptions", map[string]any{"provider_id": "acme"}), 403, "read-only key")
	bad := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/third-party-status/subscriptions", map[string]any{
		"provider_id": "nope", "min_severity": "huge", "keywords": make([]string, 0, 21)}), 400, "invalid subscription")
	if errs := bad["errors"].([]any); len(errs) != 2 {
		t.Fatalf("validation errors = %v", errs)
	}
	long := make([]string, 21)
	for i := range long {
		long[i] = fmt.Sprint("kw", i)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/third-party-status/subscriptions", map[string]any{"provider_id": "acme", "keywords": long}), 400, "21 keywords")
	sub := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/third-party-status/subscriptions", map[string]any{
		"provider_id": "acme", "component_ids": []string{"api"}, "keywords": []string{"API"}, "notify_maintenance": true}), 201, "follow")
	if sub["notify"] != true || sub["min_severity"] != "minor" || sub["provider_name"] != "Acme" {
		t.Fatalf("subscription = %v", sub)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/third-party-status/subscriptions", map[string]any{"provider_id": "acme"}), 409, "follow twice")
	id := sub["id"].(string)
	patched := coretest.Expect(t, f.Call("team", apikeys.Standard, "PATCH", "/third-party-status/subscriptions/"+id, map[string]any{"min_severity": "critical"}), 200, "patch")
	if patched["min_severity"] != "critical" || len(patched["keywords"].([]any)) != 1 {
		t.Fatalf("patched = %v", patched)
	}
	coretest.Expect(t, f.Call("other", apikeys.Standard, "PATCH", "/third-party-status/subscriptions/"+id, map[string]any{}), 404, "another workspace")
	rec = f.Call("team", apikeys.ReadOnly, "GET", "/third-party-status/subscriptions", nil)
	if coretest.DecodeList(t, rec, &list) != 1 {
		t.Fatalf("subscriptions: %s", rec.Body)
	}

	services := map[string]any{"services": []map[string]any{{"provider_id": "acme", "component_ids": []string{"api"}, "display_name": "Payments API"}}}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", "/third-party-status/status-pages/uid-page", map[string]any{"services": []map[string]any{{"provider_id": "nope"}}}), 400, "unknown provider on a page")
	got = coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", "/third-party-status/status-pages/uid-page", services), 200, "set page services")
	got = coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/third-party-status/status-pages/uid-page", nil), 200, "page services")
	if s := got["services"].([]any); len(s) != 1 || s[0].(map[string]any)["display_name"] != "Payments API" || s[0].(map[string]any)["provider_name"] != "Acme" {
		t.Fatalf("page services = %v", got)
	}
	coretest.Expect(t, f.Call("other", apikeys.ReadOnly, "GET", "/third-party-status/status-pages/uid-page", nil), 404, "page of another workspace")

	rec = f.Call("team", apikeys.Standard, "DELETE", "/third-party-status/subscriptions/"+id, nil)
	if rec.Code != 204 {
		t.Fatalf("unfollow: %d", rec.Code)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "DELETE", "/third-party-status/subscriptions/"+id, nil), 404, "unfollow twice")
}
