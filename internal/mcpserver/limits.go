package mcpserver

import (
	"fmt"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
)

// limitWindow is one session limit: at most max events per window, counted
// by the shared ratelimit package.
type limitWindow struct {
	name string
	max  int
	*ratelimit.Limiter
}

func newLimitWindow(name string, limit int, window time.Duration) limitWindow {
	return limitWindow{name: name, max: limit, Limiter: ratelimit.New(limit, window)}
}

// writeLimiter enforces the per-session write limits of the server: changes
// per minute and per hour, monitor pauses per hour (when destructive mode is
// off) and checks run on demand. A session is one stdio connection, or one
// API key over HTTP.
type writeLimiter struct {
	now func() time.Time
	// mu makes checking every limit of a change and counting it one step,
	// so that a change refused by one limit is counted by none.
	mu       sync.Mutex
	perMin   limitWindow
	perHour  limitWindow
	pauses   limitWindow
	runCheck limitWindow
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
		perMin:   newLimitWindow("changes per minute", orDefault(o.MaxWritesPerMinute, 20), time.Minute),
		perHour:  newLimitWindow("changes per hour", orDefault(o.MaxWritesPerHour, 200), time.Hour),
		pauses:   newLimitWindow("monitor pauses per hour", orDefault(o.MaxPausesPerHour, 10), time.Hour),
		runCheck: newLimitWindow("checks run on demand per 5 minutes", 30, 5*time.Minute),
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
	applies := []limitWindow{l.perMin, l.perHour}
	switch {
	case a == actionPause && !destructive:
		applies = append(applies, l.pauses)
	case a == actionRunCheck:
		applies = append(applies, l.runCheck)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, w := range applies {
		if d := w.Peek(session, now); !d.Allowed {
			wait := max(time.Second, d.Reset).Round(time.Second)
			return fmt.Errorf("refused: the session limit of this MCP server is %d %s, and it is reached; try again in %s (the operator can change the limit)", w.max, w.name, wait)
		}
	}
	for _, w := range applies {
		w.Take(session, now)
	}
	return nil
}
