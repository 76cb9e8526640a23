package statuspage

import (
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/clientip"
)

// Public endpoint rate limit of the specification: 60 requests per minute per
// IP, as a token bucket that holds 60 tokens and refills one per second.
const (
	RateLimit       = 60
	rateRefillEvery = time.Second
	// maxBuckets bounds the limiter's memory; full buckets are dropped first.
	maxBuckets = 100_000
)

type bucket struct {
	tokens float64
	at     time.Time
}

// limiter is a per-key token bucket.
type limiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

// decision is the outcome of one request against the limiter.
type decision struct {
	allowed   bool
	remaining int
	// reset is the time until the bucket is full again.
	reset time.Duration
	// retryAfter is the time until one token is available (when refused).
	retryAfter time.Duration
}

func (l *limiter) take(key string, now time.Time) decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buckets == nil {
		l.buckets = make(map[string]*bucket)
	}
	l.sweep(now)
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: RateLimit, at: now}
		l.buckets[key] = b
	}
	refill(b, now)
	d := decision{}
	if b.tokens >= 1 {
		b.tokens--
		d.allowed = true
	} else {
		d.retryAfter = time.Duration((1 - b.tokens) * float64(rateRefillEvery))
	}
	d.remaining = int(math.Floor(b.tokens))
	d.reset = time.Duration((RateLimit - b.tokens) * float64(rateRefillEvery))
	return d
}

func refill(b *bucket, now time.Time) {
	if el := now.Sub(b.at); el > 0 {
		b.tokens = math.Min(RateLimit, b.tokens+float64(el)/float64(rateRefillEvery))
		b.at = now
	}
}

// sweep drops buckets that have refilled completely (they hold no state worth
// keeping) once a minute, or at once when the map is over its bound.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute && len(l.buckets) < maxBuckets {
		return
	}
	l.swept = now
	for k, b := range l.buckets {
		refill(b, now)
		if b.tokens >= RateLimit {
			delete(l.buckets, k)
		}
	}
	// Still over the bound: forget arbitrary ones, down to 90% so that the
	// next requests from new addresses do not sweep the whole map again.
	for k := range l.buckets {
		if len(l.buckets) < maxBuckets*9/10 {
			break
		}
		delete(l.buckets, k)
	}
}

// allow applies the limit to r, sets the RateLimit-* headers and answers 429
// with Retry-After when the client is over it. It reports whether to go on.
func (p *Public) allow(w http.ResponseWriter, r *http.Request) bool {
	d := p.limiter.take(p.clientKey(r), p.now())
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(RateLimit))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(d.reset)))
	if d.allowed {
		return true
	}
	h.Set("Retry-After", strconv.Itoa(max(1, ceilSeconds(d.retryAfter))))
	writeError(w, http.StatusTooManyRequests, CodeRateLimited, "Too many requests, please try again later")
	return false
}

func ceilSeconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}

// clientKey is the rate-limit key of a request: the client address
// (clientip.From, so proxies in --trusted-proxies are seen through), with
// IPv6 addresses grouped by /64 since one host usually holds a whole /64.
func (p *Public) clientKey(r *http.Request) string {
	raw := clientip.From(r)
	addr, err := netip.ParseAddr(raw)
	if err != nil {
		return raw
	}
	if addr.Is6() {
		if pfx, err := addr.Prefix(64); err == nil {
			return pfx.String()
		}
	}
	return addr.String()
}
