package ratelimit

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/clientip"
)

func TestTakeCountsUpToTheLimitPerWindow(t *testing.T) {
	l := New(3, time.Minute)
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		d := l.Take("a", t0.Add(time.Duration(i)*time.Second))
		if !d.Allowed || d.Remaining != 2-i || d.Limit != 3 {
			t.Fatalf("take %d: %+v", i, d)
		}
	}
	d := l.Take("a", t0.Add(10*time.Second))
	if d.Allowed || d.Remaining != 0 || d.Reset != 50*time.Second {
		t.Fatalf("fourth take: %+v, want refused with 50s to the reset", d)
	}
	if d := l.Take("b", t0.Add(10*time.Second)); !d.Allowed {
		t.Fatalf("another key was refused: %+v", d)
	}
	if d := l.Take("a", t0.Add(time.Minute)); !d.Allowed || d.Remaining != 2 {
		t.Fatalf("take in the next window: %+v", d)
	}
}

func TestPeekDoesNotCount(t *testing.T) {
	l := New(2, time.Minute)
	now := time.Now()
	for range 5 {
		if d := l.Peek("a", now); !d.Allowed || d.Remaining != 2 {
			t.Fatalf("peek: %+v", d)
		}
	}
	l.Take("a", now)
	l.Take("a", now)
	if d := l.Peek("a", now); d.Allowed {
		t.Fatalf("peek after the limit: %+v, want not allowed", d)
	}
}

func TestSweepBoundsMemory(t *testing.T) {
	l := New(1, time.Second)
	now := time.Now()
	for i := range maxKeys {
		l.Take(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String(), now)
	}
	l.Take("late", now.Add(2*time.Second))
	if n := len(l.windows); n != 1 {
		t.Fatalf("%d windows after the sweep, want 1", n)
	}
	// All windows still running: the map is cut to 90% at once.
	l = New(1, time.Hour)
	for i := range maxKeys {
		l.Take(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String(), now)
	}
	l.Take("late", now)
	if n := len(l.windows); n > maxKeys*9/10 {
		t.Fatalf("%d windows after the sweep, want at most %d", n, maxKeys*9/10)
	}
}

func TestAddrKeyGroupsIPv6By64(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
	} {
		if got := AddrKey(netip.MustParseAddr(tc.in)); got != tc.want {
			t.Errorf("AddrKey(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestClientKeyUsesTheResolvedAddress(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "[2001:db8:1:2::99]:4000"
	if got := ClientKey(r); got != "2001:db8:1:2::/64" {
		t.Fatalf("peer key %q", got)
	}
	r = r.WithContext(clientip.WithAddr(r.Context(), netip.MustParseAddr("198.51.100.4")))
	if got := ClientKey(r); got != "198.51.100.4" {
		t.Fatalf("resolved key %q", got)
	}
}

func TestRefuse(t *testing.T) {
	d := Decision{Limit: 60, Remaining: 0, Reset: 1500 * time.Millisecond}
	rec := httptest.NewRecorder()
	Refuse(rec, d, JSON)
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d", rec.Code)
	}
	for h, want := range map[string]string{"Retry-After": "2", "RateLimit-Limit": "60", "RateLimit-Remaining": "0", "RateLimit-Reset": "2"} {
		if got := rec.Header().Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	var body map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["code"] != CodeRateLimited || body["error"] != TooManyMessage {
		t.Fatalf("JSON body %q (%v)", rec.Body.String(), err)
	}
	rec = httptest.NewRecorder()
	Refuse(rec, d, Plain)
	if rec.Body.String() != TooManyMessage || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" || rec.Header().Get("Retry-After") != "2" {
		t.Fatalf("plain 429: %q %v", rec.Body.String(), rec.Header())
	}
}
