package probeapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// authCounter counts Authenticate calls of a MemoryServer.
type authCounter struct {
	MemoryServer
	calls atomic.Int32
}

func (s *authCounter) Authenticate(ctx context.Context, token string) (string, error) {
	s.calls.Add(1)
	return s.MemoryServer.Authenticate(ctx, token)
}

func serve(h http.Handler, method, target, remote, token string, body io.Reader) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, body)
	r.RemoteAddr = remote
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestTokenCheckedBeforeBody: a batch of 8 MiB with a wrong token is
// answered 401 without a byte of it read (on main it was decoded first).
func TestTokenCheckedBeforeBody(t *testing.T) {
	h := NewHandler(&MemoryServer{Region: "eu1", Token: "secret"})
	big := append([]byte(`{"region":"eu1","results":[`), bytes.Repeat([]byte(`{"id":"x","monitor_id":"m"},`), (MaxBatchBytes-64)/30)...)
	for _, token := range []string{"wrong", ""} {
		body := &countingReader{r: bytes.NewReader(big)}
		w := serve(h, http.MethodPost, PathResults, "192.0.2.1:4000", token, body)
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("token %q: %d %s, want 401", token, w.Code, w.Body)
		}
		if n := body.n.Load(); n != 0 {
			t.Fatalf("token %q: %d bytes of the body read before the token was refused", token, n)
		}
	}
	// The good token reads the body.
	body := &countingReader{r: strings.NewReader(`{"region":"eu1","results":[{"id":"r","monitor_id":"m","status":"up"}]}`)}
	if w := serve(h, http.MethodPost, PathResults, "192.0.2.1:4000", "secret", body); w.Code != http.StatusOK || body.n.Load() == 0 {
		t.Fatalf("good token: %d %s, %d bytes read", w.Code, w.Body, body.n.Load())
	}
}

// TestFailuresLimitedPerAddress: 50 requests with made-up tokens from one
// address reach the server FailureLimit times; the rest are answered 429
// with Retry-After and cost nothing, while a good token from that address
// is still answered. Other addresses are not affected, IPv6 addresses of
// one /64 share their limit, and the window ends.
func TestFailuresLimitedPerAddress(t *testing.T) {
	srv := &authCounter{MemoryServer: MemoryServer{Region: "eu1", Token: "secret"}}
	now := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	h := newHandler(srv, func() time.Time { return now })
	codes := map[int]int{}
	for i := range 50 {
		w := serve(h, http.MethodGet, PathAssignments+"?region=eu1&wait=0s", "198.51.100.7:5000", fmt.Sprintf("guess-%d", i), nil)
		codes[w.Code]++
		if w.Code == http.StatusTooManyRequests && w.Header().Get("Retry-After") != "60" {
			t.Fatalf("429 without Retry-After 60: %q", w.Header().Get("Retry-After"))
		}
	}
	if codes[http.StatusUnauthorized] != FailureLimit || codes[http.StatusTooManyRequests] != 50-FailureLimit {
		t.Fatalf("answers %v, want %d× 401 then 429", codes, FailureLimit)
	}
	if n := srv.calls.Load(); n != FailureLimit {
		t.Fatalf("the server authenticated %d tokens, want %d", n, FailureLimit)
	}
	// Over the limit a good token is still answered: only failures wait.
	if w := serve(h, http.MethodGet, PathAssignments+"?region=eu1&wait=0s", "198.51.100.7:5001", "secret", nil); w.Code != http.StatusOK {
		t.Fatalf("good token from a limited address: %d, want 200", w.Code)
	}
	if w := serve(h, http.MethodGet, PathAssignments+"?region=eu1&wait=0s", "198.51.100.8:5000", "guess", nil); w.Code != http.StatusUnauthorized {
		t.Fatalf("another address: %d %s", w.Code, w.Body)
	}
	// One /64 is one client: ten hosts of it fail once each, the next is limited.
	for i := range FailureLimit {
		serve(h, http.MethodGet, PathAssignments+"?region=eu1", fmt.Sprintf("[2001:db8:7:7::%x]:1", i+1), "guess", nil)
	}
	if w := serve(h, http.MethodGet, PathAssignments+"?region=eu1&wait=0s", "[2001:db8:7:7:ffff::1]:1", "guess", nil); w.Code != http.StatusTooManyRequests {
		t.Fatalf("a fresh address of a limited /64: %d", w.Code)
	}
	if w := serve(h, http.MethodGet, PathAssignments+"?region=eu1&wait=0s", "[2001:db8:7:8::1]:1", "guess", nil); w.Code != http.StatusUnauthorized {
		t.Fatalf("the next /64: %d", w.Code)
	}
	now = now.Add(FailureWindow)
	if w := serve(h, http.MethodGet, PathAssignments+"?region=eu1&wait=0s", "198.51.100.7:5000", "guess", nil); w.Code != http.StatusUnauthorized {
		t.Fatalf("after the window: %d %s", w.Code, w.Body)
	}
}

// TestTokenSpeaksForItsRegionOnly: a token of eu1 can neither poll another
// region's assignments nor push results under another region's name, in
// the batch or in any one result; nothing of a refused batch is stored.
func TestTokenSpeaksForItsRegionOnly(t *testing.T) {
	mem := &MemoryServer{Region: "eu1", Token: "secret"}
	h := NewHandler(mem)
	if w := serve(h, http.MethodGet, PathAssignments+"?region=us1", "192.0.2.9:1", "secret", nil); w.Code != http.StatusForbidden {
		t.Fatalf("poll of another region: %d %s", w.Code, w.Body)
	}
	for _, body := range []string{
		`{"region":"us1","results":[{"id":"a","monitor_id":"m","status":"down"}]}`,
		`{"region":"eu1","results":[{"id":"b","monitor_id":"m","status":"up"},{"id":"c","monitor_id":"m","region":"us1","status":"down"}]}`,
		`{"results":[{"id":"d","monitor_id":"m","region":"ap1","status":"down"}]}`,
	} {
		w := serve(h, http.MethodPost, PathResults, "192.0.2.9:1", "secret", strings.NewReader(body))
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "FORBIDDEN") {
			t.Fatalf("%s: %d %s, want 403", body, w.Code, w.Body)
		}
	}
	if got := mem.Results(); len(got) != 0 {
		t.Fatalf("stored from refused batches: %+v", got)
	}
	w := serve(h, http.MethodPost, PathResults, "192.0.2.9:1", "secret", strings.NewReader(`{"results":[{"id":"e","monitor_id":"m","status":"up"}]}`))
	if got := mem.Results(); w.Code != http.StatusOK || len(got) != 1 || got[0].Region != "eu1" {
		t.Fatalf("a batch without region names: %d, stored %+v", w.Code, got)
	}
}
