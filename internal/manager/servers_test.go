package manager_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// TestListenersCloseSlowAndIdleConnections (issue 27 row 7): both API
// listeners of the manager apply Options.ServerLimits: a client trickling
// its body and a keep-alive connection left idle are closed within the
// configured timeouts. Before, only the header timeout was set and both
// stayed open for ever.
func TestListenersCloseSlowAndIdleConnections(t *testing.T) {
	// The package's manager runs with these limits (TestMain).
	env, limits := testenv.Use(t, env), serverLimits
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	apiAddr, err := env.Manager.APIAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	aggAddr, err := env.Manager.AggregatedAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const slack = 5 * time.Second
	dial := map[string]func() (net.Conn, error){
		"direct": func() (net.Conn, error) { return net.Dial("tcp", apiAddr) },
		"aggregated": func() (net.Conn, error) {
			return tls.Dial("tcp", aggAddr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test checks timeouts, not the certificate
		},
	}
	for name, dial := range dial {
		t.Run(name+" slow body", func(t *testing.T) {
			conn, err := dial()
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /monitors HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{")
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
						if _, err := conn.Write([]byte(" ")); err != nil {
							return
						}
					}
				}
			}()
			if !closedWithin(conn, limits.ReadTimeout+slack) {
				t.Fatal("a slow body was still being read after the read timeout")
			}
		})
		t.Run(name+" idle keep-alive", func(t *testing.T) {
			conn, err := dial()
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.Close {
				t.Fatalf("the server closed after the first answer (%d); nothing to test", resp.StatusCode)
			}
			if !closedWithin(conn, limits.IdleTimeout+slack) {
				t.Fatal("an idle keep-alive connection was still open after the idle timeout")
			}
		})
	}
}

// closedWithin reports whether the server closes conn within d; whatever it
// writes before is skipped.
func closedWithin(conn net.Conn, d time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return !errors.As(err, &ne) || !ne.Timeout()
}
