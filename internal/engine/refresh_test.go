package engine

import (
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/event"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// TestStatusRefreshBudget: an unchanged status is refreshed every
// StatusInterval while the monitors fit the refresh rate, every
// monitors ÷ rate beyond it; a changed status is refreshed at once; a
// request dropped because the controller is behind is asked again.
func TestStatusRefreshBudget(t *testing.T) {
	e := New(Options{StatusInterval: 30 * time.Second, StatusRefreshRate: 10})
	m := &monv1.Monitor{}
	m.Name, m.Namespace, m.UID = "m", "ns", "uid-m"
	st := e.state(string(m.UID))
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	up := store.MonitorView{Checks: []store.Check{{Region: "eu", Status: store.StatusUp, CheckedAt: t0}}}
	down := store.MonitorView{Checks: []store.Check{{Region: "eu", Status: store.StatusDown, CheckedAt: t0}}}
	pushes := func() int {
		n := 0
		for {
			select {
			case <-e.updates:
				n++
			default:
				return n
			}
		}
	}
	step := func(view store.MonitorView, at time.Duration) int {
		e.maybePush(m, st, view, t0.Add(at))
		return pushes()
	}

	// One monitor: 30 s between unchanged refreshes.
	if got := step(up, 0); got != 1 {
		t.Fatalf("first state: %d pushes, want 1", got)
	}
	if got := step(up, 29*time.Second); got != 0 {
		t.Fatalf("unchanged after 29 s: %d pushes, want 0", got)
	}
	if got := step(up, 30*time.Second); got != 1 {
		t.Fatalf("unchanged after 30 s: %d pushes, want 1", got)
	}
	// 1,000 monitors at 10 refreshes a second: 100 s between them.
	for i := range 999 {
		e.state(fmt.Sprintf("other-%d", i))
	}
	if got := step(up, 90*time.Second); got != 0 {
		t.Fatalf("1,000 monitors, unchanged after 60 s: %d pushes, want 0", got)
	}
	if got := step(up, 130*time.Second); got != 1 {
		t.Fatalf("1,000 monitors, unchanged after 100 s: %d pushes, want 1", got)
	}
	// A change is refreshed at once, whatever the budget.
	if got := step(down, 131*time.Second); got != 1 {
		t.Fatalf("changed: %d pushes, want 1", got)
	}
	// The controller is behind: the request is dropped, and the change is
	// asked for again at the next judgement.
	for range cap(e.updates) {
		e.updates <- event.TypedGenericEvent[*monv1.Monitor]{Object: &monv1.Monitor{}}
	}
	e.maybePush(m, st, up, t0.Add(132*time.Second))
	if got := pushes(); got != cap(e.updates) {
		t.Fatalf("full channel: drained %d, want %d", got, cap(e.updates))
	}
	if got := step(up, 133*time.Second); got != 1 {
		t.Fatalf("after a dropped request: %d pushes, want 1", got)
	}
}
