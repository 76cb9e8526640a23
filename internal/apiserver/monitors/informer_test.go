package monitors

import (
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// TestEachMonitorSharesTheInformersObjects: EachMonitor visits every
// Monitor of every namespace once, as the informer's own object (no copy).
func TestEachMonitorSharesTheInformersObjects(t *testing.T) {
	cr := teamCache(t, "team")
	now := time.Now()
	held := map[*monv1.Monitor]bool{}
	for i, ns := range []string{"team", "team", "other"} {
		m := benchMonitorIn(ns, i, now)
		if err := cr.add(m); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range cr.indexers[monitorGVK].List() {
		held[o.(*monv1.Monitor)] = true
	}
	seen := map[*monv1.Monitor]int{}
	informerMonitors{indexer: cr.indexers[monitorGVK]}.EachMonitor(func(m *monv1.Monitor) { seen[m]++ })
	if len(seen) != 3 {
		t.Fatalf("visited %d monitors, want 3", len(seen))
	}
	for m, n := range seen {
		if !held[m] || n != 1 {
			t.Errorf("%s/%s visited %d times, held by the informer: %v", m.Namespace, m.Name, n, held[m])
		}
	}
}
