package alertevent

import (
	"net/http"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	for status, want := range map[int]Outcome{
		0: Retryable, 200: Delivered, 201: Delivered, 204: Delivered, 299: Delivered,
		301: Permanent, 302: Permanent, 307: Permanent, 308: Permanent,
		400: Permanent, 401: Permanent, 403: Permanent, 404: Permanent, 410: Permanent, 422: Permanent,
		408: Retryable, 409: Retryable, 425: Retryable, 429: Retryable,
		500: Retryable, 502: Retryable, 503: Retryable, 504: Retryable,
	} {
		if got := Classify(status); got != want {
			t.Errorf("Classify(%d) = %s, want %s", status, got, want)
		}
	}
}

func TestBackoffSchedule(t *testing.T) {
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second}
	for i, w := range want {
		if got := Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %s, want %s", i+1, got, w)
		}
	}
	if MaxAttempts != len(want)+1 {
		t.Errorf("MaxAttempts = %d, want 6", MaxAttempts)
	}
}

func TestNextDelay(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	hdr := func(v string) http.Header { h := http.Header{}; h.Set("Retry-After", v); return h }
	tests := []struct {
		name   string
		status int
		header http.Header
		want   time.Duration
	}{
		{"no header", 429, http.Header{}, 10 * time.Second},
		{"longer on 429", 429, hdr("120"), 120 * time.Second},
		{"longer on 503", 503, hdr("60"), 60 * time.Second},
		{"shorter is ignored", 429, hdr("2"), 10 * time.Second},
		{"capped at 15 minutes", 429, hdr("3600"), 15 * time.Minute},
		{"huge value capped", 503, hdr("99999999999999"), 15 * time.Minute},
		{"http date", 503, hdr(now.Add(5 * time.Minute).Format(http.TimeFormat)), 5 * time.Minute},
		{"ignored on 500", 500, hdr("120"), 10 * time.Second},
		{"ignored on 408", 408, hdr("120"), 10 * time.Second},
		{"garbage", 429, hdr("soon"), 10 * time.Second},
		{"negative", 429, hdr("-5"), 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NextDelay(10*time.Second, tt.status, tt.header, now); got != tt.want {
				t.Errorf("NextDelay = %s, want %s", got, tt.want)
			}
		})
	}
}
