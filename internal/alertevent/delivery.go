package alertevent

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/backoff"
)

// Delivery limits of spec/webhooks.md.
const (
	// AttemptTimeout bounds one attempt, response included.
	AttemptTimeout = 10 * time.Second
	// MaxAttempts is the total number of attempts of one delivery.
	MaxAttempts = 6
	// MaxRetryAfter caps a Retry-After the receiver asks for.
	MaxRetryAfter = 15 * time.Minute
	// FailingThreshold is the number of consecutive failed deliveries that
	// mark a channel Failing.
	FailingThreshold = 3
	// FailingNoticeInterval is the least time between two owner emails about
	// one failing channel.
	FailingNoticeInterval = 24 * time.Hour
)

// Outcome is how one attempt ended.
type Outcome int

// Attempt outcomes.
const (
	// Delivered: any 2xx.
	Delivered Outcome = iota
	// Retryable: timeout, network error, 408, 409, 425, 429, 5xx.
	Retryable
	// Permanent: 3xx (redirects are not followed) and other 4xx.
	Permanent
)

func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case Retryable:
		return "retryable"
	}
	return "permanent"
}

// Classify maps a response status (0 when no response arrived) to an
// outcome, following the specification's table literally: 3xx is a failure
// that is not in the retried list, so it is permanent.
func Classify(status int) Outcome {
	switch {
	case status == 0:
		return Retryable
	case status >= 200 && status < 300:
		return Delivered
	case status == http.StatusRequestTimeout, status == http.StatusConflict,
		status == http.StatusTooEarly, status == http.StatusTooManyRequests, status >= 500:
		return Retryable
	}
	return Permanent
}

// schedule is the specification's delivery schedule, without jitter: the
// specification gives the waits.
var schedule = backoff.Policy{Base: 5 * time.Second, Max: 5 * time.Second << (MaxAttempts - 2)}

// Backoff is the wait before attempt n+1 after attempt n (1-based) failed:
// 5, 10, 20, 40, 80 seconds.
func Backoff(n int) time.Duration {
	return schedule.Delay(max(n, 1) - 1)
}

// NextDelay is the wait before the next attempt: the backoff, or the
// response's Retry-After on 429 and 503 when it asks for longer, capped at
// 15 minutes.
func NextDelay(backoff time.Duration, status int, header http.Header, now time.Time) time.Duration {
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return backoff
	}
	ra, ok := ParseRetryAfter(header.Get("Retry-After"), now)
	if !ok || ra <= backoff {
		return backoff
	}
	return min(ra, MaxRetryAfter)
}

// ParseRetryAfter reads a Retry-After value: delay seconds or an HTTP date.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter, true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}
