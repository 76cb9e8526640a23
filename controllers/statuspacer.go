package controllers

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultMonitorStatusWrites is how many Monitor status writes per second
// the manager sends kube-apiserver at most, across all Monitors.
//
// Every write is a PATCH that kube-apiserver validates, records in etcd and
// sends to every watcher; on two cores shared with etcd, the manager and an
// agent it took about 6 ms of kube-apiserver's CPU. Creating or restarting
// with 100,000 Monitors asks for a first write of each at once (and their
// first checks, a minute later, for another): unpaced, those writes queued
// inside kube-apiserver for a second each and starved the creates and every
// other client. Paced, a Monitor's write waits for its turn while its
// reconcile worker moves on, and when the turn comes the write carries the
// latest state, so a Monitor whose first check arrived while it waited is
// written once.
const DefaultMonitorStatusWrites = 100

// StatusPacer hands out status writes at a fixed rate, first come first
// served. A reconcile with a change to write asks for a turn; when it is
// not now, the reconcile requeues itself for the time of its turn, which
// is kept for it, so a paced write is never starved by later arrivals.
type StatusPacer struct {
	limiter *rate.Limiter

	mu sync.Mutex
	// turns are the kept turns of objects waiting to write.
	turns map[types.NamespacedName]time.Time
}

// NewStatusPacer paces to perSecond writes a second, allowing bursts of up
// to one second's worth.
func NewStatusPacer(perSecond float64) *StatusPacer {
	burst := max(1, int(perSecond))
	return &StatusPacer{limiter: rate.NewLimiter(rate.Limit(perSecond), burst), turns: map[types.NamespacedName]time.Time{}}
}

// Waiting reports how long key still waits for a turn it was given: a
// reconcile that finds its object waiting requeues without doing any work.
// Zero when key has no turn or its turn has come.
func (p *StatusPacer) Waiting(key types.NamespacedName, now time.Time) time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if at, ok := p.turns[key]; ok && now.Before(at) {
		return at.Sub(now)
	}
	return 0
}

// Turn asks for key's status write: zero means write now (the turn is
// used up), otherwise the wait until key's turn, which is kept for it.
func (p *StatusPacer) Turn(key types.NamespacedName, now time.Time) time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if at, ok := p.turns[key]; ok {
		if now.Before(at) {
			return at.Sub(now)
		}
		delete(p.turns, key)
		return 0
	}
	d := p.limiter.ReserveN(now, 1).DelayFrom(now)
	if d > 0 {
		p.turns[key] = now.Add(d)
	}
	return d
}

// Forget drops key's kept turn: its object is gone, or it had nothing to
// write when its turn came.
func (p *StatusPacer) Forget(key types.NamespacedName) {
	if p == nil {
		return
	}
	p.mu.Lock()
	delete(p.turns, key)
	p.mu.Unlock()
}
