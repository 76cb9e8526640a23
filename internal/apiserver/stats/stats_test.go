package stats

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

const shopID = "6f1e2d3c-0000-4000-8000-000000000001"

// statsFixture holds the monitor "shop" of team, checked from eu-1, with
// three up checks and one down check in the last hour (and one of a region
// it left), a closed pause window and an open incident.
func statsFixture(t *testing.T) *coretest.Fixture {
	t.Helper()
	shop := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "shop", UID: types.UID(shopID)},
		Spec: monv1.MonitorSpec{Name: "Shop", URL: "https://shop.example.com", Regions: []string{"eu-1"}}}
	f := coretest.New(t, shop)
	New(f.Deps, f.Store).Routes(f.Router)
	ctx, now := context.Background(), f.Clock.Now()
	var checks []store.Check
	for i, st := range []store.CheckStatus{store.StatusUp, store.StatusUp, store.StatusDown, store.StatusUp} {
		checks = append(checks, store.Check{ID: fmt.Sprintf("c-%d", i), MonitorID: shopID, Namespace: "team", Region: "eu-1",
			CheckedAt: now.Add(-time.Duration(40-10*i) * time.Minute), Status: st, ResponseTimeMs: int64(100 * (i + 1))})
	}
	checks = append(checks, store.Check{ID: "c-left", MonitorID: shopID, Namespace: "team", Region: "us-1",
		CheckedAt: now.Add(-2 * time.Hour), Status: store.StatusDown, ResponseTimeMs: 5})
	if _, err := f.Store.InsertChecks(ctx, checks); err != nil {
		t.Fatal(err)
	}
	if err := f.Store.PauseMonitor(ctx, shopID, now.Add(-5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := f.Store.ResumeMonitor(ctx, shopID, now.Add(-4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.OpenIncident(ctx, store.Incident{Namespace: "team", MonitorID: shopID, MonitorName: "Shop", StartedAt: now.Add(-20 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSummaryAndChecks(t *testing.T) {
	f := statsFixture(t)
	base := "/stats/" + shopID
	sum := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/stats?days=7", nil), 200, "stats")
	if sum["total_checks"] != float64(5) || sum["failed_checks"] != float64(2) || sum["successful_checks"] != float64(3) || sum["days"] != float64(7) {
		t.Fatalf("stats = %v", sum)
	}
	if p, ok := sum["uptime_percentage"].(float64); !ok || p != 60 {
		t.Fatalf("uptime_percentage = %v, want 60", sum["uptime_percentage"])
	}
	bad := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/stats?days=0", nil), 400, "days 0")
	if bad["code"] != core.CodeValidation || bad["errors"].([]any)[0].(map[string]any)["field"] != "days" {
		t.Fatalf("days 0 = %v", bad)
	}
	coretest.Expect(t, f.Call("other", apikeys.ReadOnly, "GET", base+"/stats", nil), 404, "another workspace")
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/stats/6f1e2d3c-0000-4000-8000-00000000ffff/stats", nil), 404, "unknown monitor")

	checks := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/checks?limit=2", nil), 200, "checks")
	items := checks["items"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["id"] != "c-3" || items[1].(map[string]any)["status"] != "down" {
		t.Fatalf("checks = %v", items)
	}
	if got := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/checks?region=us-1", nil), 200, "checks of a region"); len(got["items"].([]any)) != 1 {
		t.Fatalf("checks of us-1 = %v", got)
	}
	inc := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/incidents", nil), 200, "incidents")
	if items := inc["items"].([]any); len(items) != 1 || items[0].(map[string]any)["monitor_name"] != "Shop" {
		t.Fatalf("incidents = %v", inc)
	}
}

func TestSeriesAndHistory(t *testing.T) {
	f := statsFixture(t)
	base := "/stats/" + shopID
	series := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/response-series?range=1h", nil), 200, "series")
	if series["range"] != "1h" || series["step_seconds"] != float64(60) {
		t.Fatalf("series = %v", series)
	}
	var checks float64
	for _, p := range series["points"].([]any) {
		checks += p.(map[string]any)["checks"].(float64)
	}
	if checks != 4 {
		t.Fatalf("series counts %v checks in the last hour, want 4", checks)
	}
	if bad := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/response-series?range=2h", nil), 400, "range"); bad["code"] != core.CodeValidation {
		t.Fatalf("range 2h = %v", bad)
	}
	chart := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/response-time-chart?days=1", nil), 200, "chart")
	if chart["days"] != float64(1) || chart["step_seconds"] != float64(300) {
		t.Fatalf("chart = %v", chart)
	}

	hist := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/uptime-history?days=3", nil), 200, "uptime history")
	days := hist["days"].([]any)
	today := days[len(days)-1].(map[string]any)
	if today["date"] != "2026-05-01" || today["total_checks"] != float64(5) || today["failed_checks"] != float64(2) {
		t.Fatalf("uptime history = %v", days)
	}
	tz := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/uptime-history?timeZone=Nowhere/Else", nil), 400, "time zone")
	if tz["errors"].([]any)[0].(map[string]any)["field"] != "timeZone" {
		t.Fatalf("bad time zone = %v", tz)
	}
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/uptime-history?tzOffsetMinutes=900", nil), 400, "offset")

	bars := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/24h-bars?days=2", nil), 200, "bars")
	bs := bars["days"].([]any)
	if len(bs) != 2 || bs[1].(map[string]any)["status"] != "down" || bs[0].(map[string]any)["status"] != "no_data" {
		t.Fatalf("bars = %v", bs)
	}
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/24h-bars?endDate=2026-05-09", nil), 400, "future end date")
	past := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/24h-bars?days=1&endDate=2026-04-30", nil), 200, "past end date")
	if ds := past["days"].([]any); len(ds) != 1 || ds[0].(map[string]any)["date"] != "2026-04-30" {
		t.Fatalf("bars ending yesterday = %v", ds)
	}
}

func TestRegionsAndPauses(t *testing.T) {
	f := statsFixture(t)
	base := "/stats/" + shopID
	rs := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/region-statuses", nil), 200, "region statuses")
	regions := rs["regions"].([]any)
	if len(regions) != 1 || regions[0].(map[string]any)["region"] != "eu-1" || regions[0].(map[string]any)["status"] != "up" {
		t.Fatalf("region statuses = %v (a region the monitor left is not shown)", regions)
	}
	pw := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/pause-windows", nil), 200, "pause windows")
	ws := pw["windows"].([]any)
	if len(ws) != 1 || ws[0].(map[string]any)["paused_at"] != "2026-05-01T07:00:00.000000Z" || ws[0].(map[string]any)["resumed_at"] == nil {
		t.Fatalf("pause windows = %v", ws)
	}
	if got := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/pause-windows?hours=3", nil), 200, "recent pauses"); len(got["windows"].([]any)) != 0 {
		t.Fatalf("windows of the last 3 hours = %v", got)
	}
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base+"/pause-windows?hours=0", nil), 400, "hours 0")
}
