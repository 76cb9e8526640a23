package telemetry

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/otelexport"
)

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
	f := coretest.New(t)
	o := &otelexport.Exporter{Store: f.Store, AllowPrivateTargets: true}
	New(f.Store, f.Clock, o).Routes(f.Router)

	body := map[string]any{"endpoint": recv.URL, "protocol": "http/json", "headers": map[string]string{"Authorization": "Bearer s3cret"}, "service_name": "shop"}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", "/automation/otel", body), 403, "standard key")
	coretest.Expect(t, f.Call("free-ws", apikeys.Automation, "PUT", "/automation/otel", body), 403, "plan without the feature")
	coretest.Expect(t, f.Call("team", apikeys.Automation, "GET", "/automation/otel", nil), 404, "nothing configured")
	coretest.Expect(t, f.Call("team", apikeys.Automation, "PUT", "/automation/otel", map[string]any{"endpoint": "ftp://x", "protocol": "smoke"}), 400, "invalid settings")
	got := coretest.Expect(t, f.Call("team", apikeys.Automation, "PUT", "/automation/otel", body), 201, "create")
	if got["headers"].(map[string]any)["Authorization"] != "********" || got["enabled"] != true || got["export_spans"] != true {
		t.Fatalf("created = %v", got)
	}
	// Sending the redacted value back keeps the secret.
	got = coretest.Expect(t, f.Call("team", apikeys.Automation, "PUT", "/automation/otel", map[string]any{
		"headers": map[string]string{"Authorization": "********"}, "export_metrics": false}), 200, "update")
	if got["export_metrics"] != false || got["protocol"] != "http/json" {
		t.Fatalf("updated = %v", got)
	}
	for i := range 10 {
		res := coretest.Expect(t, f.Call("team", apikeys.Automation, "POST", "/automation/otel/test", nil), 200, fmt.Sprint("test span ", i))
		if res["ok"] != true {
			t.Fatalf("test span: %v", res)
		}
	}
	coretest.Expect(t, f.Call("team", apikeys.Automation, "POST", "/automation/otel/test", nil), 429, "eleventh test span")
	mu.Lock()
	if len(auth) != 10 || auth[0] != "Bearer s3cret" {
		t.Fatalf("receiver saw %d requests, authorization %v", len(auth), auth)
	}
	mu.Unlock()
	got = coretest.Expect(t, f.Call("team", apikeys.Automation, "GET", "/automation/otel", nil), 200, "status")
	if d := got["delivery"].(map[string]any); d["spans_exported"] != float64(10) || d["last_success_at"] == nil {
		t.Fatalf("delivery = %v", d)
	}
	rec := f.Call("team", apikeys.Automation, "DELETE", "/automation/otel", nil)
	if rec.Code != 204 {
		t.Fatalf("delete: %d", rec.Code)
	}
	coretest.Expect(t, f.Call("team", apikeys.Automation, "DELETE", "/automation/otel", nil), 404, "delete twice")
}
