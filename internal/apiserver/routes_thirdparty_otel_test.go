package apiserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/otelexport"
	"github.com/uptime-operator/uptime-operator/internal/thirdparty"
)

func TestThirdPartyRoutes(t *testing.T) {
	sp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprint(w, `{"status":{"indicator":"minor"},"components":[{"id":"api","name":"API","status":"degraded_performance"}],"incidents":[],"scheduled_maintenances":[]}`)
	}))
	t.Cleanup(sp.Close)
	page := &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "public", UID: types.UID("uid-page")}}
	f := newRouteFixture(t, page)
	svc := &thirdparty.Service{Store: f.st, Notifier: &alerting.Router{Reader: f.k8s}, AllowPrivateTargets: true,
		Catalog: &thirdparty.Catalog{NoBuiltIn: true, Extra: []thirdparty.Provider{{ID: "acme", Name: "Acme", Kind: thirdparty.KindStatuspage, URL: sp.URL}}}}
	f.srv.registerThirdPartyRoutes(svc)

	var list []map[string]any
	rec := f.call("free-ws", apikeys.ReadOnly, "GET", "/third-party-status/providers", nil)
	if rec.Code != 200 || decodeInto(t, rec, &list) != 1 || list[0]["id"] != "acme" {
		t.Fatalf("providers: %d %s", rec.Code, rec.Body)
	}
	got := expect(t, f.call("team", apikeys.ReadOnly, "GET", "/third-party-status/providers/acme", nil), 200, "provider")
	if comps := got["components"].([]any); len(comps) != 1 || comps[0].(map[string]any)["status"] != "degraded_performance" {
		t.Fatalf("provider details = %v", got)
	}
	expect(t, f.call("team", apikeys.ReadOnly, "GET", "/third-party-status/providers/nope", nil), 404, "unknown provider")

	expect(t, f.call("free-ws", apikeys.Standard, "POST", "/third-party-status/subscriptions", map[string]any{"provider_id": "acme"}), 403, "plan without the feature")
	expect(t, f.call("team", apikeys.ReadOnly, "POST", "/third-party-status/subscriptions", map[string]any{"provider_id": "acme"}), 403, "read-only key")
	bad := expect(t, f.call("team", apikeys.Standard, "POST", "/third-party-status/subscriptions", map[string]any{
		"provider_id": "nope", "min_severity": "huge", "keywords": make([]string, 0, 21)}), 400, "invalid subscription")
	if errs := bad["errors"].([]any); len(errs) != 2 {
		t.Fatalf("validation errors = %v", errs)
	}
	long := make([]string, 21)
	for i := range long {
		long[i] = fmt.Sprint("kw", i)
	}
	expect(t, f.call("team", apikeys.Standard, "POST", "/third-party-status/subscriptions", map[string]any{"provider_id": "acme", "keywords": long}), 400, "21 keywords")
	sub := expect(t, f.call("team", apikeys.Standard, "POST", "/third-party-status/subscriptions", map[string]any{
		"provider_id": "acme", "component_ids": []string{"api"}, "keywords": []string{"API"}, "notify_maintenance": true}), 201, "follow")
	if sub["notify"] != true || sub["min_severity"] != "minor" || sub["provider_name"] != "Acme" {
		t.Fatalf("subscription = %v", sub)
	}
	expect(t, f.call("team", apikeys.Standard, "POST", "/third-party-status/subscriptions", map[string]any{"provider_id": "acme"}), 409, "follow twice")
	id := sub["id"].(string)
	patched := expect(t, f.call("team", apikeys.Standard, "PATCH", "/third-party-status/subscriptions/"+id, map[string]any{"min_severity": "critical"}), 200, "patch")
	if patched["min_severity"] != "critical" || len(patched["keywords"].([]any)) != 1 {
		t.Fatalf("patched = %v", patched)
	}
	expect(t, f.call("other", apikeys.Standard, "PATCH", "/third-party-status/subscriptions/"+id, map[string]any{}), 404, "another workspace")
	rec = f.call("team", apikeys.ReadOnly, "GET", "/third-party-status/subscriptions", nil)
	if decodeInto(t, rec, &list) != 1 {
		t.Fatalf("subscriptions: %s", rec.Body)
	}

	services := map[string]any{"services": []map[string]any{{"provider_id": "acme", "component_ids": []string{"api"}, "display_name": "Payments API"}}}
	expect(t, f.call("team", apikeys.Standard, "PUT", "/third-party-status/status-pages/uid-page", map[string]any{"services": []map[string]any{{"provider_id": "nope"}}}), 400, "unknown provider on a page")
	got = expect(t, f.call("team", apikeys.Standard, "PUT", "/third-party-status/status-pages/uid-page", services), 200, "set page services")
	got = expect(t, f.call("team", apikeys.ReadOnly, "GET", "/third-party-status/status-pages/uid-page", nil), 200, "page services")
	if s := got["services"].([]any); len(s) != 1 || s[0].(map[string]any)["display_name"] != "Payments API" || s[0].(map[string]any)["provider_name"] != "Acme" {
		t.Fatalf("page services = %v", got)
	}
	expect(t, f.call("other", apikeys.ReadOnly, "GET", "/third-party-status/status-pages/uid-page", nil), 404, "page of another workspace")

	rec = f.call("team", apikeys.Standard, "DELETE", "/third-party-status/subscriptions/"+id, nil)
	if rec.Code != 204 {
		t.Fatalf("unfollow: %d", rec.Code)
	}
	expect(t, f.call("team", apikeys.Standard, "DELETE", "/third-party-status/subscriptions/"+id, nil), 404, "unfollow twice")
}

