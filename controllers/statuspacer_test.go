package controllers

import (
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
		if d := p.Turn(key(n), now); d != 0 {
			t.Fatalf("%s waits %s within the burst", n, d)
		}
	}
	if d := p.Turn(key("c"), now); d != 500*time.Millisecond {
		t.Fatalf("c waits %s, want 500ms", d)
	}
	if d := p.Turn(key("d"), now); d != time.Second {
		t.Fatalf("d waits %s, want 1s (after c)", d)
	}
	// c comes back early: its kept turn, not a new one behind d.
	if d := p.Waiting(key("c"), now.Add(100*time.Millisecond)); d != 400*time.Millisecond {
		t.Fatalf("c still waits %s at +100ms, want 400ms", d)
	}
	if d := p.Turn(key("c"), now.Add(100*time.Millisecond)); d != 400*time.Millisecond {
		t.Fatalf("c's turn moved: waits %s at +100ms, want 400ms", d)
	}
	// On time, c writes and its turn is used up.
	if d := p.Turn(key("c"), now.Add(500*time.Millisecond)); d != 0 {
		t.Fatalf("c waits %s at its turn", d)
	}
	if d := p.Waiting(key("c"), now.Add(500*time.Millisecond)); d != 0 {
		t.Fatalf("c still holds a turn after writing (%s)", d)
	}
	p.Forget(key("d"))
	if d := p.Waiting(key("d"), now); d != 0 {
		t.Fatalf("d still waits %s after Forget", d)
	}
	var none *StatusPacer
	if none.Turn(key("a"), now) != 0 || none.Waiting(key("a"), now) != 0 {
		t.Fatal("a nil pacer made a write wait")
	}
}
