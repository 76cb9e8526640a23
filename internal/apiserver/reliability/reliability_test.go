package reliability

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

const (
	apiID = "0a000000-0000-4000-8000-000000000001"
	dbID  = "0a000000-0000-4000-8000-000000000002"
)

func monitorOf(ns, name, uid string) *monv1.Monitor {
	return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)},
		Spec: monv1.MonitorSpec{Name: name, URL: "https://" + name + ".example.com"}}
}

func newFixture(t *testing.T) *coretest.Fixture {
	t.Helper()
	f := coretest.New(t, monitorOf("team", "api", apiID), monitorOf("team", "db", dbID), monitorOf("free-ws", "free", "0a000000-0000-4000-8000-000000000003"))
	New(f.Deps, f.Store).Routes(f.Router)
	return f
}

func owner(ns string) *core.Caller {
	return &core.Caller{Namespace: ns, Level: apikeys.Automation, User: "alice", Owner: true}
}

func fieldOf(body map[string]any) string {
	return body["errors"].([]any)[0].(map[string]any)["field"].(string)
}

// TestSLOTargets: one target per monitor (a second POST replaces it, its
// unsent fields back to their defaults), the spec's ranges, the plan
// feature, and update and delete by id.
func TestSLOTargets(t *testing.T) {
	f := newFixture(t)
	created := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/reliability/slo-targets",
		map[string]any{"monitor_id": apiID, "target_percentage": 99.5, "window_minutes": 1440}), 201, "create")
	if created["monitor_id"] != apiID || created["monitor_name"] != "api" || created["target_percentage"] != 99.5 ||
		created["window_minutes"] != float64(1440) || created["sli_type"] != "availability" || created["is_enabled"] != true {
		t.Fatalf("created = %v", created)
	}
	// The fake client assigns no UIDs; give the target the one the API
	// server would have.
	const sloID = "0b000000-0000-4000-8000-000000000001"
	var slos monv1.SLOList
	if err := f.K8s.List(context.Background(), &slos, client.InNamespace("team")); err != nil || len(slos.Items) != 1 {
		t.Fatalf("SLOs: %d, %v", len(slos.Items), err)
	}
	slos.Items[0].UID = sloID
	if err := f.K8s.Update(context.Background(), &slos.Items[0]); err != nil {
		t.Fatal(err)
	}
	replaced := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/reliability/slo-targets",
		map[string]any{"monitor_id": apiID, "target_percentage": 99.9}), 200, "replace")
	if replaced["id"] != sloID || replaced["window_minutes"] == float64(1440) {
		t.Fatalf("replaced = %v (the unsent window goes back to its default)", replaced)
	}
	var list []map[string]any
	if rec := f.Call("team", apikeys.ReadOnly, "GET", "/reliability/slo-targets", nil); rec.Code != 200 || coretest.DecodeList(t, rec, &list) != 1 {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}

	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"target_percentage": 99.0}, "monitor_id"},
		{map[string]any{"monitor_id": apiID, "target_percentage": 80.0}, "target_percentage"},
		{map[string]any{"monitor_id": apiID, "target_percentage": 99.0, "sli_type": "vibes"}, "sli_type"},
		{map[string]any{"monitor_id": apiID, "target_percentage": 99.0, "window_minutes": 30}, "window_minutes"},
		{map[string]any{"monitor_id": apiID, "target_percentage": 99.0, "burn_rate_fast_threshold": 500}, "burn_rate_fast_threshold"},
		{map[string]any{"monitor_id": "0a000000-0000-4000-8000-0000000000ff", "target_percentage": 99.0}, "monitor_id"},
	} {
		body := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/reliability/slo-targets", c.body), 400, c.field)
		if body["code"] != core.CodeValidation || fieldOf(body) != c.field {
			t.Fatalf("%v = %v", c.body, body)
		}
	}
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "POST", "/reliability/slo-targets", map[string]any{"monitor_id": apiID, "target_percentage": 99.0}), 403, "read-only key")
	free := coretest.Expect(t, f.Call("free-ws", apikeys.Standard, "GET", "/reliability/slo-targets", nil), 403, "free plan")
	if free["code"] != core.CodeFeatureNotAvailable {
		t.Fatalf("free plan = %v", free)
	}

	id := sloID
	upd := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", "/reliability/slo-targets/"+id, map[string]any{"is_enabled": false}), 200, "update")
	if upd["is_enabled"] != false || upd["target_percentage"] != 99.9 {
		t.Fatalf("updated = %v", upd)
	}
	if body := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", "/reliability/slo-targets/"+id, map[string]any{"monitor_id": dbID}), 400, "move"); fieldOf(body) != "monitor_id" {
		t.Fatalf("moving a target = %v", body)
	}
	coretest.Expect(t, f.Call("other", apikeys.Standard, "DELETE", "/reliability/slo-targets/"+id, nil), 404, "another workspace")
	if rec := f.Call("team", apikeys.Standard, "DELETE", "/reliability/slo-targets/"+id, nil); rec.Code != 204 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	if err := f.K8s.List(context.Background(), &slos, client.InNamespace("team")); err != nil || len(slos.Items) != 0 {
		t.Fatalf("SLOs left: %d, %v", len(slos.Items), err)
	}
}

