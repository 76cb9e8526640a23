package backoff

import (
	"testing"
	"time"
)

func TestDelayWithoutJitter(t *testing.T) {
	p := Policy{Base: 5 * time.Second, Max: 80 * time.Second}
	want := []time.Duration{5, 10, 20, 40, 80, 80, 80}
	for n, w := range want {
		if got := p.Delay(n); got != w*time.Second {
			t.Errorf("Delay(%d) = %s, want %s", n, got, w*time.Second)
		}
	}
	if got := (Policy{Base: time.Second}).Delay(200); got <= 0 {
		t.Errorf("an uncapped long backoff overflowed to %s", got)
	}
	if got := (Policy{Base: time.Second}).Delay(3); got != 8*time.Second {
		t.Errorf("uncapped Delay(3) = %s, want 8s", got)
	}
}

func TestDelayJitterStaysInItsRange(t *testing.T) {
	for _, r := range []float64{0, 0.5, 0.999999} {
		p := Policy{Base: time.Second, Max: 30 * time.Second, Jitter: 0.5, rand: func() float64 { return r }}
		for n := range 8 {
			full := Policy{Base: time.Second, Max: 30 * time.Second}.Delay(n)
			got := p.Delay(n)
			if got > full || got < full/2 {
				t.Errorf("r=%v Delay(%d) = %s, want within [%s, %s]", r, n, got, full/2, full)
			}
		}
	}
	if got := (Policy{Base: time.Second, Jitter: 0.5, rand: func() float64 { return 0.5 }}).Delay(1); got != 1500*time.Millisecond {
		t.Errorf("Delay(1) with r=0.5 = %s, want 1.5s", got)
	}
}

// TestDelayJitterSpreads checks that the default random source spreads the
// waits: agents retrying together must not stay in step.
func TestDelayJitterSpreads(t *testing.T) {
	p := Policy{Base: time.Second, Max: 30 * time.Second, Jitter: 0.5}
	seen := map[time.Duration]bool{}
	for range 50 {
		d := p.Delay(2)
		if d < 2*time.Second || d > 4*time.Second {
			t.Fatalf("Delay(2) = %s, want within [2s, 4s]", d)
		}
		seen[d] = true
	}
	if len(seen) < 10 {
		t.Errorf("50 jittered waits took only %d values", len(seen))
	}
}
