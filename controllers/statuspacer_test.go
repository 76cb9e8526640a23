package controllers

import (
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestStatusPacer: writes beyond the rate get turns one interval apart,
// first come first served; a turn is kept for its object (a reconcile that
// comes early waits, one that comes on time writes without asking again),
// and a forgotten turn is gone.
func TestStatusPacer(t *testing.T) {
	p := NewStatusPacer(2) // a burst of 2, then one write every 500 ms
	now := time.Unix(1_000_000, 0)
	key := func(n string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: n} }
	for _, n := range []string{"a", "b"} {
		if d := p.Turn(key(n), now, LaneChange); d != 0 {
			t.Fatalf("%s waits %s within the burst", n, d)
		}
	}
	if d := p.Turn(key("c"), now, LaneChange); d != 500*time.Millisecond {
		t.Fatalf("c waits %s, want 500ms", d)
	}
	if d := p.Turn(key("d"), now, LaneChange); d != time.Second {
		t.Fatalf("d waits %s, want 1s (after c)", d)
	}
	// c comes back early: its kept turn, not a new one behind d.
	if d, _ := p.Waiting(key("c"), now.Add(100*time.Millisecond)); d != 400*time.Millisecond {
		t.Fatalf("c still waits %s at +100ms, want 400ms", d)
	}
	if d := p.Turn(key("c"), now.Add(100*time.Millisecond), LaneChange); d != 400*time.Millisecond {
		t.Fatalf("c's turn moved: waits %s at +100ms, want 400ms", d)
	}
	// On time, c writes and its turn is used up.
	if d := p.Turn(key("c"), now.Add(500*time.Millisecond), LaneChange); d != 0 {
		t.Fatalf("c waits %s at its turn", d)
	}
	if d, _ := p.Waiting(key("c"), now.Add(500*time.Millisecond)); d != 0 {
		t.Fatalf("c still holds a turn after writing (%s)", d)
	}
	p.Forget(key("d"))
	if d, _ := p.Waiting(key("d"), now); d != 0 {
		t.Fatalf("d still waits %s after Forget", d)
	}
	var none *StatusPacer
	if none.Turn(key("a"), now, LaneChange) != 0 || func() bool { d, _ := none.Waiting(key("a"), now); return d != 0 }() {
		t.Fatal("a nil pacer made a write wait")
	}
}

// TestStatusPacerLanes: a refresh asked while changes wait keeps no turn
// and is told to come back after the last of them; a change asked after a
// refresh was queued goes ahead of nothing it should not (first come first
// served among changes), and a kept refresh turn becomes a change turn
// when its object then has a change to write.
func TestStatusPacerLanes(t *testing.T) {
	p := NewStatusPacer(2) // a burst of 2, then one write every 500 ms
	now := time.Unix(1_000_000, 0)
	key := func(n string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: n} }
	for _, n := range []string{"a", "b"} {
		if d := p.Turn(key(n), now, LaneChange); d != 0 {
			t.Fatalf("%s waits %s within the burst", n, d)
		}
	}
	if d := p.Turn(key("c"), now, LaneChange); d != 500*time.Millisecond {
		t.Fatalf("change c waits %s, want 500ms", d)
	}
	// A refresh while c waits: after c, and nothing kept for it.
	if d := p.Turn(key("r"), now, LaneRefresh); d != time.Second {
		t.Fatalf("refresh r waits %s, want 1s (after c, plus one interval)", d)
	}
	if d, _ := p.Waiting(key("r"), now); d != 0 {
		t.Fatalf("refresh r keeps a turn (%s) while changes wait", d)
	}
	// A change asked later still comes at the next interval: r took none.
	if d := p.Turn(key("d"), now, LaneChange); d != time.Second {
		t.Fatalf("change d waits %s, want 1s (r did not take its place)", d)
	}
	// Once the changes are served, a refresh gets a kept turn.
	at := now.Add(time.Second)
	if d := p.Turn(key("r"), at, LaneRefresh); d != 500*time.Millisecond {
		t.Fatalf("refresh r waits %s after the changes, want 500ms", d)
	}
	if d, lane := p.Waiting(key("r"), at); d != 500*time.Millisecond || lane != LaneRefresh {
		t.Fatalf("refresh r's kept turn: %s in lane %d", d, lane)
	}
	// r now has a change: its turn moves to the change lane.
	if d := p.Turn(key("r"), at, LaneChange); d <= 0 {
		t.Fatalf("r writes at once (%s) although the rate is used up", d)
	}
	if _, lane := p.Waiting(key("r"), at); lane != LaneChange {
		t.Fatalf("r's turn is in lane %d after a change, want the change lane", lane)
	}
}

// TestStatusPacerClockSteps: times that arrive slightly out of order (the
// reconcile workers read the clock before taking the pacer's lock) give no
// more turns than the rate.
func TestStatusPacerClockSteps(t *testing.T) {
	p := NewStatusPacer(100)
	t0 := time.Unix(1_000_000, 0)
	granted := 0
	for i := range 3000 {
		now := t0.Add(time.Duration(i) * time.Millisecond / 3)
		if i%2 == 1 {
			now = now.Add(-20 * time.Millisecond)
		}
		key := types.NamespacedName{Namespace: "ns", Name: strconv.Itoa(i)}
		if p.Turn(key, now, LaneChange) == 0 {
			granted++ // now
		} else if d, _ := p.Waiting(key, t0); d <= time.Second {
			granted++ // kept, within the second
		}
	}
	// One second of asks: the burst (100) plus one second's rate (100),
	// and the asks' own spread.
	if granted > 202 {
		t.Fatalf("%d turns within a second of 1 s of asks, want at most 202", granted)
	}
}
