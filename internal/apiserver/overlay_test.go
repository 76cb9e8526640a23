package apiserver

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func overlayMonitor(ns, name, rv string) *monv1.Monitor {
	return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name), ResourceVersion: rv}}
}

func names(ms []*monv1.Monitor) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name+"@"+m.ResourceVersion)
	}
	return out
}

func TestLaySharedGivesReadYourWrites(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	var o writeOverlay
	cached := []*monv1.Monitor{overlayMonitor("team", "a", "10"), overlayMonitor("team", "b", "11"), overlayMonitor("team", "gone", "12")}
	if got := layShared(&o, cached, "team", now); &got[0] != &cached[0] {
		t.Fatal("without writes the cached slice is returned as it is")
	}

	o.record(overlayMonitor("team", "a", "20"), false, now)   // updated, cache behind
	o.record(overlayMonitor("team", "new", "21"), false, now) // created, cache has not seen it
	o.record(overlayMonitor("team", "gone", "12"), true, now) // deleted
	o.record(overlayMonitor("other", "x", "22"), false, now)  // another namespace
	o.record(&monv1.MonitorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "g", UID: "g", ResourceVersion: "23"}}, false, now)

	got := names(layShared(&o, cached, "team", now.Add(time.Second)))
	want := []string{"a@20", "b@11", "new@21"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("laid list = %v, want %v", got, want)
	}
	if cached[0].ResourceVersion != "10" {
		t.Fatal("the cached objects must not be modified")
	}

	// Once the cache caught up the cache wins; after the TTL writes are forgotten.
	caught := []*monv1.Monitor{overlayMonitor("team", "a", "25"), overlayMonitor("team", "b", "11")}
	if got := names(layShared(&o, caught, "team", now.Add(2*time.Second))); len(got) != 3 || got[0] != "a@25" {
		t.Fatalf("after the cache caught up: %v", got)
	}
	if got := names(layShared(&o, caught, "team", now.Add(overlayTTL+time.Second))); len(got) != 2 {
		t.Fatalf("after the TTL: %v", got)
	}
}
