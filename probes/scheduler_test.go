package probes

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// fakeClock is a manually advanced Clock.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c     chan time.Time
	at    time.Time
	armed bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1_700_000_000, 0)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{c: make(chan time.Time, 1), at: f.now.Add(d), armed: true}
	f.timers = append(f.timers, t)
	return &fakeTimerHandle{f, t}
}

type fakeTimerHandle struct {
	f *fakeClock
	t *fakeTimer
}

func (h *fakeTimerHandle) C() <-chan time.Time { return h.t.c }
func (h *fakeTimerHandle) Reset(d time.Duration) {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	h.t.at, h.t.armed = h.f.now.Add(d), true
	h.f.fireLocked()
}
func (h *fakeTimerHandle) Stop() {
	h.f.mu.Lock()
	h.t.armed = false
	h.f.mu.Unlock()
}

// Advance moves time on and fires due timers.
func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	f.fireLocked()
}

func (f *fakeClock) fireLocked() {
	for _, t := range f.timers {
		if t.armed && !t.at.After(f.now) {
			t.armed = false
			select {
			case t.c <- f.now:
			default:
			}
		}
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func assignments(n, interval int) []probeapi.Assignment {
	as := make([]probeapi.Assignment, n)
	for i := range as {
		as[i] = probeapi.Assignment{ID: fmt.Sprintf("monitor-%d", i), Type: probeapi.TypeHTTP, IntervalSeconds: interval}
	}
	return as
}

func TestPhasesSpread(t *testing.T) {
	const n, interval = 6000, 60
	buckets := make([]int, interval)
	for _, a := range assignments(n, interval) {
		p := phaseOf(a.ID, int64(interval)*int64(time.Second))
		buckets[p/int64(time.Second)]++
	}
	for s, c := range buckets {
		if c < n/interval/2 || c > n/interval*2 {
			t.Fatalf("second %d has %d of %d monitors: phases not spread", s, c, n)
		}
	}
	// Same id, same phase: a restart keeps the slot.
	if phaseOf("x", 60e9) != phaseOf("x", 60e9) {
		t.Fatal("phase not stable")
	}
	now := int64(1_000_000_000_000)
	if got := nextSlot(now, 60e9, 5e9); got <= now || (got-5e9)%60e9 != 0 || got-now > 60e9 {
		t.Fatalf("nextSlot %d", got)
	}
}

func TestSchedulerRunsEachInterval(t *testing.T) {
	clk := newFakeClock()
	var mu sync.Mutex
	runs := map[string][]time.Time{}
	s := &Scheduler{Clock: clk, Run: func(_ context.Context, a *probeapi.Assignment, planned time.Time) {
		mu.Lock()
		runs[a.ID] = append(runs[a.ID], planned)
		mu.Unlock()
	}}
	s.Update(assignments(20, 15))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Start(ctx); close(done) }()
	total := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, r := range runs {
			n += len(r)
		}
		return n
	}
	for i := 1; i <= 45; i++ {
		clk.Advance(time.Second)
		time.Sleep(100 * time.Microsecond)
	}
	eventually(t, "three runs of every monitor", func() bool { return total() == 60 })
	mu.Lock()
	for id, r := range runs {
		if len(r) != 3 || r[1].Sub(r[0]) != 15*time.Second || r[2].Sub(r[1]) != 15*time.Second {
			t.Fatalf("%s ran at %v", id, r)
		}
	}
	mu.Unlock()
	// Update keeps phases and drops removed monitors.
	s.Update(assignments(10, 15))
	if s.Len() != 10 {
		t.Fatalf("len %d", s.Len())
	}
	cancel()
	<-done
}

func TestSchedulerNoOverlap(t *testing.T) {
	clk := newFakeClock()
	release := make(chan struct{})
	var calls, skips atomic.Int32
	s := &Scheduler{Clock: clk, Run: func(context.Context, *probeapi.Assignment, time.Time) {
		calls.Add(1)
		<-release
	}, OnSkip: func(*probeapi.Assignment) { skips.Add(1) }}
	s.Update(assignments(1, 15))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Start(ctx); close(done) }()
	clk.Advance(15 * time.Second)
	eventually(t, "first run", func() bool { return calls.Load() == 1 })
	for i := range int32(3) {
		clk.Advance(15 * time.Second)
		eventually(t, "skip", func() bool { return skips.Load() == i+1 })
	}
	if calls.Load() != 1 {
		t.Fatalf("overlapping runs: %d", calls.Load())
	}
	close(release)
	eventually(t, "run finished", func() bool { return s.InFlight() == 0 })
	clk.Advance(15 * time.Second)
	eventually(t, "second run", func() bool { return calls.Load() == 2 })
	cancel()
	<-done
}

func TestSchedulerBoundedConcurrency(t *testing.T) {
	clk := newFakeClock()
	release := make(chan struct{})
	var cur, peak, calls atomic.Int32
	s := &Scheduler{Clock: clk, Concurrency: 3, Run: func(context.Context, *probeapi.Assignment, time.Time) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		calls.Add(1)
		<-release
		cur.Add(-1)
	}}
	s.Update(assignments(12, 15))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Start(ctx); close(done) }()
	clk.Advance(15 * time.Second)
	eventually(t, "three runs", func() bool { return calls.Load() == 3 })
	time.Sleep(20 * time.Millisecond)
	if calls.Load() != 3 || s.InFlight() > 12 {
		t.Fatalf("calls %d", calls.Load())
	}
	close(release)
	eventually(t, "all runs", func() bool { return calls.Load() == 12 })
	if peak.Load() != 3 {
		t.Fatalf("peak concurrency %d", peak.Load())
	}
	cancel()
	<-done
}
