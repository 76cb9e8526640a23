package probes

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// Connection reuse (http.reuseConnection): the connection a check's final
// response came on is parked here, one per monitor and origin, and the
// monitor's next check to that origin sends its request on it instead of
// dialing. A connection is parked only when its response was read to the
// end of its framing (the next response starts exactly after it) and the
// server did not ask to close it; it was dialed through the guard like any
// other, and it is keyed by monitor, so it carries one monitor's requests
// only. Parked connections idle longer than reuseIdle are closed.

// reuseIdle is how long a parked connection waits for its next check:
// longer than the intervals reuse is for, shorter than most servers'
// idle timeouts are not (a connection the server closed is replaced).
const reuseIdle = 2 * time.Minute

// parkedConn is an idle kept-alive connection with its reader (which may
// hold nothing yet: the previous response was read to its end) and the
// certificate of the handshake that opened it.
type parkedConn struct {
	conn net.Conn
	br   *bufio.Reader
	tls  *probeapi.TLSInfo
	at   time.Time
}

// maxParked bounds the parked connections of an agent: each holds a file
// descriptor on both ends, and a target that runs out of them stops
// accepting (a benchmark of 20,000 reusing monitors against one loopback
// server did). Beyond it a check's connection is closed as without reuse.
const maxParked = 1024

var (
	parked      sync.Map // reuse key → *parkedConn
	parkedCount atomic.Int64
	sweepParked sync.Once
)

// reuseKey is the key of a check's connections to the origin of u, or ""
// when the check does not reuse connections.
func (s *httpSession) reuseKey(u *url.URL) string {
	if s.reuse == "" {
		return ""
	}
	origin, _ := probeapi.URLOrigin(u)
	return s.reuse + " " + origin
}

// takeParked returns the parked connection of key, if one is still fresh;
// it is the caller's from then on.
func takeParked(key string) *parkedConn {
	if key == "" {
		return nil
	}
	v, ok := parked.LoadAndDelete(key)
	if !ok {
		return nil
	}
	parkedCount.Add(-1)
	p := v.(*parkedConn)
	if time.Since(p.at) > reuseIdle {
		p.close()
		return nil
	}
	return p
}

// park keeps p for the next check of key, closing a connection parked
// there meanwhile (two checks of one monitor overlapped).
func park(key string, p *parkedConn) {
	sweepParked.Do(func() { go sweepLoop() })
	if parkedCount.Add(1) > maxParked {
		parkedCount.Add(-1)
		p.close()
		return
	}
	p.at = time.Now()
	if old, loaded := parked.Swap(key, p); loaded {
		parkedCount.Add(-1)
		old.(*parkedConn).close()
	}
}

func (p *parkedConn) close() {
	_ = p.conn.Close()
	p.br.Reset(nil)
	bufReaders.Put(p.br)
}

// sweepLoop closes parked connections no check took within reuseIdle (a
// deleted monitor's, one whose interval grew).
func sweepLoop() {
	for range time.Tick(reuseIdle / 2) {
		parked.Range(func(k, v any) bool {
			if p := v.(*parkedConn); time.Since(p.at) > reuseIdle && parked.CompareAndDelete(k, v) {
				parkedCount.Add(-1)
				p.close()
			}
			return true
		})
	}
}

// reusable reports whether resp's connection may carry the next request:
// the body was read to the end of its framing (a length or chunks, so the
// next response starts right after it) and neither side asked to close.
func reusable(resp *http.Response, body io.Reader) bool {
	if resp.Close || (resp.ContentLength < 0 && !slices.Contains(resp.TransferEncoding, "chunked")) {
		return false
	}
	var one [1]byte
	n, err := body.Read(one[:])
	return n == 0 && errors.Is(err, io.EOF)
}

// reuseMethod reports whether requests of method with body may go on a
// reused connection: a request that fails there because the server closed
// it meanwhile is sent again on a new one, which only an idempotent
// request without a body may be.
func reuseMethod(method, body string) bool {
	m := strings.ToUpper(method)
	return body == "" && (m == "" || m == http.MethodGet || m == http.MethodHead)
}
