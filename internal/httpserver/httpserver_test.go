package httpserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// tiny are limits small enough for a test; the assertions allow seconds of
// slack, so a slow machine does not fail them.
var tiny = Limits{ReadHeaderTimeout: 200 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond, MaxHeaderBytes: 4 << 10}

// slack is how long past a timeout a test waits before it calls the
// connection still open.
const slack = 5 * time.Second

// serve runs New(h, l) on a loopback port until the test ends.
func serve(t *testing.T, h http.Handler, l Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(h, l)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// closedWithin reports whether the server closes conn (a read ends in EOF
// or a reset) within d; whatever the server writes before is skipped.
func closedWithin(t *testing.T, conn net.Conn, d time.Duration) bool {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true
}

func echo(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, _ = w.Write(b)
}

// TestSlowBodyIsCutOff (issue 27 row 7): a client that sends its headers and
// then trickles its body is disconnected once ReadTimeout has passed, also
// when the handler does not read the body.
func TestSlowBodyIsCutOff(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"handler reads the body":   echo,
		"handler ignores the body": func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) },
	} {
		t.Run(name, func(t *testing.T) {
			addr := serve(t, h, tiny)
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
			stop := make(chan struct{})
			defer close(stop)
			go func() { // one byte every 50 ms: never idle, never done
				for {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
						if _, err := conn.Write([]byte("x")); err != nil {
							return
						}
					}
				}
			}()
			if !closedWithin(t, conn, tiny.ReadTimeout+slack) {
				t.Fatal("a slow body was still being read after the read timeout")
			}
		})
	}
}

// TestIdleKeepAliveIsClosed (issue 27 row 7): a keep-alive connection that
// sends no further request is closed after IdleTimeout.
func TestIdleKeepAliveIsClosed(t *testing.T) {
	addr := serve(t, http.HandlerFunc(echo), tiny)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "hi" || resp.Close {
		t.Fatalf("first request: %d %q close=%v", resp.StatusCode, body, resp.Close)
	}
	if !closedWithin(t, conn, tiny.IdleTimeout+slack) {
		t.Fatal("an idle keep-alive connection was still open after the idle timeout")
	}
}

// TestSlowHeadersAndLargeHeaders: headers are bounded in time and size.
func TestSlowHeadersAndLargeHeaders(t *testing.T) {
	addr := serve(t, http.HandlerFunc(echo), tiny)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\n")
	if !closedWithin(t, conn, tiny.ReadHeaderTimeout+slack) {
		t.Fatal("unfinished headers were still being read after the header timeout")
	}

	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	req.Header.Set("X-Big", strings.Repeat("a", 2*tiny.MaxHeaderBytes))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("oversized headers: %d, want 431", resp.StatusCode)
	}
}

// TestLongHandlersOutliveTheReadTimeout (issue 27 row 7): once its request
// is read, a handler runs on its own deadline: a long poll (GET) and a
// handler working after reading its body both answer after ReadTimeout
// with their context intact.
func TestLongHandlersOutliveTheReadTimeout(t *testing.T) {
	wait := 2 * tiny.ReadTimeout
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-r.Context().Done():
			http.Error(w, "cancelled: "+context.Cause(r.Context()).Error(), http.StatusServiceUnavailable)
		case <-time.After(wait):
			_, _ = w.Write(append([]byte("waited "), body...))
		}
	}), tiny)
	client := &http.Client{}
	for _, tc := range []struct{ method, body string }{{http.MethodGet, ""}, {http.MethodPost, "result"}} {
		for round := range 2 { // the second round reuses the kept-alive connection
			req, _ := http.NewRequest(tc.method, "http://"+addr+"/assignments?wait=1s", strings.NewReader(tc.body))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s round %d: %v", tc.method, round, err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(got) != "waited "+tc.body {
				t.Fatalf("%s round %d: %d %q", tc.method, round, resp.StatusCode, got)
			}
		}
	}
}
