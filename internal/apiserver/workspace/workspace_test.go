package workspace

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// TestWhoami: the answer follows the caller (key level, owner, API key or
// Kubernetes user) and the workspace's plan; limits of 0 are unlimited
// (null).
func TestWhoami(t *testing.T) {
	limited := &monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "starter"},
		Spec: monv1.PlanSpec{Limits: monv1.PlanLimits{Monitors: 10, MinIntervalSeconds: 120, StatusPages: 1}}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "small", Labels: map[string]string{monv1.PlanLabel: "starter"}}}
	f := coretest.New(t, limited, ns)
	New(f.Deps).Routes(f.Router)

	key := &apikeys.Key{ID: "k1", Namespace: "small", Name: "ci", Level: apikeys.ReadOnly}
	got := coretest.Expect(t, f.CallAs(&core.Caller{Namespace: "small", Level: apikeys.ReadOnly, Key: key}, "GET", "/automation/whoami", nil), 200, "read-only key")
	want := map[string]any{"workspace_id": "small", "auth_type": "api_key", "api_key_access": "read_only", "workspace_role": "member",
		"read_only": true, "can_manage_alert_channels": false, "plan": "starter"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	lim := got["limits"].(map[string]any)
	if lim["monitors"] != float64(10) || lim["min_interval_seconds"] != float64(120) || lim["status_pages"] != float64(1) || lim["probe_locations"] != nil {
		t.Errorf("limits = %v", lim)
	}

	owner := coretest.Expect(t, f.CallAs(&core.Caller{Namespace: "team", Level: apikeys.Automation, User: "alice", Owner: true}, "GET", "/automation/whoami", nil), 200, "owner")
	if owner["auth_type"] != "kubernetes" || owner["workspace_role"] != "owner" || owner["api_key_access"] != "automation" ||
		owner["can_manage_alert_channels"] != true || owner["read_only"] != false || owner["plan"] != "pro" {
		t.Errorf("owner = %v", owner)
	}
	if l := owner["limits"].(map[string]any); l["monitors"] != nil || l["min_interval_seconds"] != float64(plans.MinInterval) {
		t.Errorf("unlimited plan's limits = %v", l)
	}
}

// TestRegions lists the cluster's probe regions sorted by code, named by
// display name, else city, else code; regions being deleted are left out.
func TestRegions(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 5, 1, 11, 59, 0, 0, time.UTC))
	f := coretest.New(t,
		&monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "pr-b"}, Spec: monv1.ProbeRegionSpec{Code: "us-east", City: "Ashburn", Country: "US"},
			Status: monv1.ProbeRegionStatus{Online: true, OnlineAgents: 2, Monitors: 7, LastContact: &now}},
		&monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "pr-a"}, Spec: monv1.ProbeRegionSpec{Code: "eu-west", DisplayName: "Dublin (AWS)", City: "Dublin"}},
		&monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "ap-south"}},
		&monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "gone", DeletionTimestamp: &now, Finalizers: []string{"test"}}, Spec: monv1.ProbeRegionSpec{Code: "gone"}},
	)
	New(f.Deps).Routes(f.Router)

	var list []map[string]any
	if rec := f.Call("team", apikeys.ReadOnly, "GET", "/regions", nil); rec.Code != 200 || coretest.DecodeList(t, rec, &list) != 3 {
		t.Fatalf("regions: %d %s", rec.Code, rec.Body)
	}
	for i, want := range [][2]string{{"ap-south", "ap-south"}, {"eu-west", "Dublin (AWS)"}, {"us-east", "Ashburn"}} {
		if list[i]["code"] != want[0] || list[i]["name"] != want[1] {
			t.Errorf("region %d = %v, want code %s name %s", i, list[i], want[0], want[1])
		}
	}
	us := list[2]
	if us["online"] != true || us["agents"] != float64(2) || us["monitors"] != float64(7) || us["country"] != "US" || us["last_contact"] != "2026-05-01T11:59:00.000000Z" {
		t.Errorf("us-east = %v", us)
	}
	if list[0]["city"] != nil || list[0]["online"] != false {
		t.Errorf("ap-south = %v", list[0])
	}
}
