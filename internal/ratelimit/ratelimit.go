package ratelimit

import (
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/clientip"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
)

// maxKeys is how many keys a Limiter holds before it drops expired windows
// on the next new key; it bounds the memory a flood of new addresses costs.
// When the windows are all still running, arbitrary ones go too, down to
// 90%, so that the next new keys do not sweep the whole map again each.
const maxKeys = 50_000

// Limiter counts events per key in fixed windows: at most Limit per Window.
// It is safe for concurrent use. Build it with New.
type Limiter struct {
	limit  int
	window time.Duration

	mu      sync.Mutex
	windows map[string]*fixedWindow
}

type fixedWindow struct {
	start time.Time
	count int
}

// New returns a limiter of limit events per window and key.
func New(limit int, window time.Duration) *Limiter {
	return &Limiter{limit: limit, window: window, windows: map[string]*fixedWindow{}}
}

// Limit is the number of events a key may have per window.
func (l *Limiter) Limit() int { return l.limit }

// Window is the length of one counting window.
func (l *Limiter) Window() time.Duration { return l.window }

// Decision is the state of one key after Take or Peek.
type Decision struct {
	// Allowed is false when the event was refused (Take) or when the key
	// has no event left in its window (Peek).
	Allowed bool
	// Limit is the limiter's limit per window.
	Limit int
	// Remaining is how many more events the key may have in this window.
	Remaining int
	// Reset is the time until the key's window ends.
	Reset time.Duration
}

// Take counts one event of key at now, unless the key has none left: then
// the event is refused and not counted.
func (l *Limiter) Take(key string, now time.Time) Decision {
	return l.add(key, now, 1)
}

// Peek reports the state of key at now without counting. Limits that count
// only failures (invalid API keys, failed heartbeats, refused probe-API
// tokens) Peek before doing the work and Take after a failure; Allowed is
// false once the key has used up its window.
func (l *Limiter) Peek(key string, now time.Time) Decision {
	return l.add(key, now, 0)
}

func (l *Limiter) add(key string, now time.Time, n int) Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.windows[key]
	if w == nil || !now.Before(w.start.Add(l.window)) {
		if w == nil && len(l.windows) >= maxKeys {
			l.sweep(now)
		}
		w = &fixedWindow{start: now}
		l.windows[key] = w
	}
	d := Decision{Limit: l.limit, Reset: w.start.Add(l.window).Sub(now)}
	if w.count+n > l.limit || (n == 0 && w.count >= l.limit) {
		return d
	}
	w.count += n
	d.Allowed = true
	d.Remaining = l.limit - w.count
	return d
}

// sweep drops expired windows, then arbitrary ones while the map is above
// 90% of maxKeys; the caller holds mu.
func (l *Limiter) sweep(now time.Time) {
	for k, w := range l.windows {
		if !now.Before(w.start.Add(l.window)) {
			delete(l.windows, k)
		}
	}
	for k := range l.windows {
		if len(l.windows) < maxKeys*9/10 {
			break
		}
		delete(l.windows, k)
	}
}

// ClientKey is the key of a per-address limit for r: the client address
// clientip resolved for it (the TCP peer without the clientip middleware),
// IPv6 grouped by /64. See AddrKey.
func ClientKey(r *http.Request) string {
	raw := clientip.From(r)
	a, err := netip.ParseAddr(raw)
	if err != nil {
		return raw
	}
	return AddrKey(a)
}

// AddrKey is the per-address key of a: an IPv4 address itself (also when
// written IPv4-mapped), an IPv6 address its /64 prefix.
func AddrKey(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.String()
		}
	}
	return a.String()
}

// TooManyMessage is the human-readable text of every 429, the JSON error and
// the plain-text body alike.
const TooManyMessage = "Too many requests, please try again later"

// CodeRateLimited is the error code of a JSON 429.
const CodeRateLimited = "RATE_LIMITED"

// SetHeaders writes the RateLimit-Limit, -Remaining and -Reset headers of d
// (seconds, rounded up).
func SetHeaders(w http.ResponseWriter, d Decision) {
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(Seconds(d.Reset)))
}

// Body is how Refuse writes the 429 body.
type Body int

const (
	// JSON is {"error": TooManyMessage, "code": "RATE_LIMITED"}.
	JSON Body = iota
	// Plain is TooManyMessage as text/plain, the body the specification
	// gives for monitor writes, run-check, stats and exports.
	Plain
)

// Refuse answers 429 for d: the RateLimit-* headers, Retry-After (the end of
// the window) and the body b.
func Refuse(w http.ResponseWriter, d Decision, b Body) {
	SetHeaders(w, d)
	w.Header().Set("Retry-After", strconv.Itoa(Seconds(d.Reset)))
	if b == Plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(TooManyMessage))
		return
	}
	httpjson.Write(w, http.StatusTooManyRequests, errorBody{Error: TooManyMessage, Code: CodeRateLimited})
}

type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// Seconds is d in whole seconds, rounded up, at least 1: the unit of
// Retry-After and RateLimit-Reset.
func Seconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
