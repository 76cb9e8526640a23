package mcpserver

import (
	"fmt"
	"sync"
	"time"
)

// limitWindow is one sliding-window counter: at most max events per window.
type limitWindow struct {
	name   string
	max    int
	window time.Duration
}

// writeLimiter enforces the per-session write limits of the server: changes
// per minute and per hour, monitor pauses per hour (when destructive mode is
// off) and checks run on demand. A session is one stdio connection, or one
// API key over HTTP.
type writeLimiter struct {
	now      func() time.Time
	mu       sync.Mutex
	sessions map[string]*sessionEvents
	perMin   limitWindow
	perHour  limitWindow
	pauses   limitWindow
	runCheck limitWindow
}

type sessionEvents struct {
	writes, pauses, runChecks []time.Time
	last                      time.Time
}

func newWriteLimiter(o *Options, now func() time.Time) *writeLimiter {
	orDefault := func(v, def int) int {
		if v <= 0 {
			return def
		}
		return v
	}
	return &writeLimiter{
		now:      now,
		sessions: map[string]*sessionEvents{},
		perMin:   limitWindow{"changes per minute", orDefault(o.MaxWritesPerMinute, 20), time.Minute},
		perHour:  limitWindow{"changes per hour", orDefault(o.MaxWritesPerHour, 200), time.Hour},
		pauses:   limitWindow{"monitor pauses per hour", orDefault(o.MaxPausesPerHour, 10), time.Hour},
		runCheck: limitWindow{"checks run on demand per 5 minutes", 30, 5 * time.Minute},
	}
}

// action is what a write does, for the limits that count only some writes.
type action int

const (
	actionWrite action = iota
	actionPause
	actionRunCheck
)

// allow records one change of kind a by session, or refuses it when a limit
// would be exceeded. Pauses are limited only when destructive is false.
func (l *writeLimiter) allow(session string, a action, destructive bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	ev := l.sessions[session]
	if ev == nil {
		l.sweep(now)
		ev = &sessionEvents{}
		l.sessions[session] = ev
	}
	ev.last = now
	ev.writes = prune(ev.writes, now, l.perHour.window)
	ev.pauses = prune(ev.pauses, now, l.pauses.window)
	ev.runChecks = prune(ev.runChecks, now, l.runCheck.window)
	if err := check(l.perMin, ev.writes, now); err != nil {
		return err
	}
	if err := check(l.perHour, ev.writes, now); err != nil {
		return err
	}
	if a == actionPause && !destructive {
		if err := check(l.pauses, ev.pauses, now); err != nil {
			return err
		}
	}
	if a == actionRunCheck {
		if err := check(l.runCheck, ev.runChecks, now); err != nil {
			return err
		}
	}
	ev.writes = append(ev.writes, now)
	switch a {
	case actionPause:
		ev.pauses = append(ev.pauses, now)
	case actionRunCheck:
		ev.runChecks = append(ev.runChecks, now)
	}
	return nil
}

// sweep forgets sessions idle for longer than the longest window.
func (l *writeLimiter) sweep(now time.Time) {
	for k, ev := range l.sessions {
		if now.Sub(ev.last) > 2*time.Hour {
			delete(l.sessions, k)
		}
	}
}

func prune(ts []time.Time, now time.Time, window time.Duration) []time.Time {
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= window {
		i++
	}
	return ts[i:]
}

// check refuses when events within w's window already reach w's maximum.
func check(w limitWindow, ts []time.Time, now time.Time) error {
	n := 0
	var oldest time.Time
	for _, t := range ts {
		if now.Sub(t) < w.window {
			if n == 0 {
				oldest = t
			}
			n++
		}
	}
	if n < w.max {
		return nil
	}
	wait := max(time.Second, w.window-now.Sub(oldest)).Round(time.Second)
	return fmt.Errorf("refused: the session limit of this MCP server is %d %s, and it is reached; try again in %s (the operator can change the limit)", w.max, w.name, wait)
}
