package websitehealth

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/sitehealth"
)

func TestSiteHealthRoutes(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<a href="/gone">gone</a> <a href="/ok">ok</a>`)
		case "/ok":
			fmt.Fprint(w, "ok")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	f := coretest.New(t)
	svc := &sitehealth.Service{Store: f.Store, AllowPrivateTargets: true, Auditor: &sitehealth.Auditor{ChromePath: "/nonexistent"}}
	New(f.Store, f.Clock, svc).Routes(f.Router)

	fe := coretest.Expect(t, f.Call("free-ws", apikeys.Standard, "GET", "/website-health", nil), 403, "plan without website-health")
	if fe["code"] != core.CodeFeatureNotAvailable {
		t.Fatalf("free plan = %v", fe)
	}
	for _, bad := range []map[string]any{
		{"url": "https://example.com"},
		{"name": "x"},
		{"name": "x", "url": "ftp://example.com"},
		{"name": "x", "url": "https://example.com/" + strings.Repeat("a", 2000)},
		{"name": "x", "url": "https://example.com", "max_pages": 501},
		{"name": "x", "url": "https://example.com", "max_depth": 11},
		{"name": "x", "url": "https://example.com", "perf_audit_urls": []string{"https://a", "https://b", "https://c", "https://d"}},
		{"name": "x", "url": "https://example.com", "perf_audit_form_factor": "tablet"},
		{"name": "x", "url": "https://example.com", "schedule": "hourly"},
		{"name": "x", "url": "https://example.com", "score_drop_thresh": 0},
		{"name": "x", "url": "https://example.com", "colour": "red"},
	} {
		coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/website-health/sites", bad), 400, fmt.Sprint("bad site ", bad))
	}
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "POST", "/website-health/sites", map[string]any{"name": "Shop", "url": site.URL}), 403, "read-only create")
	created := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/website-health/sites",
		map[string]any{"name": "Shop", "url": site.URL + "/", "max_depth": 1, "schedule": "manual"}), 201, "create")
	id := created["id"].(string)
	if created["max_pages"] != float64(100) || created["perf_audit_form_factor"] != "mobile" || created["is_active"] != true || created["score_drop_thresh"] != float64(10) {
		t.Fatalf("created = %v", created)
	}
	upd := coretest.Expect(t, f.Call("team", apikeys.Standard, "PATCH", "/website-health/sites/"+id, map[string]any{"max_pages": 20, "perf_audit_urls": []string{site.URL + "/ok"}}), 200, "update")
	if upd["max_pages"] != float64(20) || upd["name"] != "Shop" || len(upd["perf_audit_urls"].([]any)) != 1 {
		t.Fatalf("updated = %v", upd)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "PATCH", "/website-health/sites/"+id, map[string]any{"max_depth": -1}), 400, "bad update")
	coretest.Expect(t, f.Call("other", apikeys.Standard, "GET", "/website-health/sites/"+id, nil), 404, "another workspace")

	run := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/website-health/sites/"+id+"/run", nil), 202, "run")
	runID := run["id"].(string)
	if run["status"] != "running" {
		t.Fatalf("run = %v", run)
	}
	svc.Wait()
	rep := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/website-health/reports/"+runID, nil), 200, "report")
	if rep["status"] != "completed" || rep["score"] != float64(95) || len(rep["issues"].([]any)) != 1 {
		t.Fatalf("report = %v", rep)
	}
	coretest.Expect(t, f.Call("other", apikeys.ReadOnly, "GET", "/website-health/reports/"+runID, nil), 404, "report of another workspace")
	rec := f.Call("team", apikeys.ReadOnly, "GET", "/website-health/reports/"+runID+"/issues.csv", nil)
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") ||
		rec.Body.String() != "kind,url,source_url,detail\nbroken_link,"+site.URL+"/gone,"+site.URL+"/,HTTP 404\n" {
		t.Fatalf("csv %d %q", rec.Code, rec.Body.String())
	}
	list := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/website-health", nil), 200, "list")
	sites := list["sites"].([]any)
	if len(sites) != 1 || sites[0].(map[string]any)["latest_report"].(map[string]any)["id"] != runID || list["audit_available"] != false {
		t.Fatalf("list = %v", list)
	}
	got := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/website-health/sites/"+id, nil), 200, "details")
	if len(got["reports"].([]any)) != 1 || got["latest_report"].(map[string]any)["summary"].(map[string]any)["counts"].(map[string]any)["broken_links"] != float64(1) {
		t.Fatalf("details = %v", got)
	}

	// 20 runs per hour per workspace (one made above); a run in progress
	// answers 409 and still counts.
	for i := 1; i < 20; i++ {
		if rec := f.Call("team", apikeys.Standard, "POST", "/website-health/sites/"+id+"/run", nil); rec.Code != 202 && rec.Code != 409 {
			t.Fatalf("run %d: %d %s", i+1, rec.Code, rec.Body.String())
		}
	}
	rec = f.Call("team", apikeys.Standard, "POST", "/website-health/sites/"+id+"/run", nil)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("21st run: %d", rec.Code)
	}
	svc.Wait()

	coretest.Expect(t, f.Call("team", apikeys.Standard, "DELETE", "/website-health/sites/"+id, nil), 204, "delete")
	coretest.Expect(t, f.Call("team", apikeys.Standard, "DELETE", "/website-health/sites/"+id, nil), 404, "delete twice")
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/website-health/reports/"+runID, nil), 404, "report of a deleted site")

	// Without a service crawls answer 503.
	g := coretest.New(t)
	New(g.Store, g.Clock, nil).Routes(g.Router)
	c := coretest.Expect(t, g.Call("team", apikeys.Standard, "POST", "/website-health/sites", map[string]any{"name": "S", "url": "https://example.com"}), 201, "create without service")
	coretest.Expect(t, g.Call("team", apikeys.Standard, "POST", "/website-health/sites/"+c["id"].(string)+"/run", nil), 503, "run without service")
}
