package groups

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
)

// TestGroups drives the group routes over a fake client (no admission):
// member counts and the summary come from the monitors' groupRef, and
// notification_emails stay owner-only.
func TestGroups(t *testing.T) {
	web := &monv1.MonitorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", UID: types.UID("uid-web")}, Spec: monv1.MonitorGroupSpec{Name: "Web"}}
	member := func(name string, st monv1.MonitorStatusValue) *monv1.Monitor {
		return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: types.UID("uid-" + name)},
			Spec:   monv1.MonitorSpec{Name: name, GroupRef: &monv1.LocalObjectReference{Name: "web"}},
			Status: monv1.MonitorStatus{CurrentStatus: st}}
	}
	lone := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "lone", UID: types.UID("uid-lone")}}
	f := coretest.New(t, web, member("a", monv1.StatusUp), member("b", monv1.StatusDown), lone)
	New(f.Deps).Routes(f.Router)

	var list []map[string]any
	if rec := f.Call("team", apikeys.ReadOnly, "GET", "/monitor-groups", nil); rec.Code != 200 || coretest.DecodeList(t, rec, &list) != 1 {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	if list[0]["id"] != "uid-web" || list[0]["monitor_count"] != float64(2) {
		t.Fatalf("group = %v", list[0])
	}
	sum := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/monitor-groups/uid-web/summary", nil), 200, "summary")
	if sum["total"] != float64(2) || sum["counts"].(map[string]any)["down"] != float64(1) {
		t.Fatalf("summary = %v", sum)
	}
	coretest.Expect(t, f.Call("other", apikeys.ReadOnly, "GET", "/monitor-groups/uid-web/summary", nil), 404, "another workspace")
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "PUT", "/monitor-groups/uid-web", map[string]any{"name": "x"}), 403, "read-only key")
	owner := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", "/monitor-groups/uid-web", map[string]any{"notification_emails": []string{"a@example.com"}}), 403, "emails")
	if owner["code"] != core.CodeWorkspaceOwner {
		t.Fatalf("emails refusal = %v", owner)
	}
	got := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", "/monitor-groups/uid-web", map[string]any{"name": "Website"}), 200, "rename")
	if got["name"] != "Website" {
		t.Fatalf("renamed = %v", got)
	}
	var stored monv1.MonitorGroup
	if err := f.K8s.Get(context.Background(), client.ObjectKeyFromObject(web), &stored); err != nil || stored.Spec.Name != "Website" {
		t.Fatalf("stored name %q, %v", stored.Spec.Name, err)
	}
}