func decodeInto(t *testing.T, rec *httptest.ResponseRecorder, v *[]map[string]any) int {
	t.Helper()
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	return len(*v)
}

func TestOTelRoutes(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	t.Cleanup(recv.Close)
	f := newRouteFixture(t)
	o := &otelexport.Exporter{Store: f.st, AllowPrivateTargets: true}
	f.srv.registerOTelRoutes(o)

	body := map[string]any{"endpoint": recv.URL, "protocol": "http/json", "headers": map[string]string{"Authorization": "Bearer s3cret"}, "service_name": "shop"}
	expect(t, f.call("team", apikeys.Standard, "PUT", "/automation/otel", body), 403, "standard key")
	expect(t, f.call("free-ws", apikeys.Automation, "PUT", "/automation/otel", body), 403, "plan without the feature")
	expect(t, f.call("team", apikeys.Automation, "GET", "/automation/otel", nil), 404, "nothing configured")
	expect(t, f.call("team", apikeys.Automation, "PUT", "/automation/otel", map[string]any{"endpoint": "ftp://x", "protocol": "smoke"}), 400, "invalid settings")
	got := expect(t, f.call("team", apikeys.Automation, "PUT", "/automation/otel", body), 201, "create")
	if got["headers"].(map[string]any)["Authorization"] != "********" || got["enabled"] != true || got["export_spans"] != true {
		t.Fatalf("created = %v", got)
	}
	// Sending the redacted value back keeps the secret.
	got = expect(t, f.call("team", apikeys.Automation, "PUT", "/automation/otel", map[string]any{
		"headers": map[string]string{"Authorization": "********"}, "export_metrics": false}), 200, "update")
	if got["export_metrics"] != false || got["protocol"] != "http/json" {
		t.Fatalf("updated = %v", got)
	}
	for i := range 10 {
		res := expect(t, f.call("team", apikeys.Automation, "POST", "/automation/otel/test", nil), 200, fmt.Sprint("test span ", i))
		if res["ok"] != true {
			t.Fatalf("test span: %v", res)
		}
	}
	expect(t, f.call("team", apikeys.Automation, "POST", "/automation/otel/test", nil), 429, "eleventh test span")
	mu.Lock()
	if len(auth) != 10 || auth[0] != "Bearer s3cret" {
		t.Fatalf("receiver saw %d requests, authorization %v", len(auth), auth)
	}
	mu.Unlock()
	got = expect(t, f.call("team", apikeys.Automation, "GET", "/automation/otel", nil), 200, "status")
	if d := got["delivery"].(map[string]any); d["spans_exported"] != float64(10) || d["last_success_at"] == nil {
		t.Fatalf("delivery = %v", d)
	}
	rec := f.call("team", apikeys.Automation, "DELETE", "/automation/otel", nil)
	if rec.Code != 204 {
		t.Fatalf("delete: %d", rec.Code)
	}
	expect(t, f.call("team", apikeys.Automation, "DELETE", "/automation/otel", nil), 404, "delete twice")
}
