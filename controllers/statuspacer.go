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

// Lane is the class of a status write the pacer orders by.
type Lane int

const (
	// LaneChange is a write users wait for: the first status of a
	// generation (the Monitor becomes Ready) or a change of what they
	// read (state, open incident, uptime as shown, conditions).
	LaneChange Lane = iota
	// LaneRefresh is a write of timestamps alone (the last check's time
	// and response time): it waits while any LaneChange write waits.
	LaneRefresh
)

// StatusPacer hands out status writes at a fixed rate. A reconcile with a
// change to write asks for a turn; when it is not now, the reconcile
// requeues itself for the time of its turn, which is kept for it, so a
// paced write is never starved by later arrivals. Changes (LaneChange) are
// served first come first served; a refresh (LaneRefresh) gets a turn only
// when no change is waiting, so after a bulk create or a restart the
// Monitors that have no status yet are written before the Monitors that
// only have newer timestamps.
type StatusPacer struct {
	limiter *rate.Limiter
	every   time.Duration

	mu sync.Mutex
	// turns are the kept turns of objects waiting to write.
	turns map[types.NamespacedName]turn
	// changesUntil is the latest kept LaneChange turn: refreshes wait
	// until then.
	changesUntil time.Time
	// last is the latest time the limiter was asked at. Callers read the
	// clock before they take mu, so times arrive slightly out of order,
	// and rate.Limiter counts the tokens of a step back again on the next
	// step forward (a few percent more turns than the rate).
	last time.Time
}

type turn struct {
	at   time.Time
	lane Lane
}

// NewStatusPacer paces to perSecond writes a second, allowing bursts of up
// to one second's worth.
func NewStatusPacer(perSecond float64) *StatusPacer {
	burst := max(1, int(perSecond))
	return &StatusPacer{
		limiter: rate.NewLimiter(rate.Limit(perSecond), burst),
		every:   time.Duration(float64(time.Second) / perSecond),
		turns:   map[types.NamespacedName]turn{},
	}
}

// Waiting reports how long key still waits for a turn it was given, and
// the turn's lane: a reconcile that finds its object waiting requeues
// without doing any work. Zero when key has no turn or its turn has come.
func (p *StatusPacer) Waiting(key types.NamespacedName, now time.Time) (time.Duration, Lane) {
	if p == nil {
		return 0, LaneChange
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.turns[key]; ok && now.Before(t.at) {
		return t.at.Sub(now), t.lane
	}
	return 0, LaneChange
}

// Turn asks for key's status write in lane: zero means write now (the
// turn is used up), otherwise the wait until key's turn, which is kept for
// it; a refresh asked while changes wait is told to come back after them,
// and keeps no turn.
func (p *StatusPacer) Turn(key types.NamespacedName, now time.Time, lane Lane) time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.turns[key]; ok {
		switch {
		case !now.Before(t.at):
			delete(p.turns, key)
			return 0
		case t.lane <= lane:
			return t.at.Sub(now)
		}
		// A kept refresh turn, and now a change: a turn in the change
		// lane instead, which may come sooner.
		delete(p.turns, key)
	}
	if lane == LaneRefresh && now.Before(p.changesUntil) {
		return p.changesUntil.Sub(now) + p.every
	}
	if now.Before(p.last) {
		now = p.last
	}
	p.last = now
	d := p.limiter.ReserveN(now, 1).DelayFrom(now)
	if d > 0 {
		at := now.Add(d)
		p.turns[key] = turn{at: at, lane: lane}
		if lane == LaneChange && at.After(p.changesUntil) {
			p.changesUntil = at
		}
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
