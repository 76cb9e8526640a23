package apiserver

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/clientip"
)

// limitScope is what a limit is counted per.
type limitScope int

const (
	// perKey counts per API key.
	perKey limitScope = iota
	// perIP counts per client address.
	perIP
	// perWorkspace counts per namespace. The specification's "per account"
	// limits are counted per workspace too: an API key acts for the
	// workspace, not for a person.
	perWorkspace
	// perPath counts per request path (the heartbeat token).
	perPath
)

// limiter is a fixed-window request counter: at most limit requests per
// window and key. Fixed windows give the specification's "blocks for the rest
// of the window" and a Reset that clients can wait for.
type limiter struct {
	name   string
	limit  int
	window time.Duration
	scope  limitScope
	// plain answers 429 with the specification's plain-text body.
	plain bool

	mu      sync.Mutex
	windows map[string]*fixedWindow
}

type fixedWindow struct {
	start time.Time
	count int
}

func newLimiter(name string, limit int, window time.Duration, scope limitScope, plain bool) *limiter {
	return &limiter{name: name, limit: limit, window: window, scope: scope, plain: plain, windows: map[string]*fixedWindow{}}
}

// decision is the outcome of one take.
type decision struct {
	allowed   bool
	limit     int
	remaining int
	reset     time.Duration
}

// take counts one request of key at now.
func (l *limiter) take(key string, now time.Time) decision {
	return l.add(key, now, 1)
}

// peek reports the state of key without counting.
func (l *limiter) peek(key string, now time.Time) decision {
	return l.add(key, now, 0)
}

func (l *limiter) add(key string, now time.Time, n int) decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.windows[key]
	if w == nil || !now.Before(w.start.Add(l.window)) {
		if len(l.windows) > 50000 {
			l.sweep(now)
		}
		w = &fixedWindow{start: now}
		l.windows[key] = w
	}
	reset := w.start.Add(l.window).Sub(now)
	if n > 0 && w.count >= l.limit {
		return decision{allowed: false, limit: l.limit, remaining: 0, reset: reset}
	}
	w.count += n
	return decision{allowed: w.count <= l.limit, limit: l.limit, remaining: max(0, l.limit-w.count), reset: reset}
}

// sweep drops expired windows; the caller holds mu.
func (l *limiter) sweep(now time.Time) {
	for k, w := range l.windows {
		if !now.Before(w.start.Add(l.window)) {
			delete(l.windows, k)
		}
	}
}

// limits are the rate limits of the specification's Limits table.
type limits struct {
	perKey         *limiter
	invalidKey     *limiter
	monitorWrite   *limiter
	runCheck       *limiter
	testNotify     *limiter
	export         *limiter
	dnsAccept      *limiter
	stats          *limiter
	channelTestWS  *limiter
	channelTestIP  *limiter
	apply          *limiter
	plan           *limiter
	keyedWrite     *limiter
	heartbeatToken *limiter
	heartbeatFail  *limiter
	public         *limiter
	// recipientConfirm bounds confirmation attempts (each is a store write)
	// per address; the tokens themselves cannot be guessed.
	recipientConfirm *limiter
}

func newLimits() *limits {
	return &limits{
		perKey:           newLimiter("api-key", 1200, time.Minute, perKey, false),
		invalidKey:       newLimiter("invalid-key", 100, 15*time.Minute, perIP, false),
		monitorWrite:     newLimiter("monitor-write", 120, 15*time.Minute, perIP, true),
		runCheck:         newLimiter("run-check", 30, 5*time.Minute, perWorkspace, true),
		testNotify:       newLimiter("test-notification", 10, 15*time.Minute, perWorkspace, true),
		export:           newLimiter("export", 20, 15*time.Minute, perWorkspace, true),
		dnsAccept:        newLimiter("dns-accept", 120, 15*time.Minute, perIP, false),
		stats:            newLimiter("stats", 1000, time.Minute, perIP, true),
		channelTestWS:    newLimiter("channel-test", 30, time.Hour, perWorkspace, false),
		channelTestIP:    newLimiter("channel-test-ip", 60, time.Hour, perIP, false),
		apply:            newLimiter("apply", 30, 15*time.Minute, perWorkspace, false),
		plan:             newLimiter("plan", 120, 15*time.Minute, perWorkspace, false),
		keyedWrite:       newLimiter("keyed-write", 600, 15*time.Minute, perWorkspace, false),
		heartbeatToken:   newLimiter("heartbeat", 60, time.Minute, perPath, true),
		heartbeatFail:    newLimiter("heartbeat-failures", 600, time.Minute, perIP, true),
		public:           newLimiter("public-status", 60, time.Minute, perIP, true),
		recipientConfirm: newLimiter("recipient-confirm", 30, 15*time.Minute, perIP, true),
	}
}

// setRateHeaders writes the RateLimit-* headers of d.
func setRateHeaders(w http.ResponseWriter, d decision) {
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(d.limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(d.reset)))
}

func ceilSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// writeTooMany answers 429 for decision d of l.
func writeTooMany(w http.ResponseWriter, l *limiter, d decision) {
	setRateHeaders(w, d)
	w.Header().Set("Retry-After", strconv.Itoa(ceilSeconds(d.reset)))
	if l.plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(plainTooMany))
		return
	}
	writeError(w, http.StatusTooManyRequests, CodeRateLimited, "Too many requests, please try again later")
}

// limitKey is the counting key of l for r.
func limitKey(l *limiter, r *http.Request) string {
	switch l.scope {
	case perIP:
		return clientip.From(r)
	case perPath:
		return r.URL.Path
	case perWorkspace:
		if c := CallerFrom(r.Context()); c != nil {
			return c.Namespace
		}
		return clientip.From(r)
	default:
		if c := CallerFrom(r.Context()); c != nil {
			return c.rateKey()
		}
		return clientip.From(r)
	}
}