// TestDependencies: only the owner draws edges; an edge is the child's
// spec.dependsOn, listed with a stable id and deleted by it.
func TestDependencies(t *testing.T) {
	f := newFixture(t)
	edge := map[string]any{"parent_monitor_id": dbID, "child_monitor_id": apiID}
	if body := coretest.Expect(t, f.Call("team", apikeys.Automation, "POST", "/reliability/dependencies", edge), 403, "API key"); body["code"] != core.CodeWorkspaceOwner {
		t.Fatalf("API key = %v", body)
	}
	self := coretest.Expect(t, f.CallAs(owner("team"), "POST", "/reliability/dependencies", map[string]any{"parent_monitor_id": apiID, "child_monitor_id": apiID}), 400, "self")
	if fieldOf(self) != "child_monitor_id" {
		t.Fatalf("self = %v", self)
	}
	coretest.Expect(t, f.CallAs(owner("team"), "POST", "/reliability/dependencies", map[string]any{"parent_monitor_id": dbID}), 400, "no child")
	dep := coretest.Expect(t, f.CallAs(owner("team"), "POST", "/reliability/dependencies", edge), 201, "create")
	if dep["parent_monitor_name"] != "db" || dep["child_monitor_name"] != "api" || dep["suppression_mode"] != "suppress_child_if_parent_down" {
		t.Fatalf("dependency = %v", dep)
	}
	again := coretest.Expect(t, f.CallAs(owner("team"), "POST", "/reliability/dependencies", edge), 201, "again")
	if again["id"] != dep["id"] {
		t.Fatalf("the same edge has another id: %v", again)
	}
	var child monv1.Monitor
	if err := f.K8s.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "api"}, &child); err != nil || len(child.Spec.DependsOn) != 1 || child.Spec.DependsOn[0].Name != "db" {
		t.Fatalf("child dependsOn = %v, %v", child.Spec.DependsOn, err)
	}
	var list []map[string]any
	if rec := f.Call("team", apikeys.ReadOnly, "GET", "/reliability/dependencies", nil); rec.Code != 200 || coretest.DecodeList(t, rec, &list) != 1 || list[0]["id"] != dep["id"] {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	coretest.Expect(t, f.CallAs(owner("team"), "DELETE", "/reliability/dependencies/0a000000-0000-4000-8000-0000000000ff", nil), 404, "unknown edge")
	if rec := f.CallAs(owner("team"), "DELETE", "/reliability/dependencies/"+dep["id"].(string), nil); rec.Code != 204 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	if rec := f.Call("team", apikeys.ReadOnly, "GET", "/reliability/dependencies", nil); coretest.DecodeList(t, rec, &list) != 0 {
		t.Fatalf("after delete: %v", list)
	}
}

// TestReports: the overview and a monitor's report and flakiness come from
// the store's checks and incidents.
func TestReports(t *testing.T) {
	f := newFixture(t)
	ctx, now := context.Background(), f.Clock.Now()
	var checks []store.Check
	for i := range 48 {
		st := store.StatusUp
		if i%4 == 0 {
			st = store.StatusDown
		}
		checks = append(checks, store.Check{ID: fmt.Sprintf("c-%d", i), MonitorID: apiID, Namespace: "team", Region: "eu-1",
			CheckedAt: now.Add(-time.Duration(i+1) * 30 * time.Minute), Status: st, ResponseTimeMs: 50})
	}
	if _, err := f.Store.InsertChecks(ctx, checks); err != nil {
		t.Fatal(err)
	}
	inc, err := f.Store.OpenIncident(ctx, store.Incident{Namespace: "team", MonitorID: apiID, MonitorName: "api", StartedAt: now.Add(-3 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.ResolveIncident(ctx, inc.ID, now.Add(-2*time.Hour), false, ""); err != nil {
		t.Fatal(err)
	}

	rep := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/reliability/monitor/"+apiID, nil), 200, "monitor report")
	if rep["monitor_id"] != apiID || rep["incidents_30d"] != float64(1) || rep["mttr_seconds"] != float64(3600) {
		t.Fatalf("monitor report = %v", rep)
	}
	if u, ok := rep["uptime_24h"].(float64); !ok || u != 75 {
		t.Fatalf("uptime_24h = %v, want 75", rep["uptime_24h"])
	}
	coretest.Expect(t, f.Call("other", apikeys.ReadOnly, "GET", "/reliability/monitor/"+apiID, nil), 404, "another workspace")

	ov := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/reliability/overview", nil), 200, "overview")
	if ov["monitors"] != float64(2) || ov["incidents_30d"] != float64(1) || len(ov["by_monitor"].([]any)) != 2 {
		t.Fatalf("overview = %v", ov)
	}

	fl := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/monitors/"+apiID+"/flakiness", nil), 200, "flakiness")
	week := fl["7d"].(map[string]any)
	if fl["monitor_id"] != apiID || week["checks"] != float64(48) || week["state_flips"].(float64) == 0 {
		t.Fatalf("flakiness = %v", fl)
	}
	quiet := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/monitors/"+dbID+"/flakiness", nil), 200, "no checks")
	if quiet["7d"].(map[string]any)["checks"] != float64(0) {
		t.Fatalf("flakiness without checks = %v", quiet)
	}
}
