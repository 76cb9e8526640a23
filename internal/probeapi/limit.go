package probeapi

import (
	"sync"
	"time"

	utilcache "k8s.io/apimachinery/pkg/util/cache"
)

// Failed requests (401 and 403) a client address may make per window
// before the probe API answers its every request 429 until the window
// ends. An agent with a good token never fails, so the limit is low: it
// is what bounds the TokenReviews and Secret reads an anonymous caller
// can cause with fresh tokens (each of which misses the token cache).
const (
	FailureLimit  = 10
	FailureWindow = time.Minute
)

// maxFailureBuckets bounds the addresses the limiter remembers; the least
// recently failing is forgotten first.
const maxFailureBuckets = 10_000

// failureLimiter counts failed requests per client address in fixed
// windows.
type failureLimiter struct {
	now func() time.Time
	mu  sync.Mutex
	// windows holds a *failureWindow per address, each expiring with its
	// window.
	windows *utilcache.LRUExpireCache
}

type failureWindow struct {
	start time.Time
	count int
}

type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

func newFailureLimiter(now func() time.Time) *failureLimiter {
	return &failureLimiter{now: now, windows: utilcache.NewLRUExpireCacheWithClock(maxFailureBuckets, clockFunc(now))}
}

// blocked reports whether key used up its failures, and when its window
// ends.
func (l *failureLimiter) blocked(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.current(key)
	if w == nil {
		return false, 0
	}
	return w.count >= FailureLimit, w.start.Add(FailureWindow).Sub(l.now())
}

// fail counts one failed request of key.
func (l *failureLimiter) fail(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := l.current(key); w != nil {
		w.count++
		return
	}
	l.windows.Add(key, &failureWindow{start: l.now(), count: 1}, FailureWindow)
}

// current is key's window unless it ended; l.mu is held.
func (l *failureLimiter) current(key string) *failureWindow {
	v, ok := l.windows.Get(key)
	if !ok {
		return nil
	}
	w := v.(*failureWindow)
	if !l.now().Before(w.start.Add(FailureWindow)) {
		l.windows.Remove(key)
		return nil
	}
	return w
}
