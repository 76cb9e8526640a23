package maintenance

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
)

// TestWindows drives the maintenance routes over a fake client (no
// admission): every key reads, only the owner writes, and references are
// shown as ids.
func TestWindows(t *testing.T) {
	shop := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "shop", UID: types.UID("uid-shop")}}
	existing := &monv1.MaintenanceWindow{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "upgrade", UID: types.UID("uid-mw")},
		Spec: monv1.MaintenanceWindowSpec{Title: "Upgrade", Scope: "monitors", Monitors: []monv1.LocalObjectReference{{Name: "shop"}},
			StartsAt: metav1.Date(2026, 5, 2, 1, 0, 0, 0, time.UTC), EndsAt: metav1.Date(2026, 5, 2, 2, 0, 0, 0, time.UTC)}}
	f := coretest.New(t, shop, existing)
	New(f.Deps).Routes(f.Router)

	var list []map[string]any
	if rec := f.Call("team", apikeys.ReadOnly, "GET", "/maintenance", nil); rec.Code != 200 || coretest.DecodeList(t, rec, &list) != 1 {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	if ids := list[0]["monitor_ids"].([]any); len(ids) != 1 || ids[0] != "uid-shop" || list[0]["id"] != "uid-mw" || list[0]["state"] != "scheduled" {
		t.Fatalf("window = %v", list[0])
	}
	if rec := f.Call("other", apikeys.ReadOnly, "GET", "/maintenance", nil); rec.Code != 200 || coretest.DecodeList(t, rec, &list) != 0 {
		t.Fatalf("another workspace sees %d windows", len(list))
	}

	body := map[string]any{"title": "Later", "starts_at": "2026-05-03T01:00:00Z", "ends_at": "2026-05-03T02:00:00Z"}
	refused := coretest.Expect(t, f.Call("team", apikeys.Automation, "POST", "/maintenance", body), 403, "automation key")
	if refused["code"] != core.CodeWorkspaceOwner {
		t.Fatalf("refusal = %v", refused)
	}
	coretest.Expect(t, f.Call("team", apikeys.Automation, "PATCH", "/maintenance/uid-mw", map[string]any{"title": "x"}), 403, "automation key update")
	coretest.Expect(t, f.Call("team", apikeys.Automation, "DELETE", "/maintenance/uid-mw", nil), 403, "automation key delete")
	coretest.Expect(t, f.Call("other", apikeys.ReadOnly, "GET", "/maintenance/uid-mw", nil), 405, "no GET of one window")

	owner := &core.Caller{Namespace: "team", Level: apikeys.Automation, User: "olivia", Owner: true}
	bad := coretest.Expect(t, f.CallAs(owner, "POST", "/maintenance", map[string]any{"title": "No times"}), 400, "missing times")
	if bad["code"] != core.CodeValidation {
		t.Fatalf("validation = %v", bad)
	}
	coretest.Expect(t, f.CallAs(owner, "POST", "/maintenance", body), 201, "owner create")
	got := coretest.Expect(t, f.CallAs(owner, "PATCH", "/maintenance/uid-mw", map[string]any{"title": "Upgrade v2", "impact": "high"}), 200, "owner update")
	if got["title"] != "Upgrade v2" || got["impact"] != "high" || got["starts_at"] != "2026-05-02T01:00:00.000000Z" {
		t.Fatalf("updated = %v", got)
	}
	var stored monv1.MaintenanceWindow
	if err := f.K8s.Get(context.Background(), client.ObjectKeyFromObject(existing), &stored); err != nil || stored.Spec.Title != "Upgrade v2" {
		t.Fatalf("stored title %q, %v", stored.Spec.Title, err)
	}
	coretest.Expect(t, f.CallAs(&core.Caller{Namespace: "other", Level: apikeys.Automation, Owner: true}, "DELETE", "/maintenance/uid-mw", nil), 404, "another workspace's window")
	coretest.Expect(t, f.CallAs(owner, "DELETE", "/maintenance/uid-mw", nil), 204, "owner delete")
	coretest.Expect(t, f.CallAs(owner, "DELETE", "/maintenance/uid-mw", nil), 404, "delete twice")
}
