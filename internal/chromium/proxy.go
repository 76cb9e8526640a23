package chromium

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/httpserver"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
)

// GuardProxy is a loopback HTTP proxy that dials through the address guard.
// A browser started with its URL as --proxy-server (see Options) sends all
// its traffic through it (CONNECT for https and wss), so every connection
// the browser makes is vetted where it is made, on the address actually
// dialled: DNS rebinding cannot get past it, and neither can a request the
// page makes behind the DevTools protocol's back (workers, prefetches,
// WebSockets).
type GuardProxy struct {
	ln   net.Listener
	srv  *http.Server
	dial *net.Dialer
	tr   *http.Transport

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	blocked []string
	// failed is the last dial error by host:port (at most maxFailedKept).
	failed map[string]error
}

// maxFailedKept bounds GuardProxy.failed.
const maxFailedKept = 50

// maxBlockedKept bounds GuardProxy.Blocked.
const maxBlockedKept = 20

// StartGuardProxy starts a proxy on a free loopback port whose dials g
// vets. Close stops it.
func StartGuardProxy(g netguard.Guard) (*GuardProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the browser proxy: %w", err)
	}
	p := &GuardProxy{ln: ln, dial: g.Dialer(10 * time.Second), conns: map[net.Conn]struct{}{}, failed: map[string]error{}}
	p.tr = &http.Transport{Proxy: nil, DialContext: p.dial.DialContext, TLSHandshakeTimeout: 10 * time.Second, IdleConnTimeout: 30 * time.Second}
	p.srv = httpserver.New(p, httpserver.Limits{})
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Blocked lists the guard's refusals so far ("host:port: reason"), the
// first maxBlockedKept of them.
func (p *GuardProxy) Blocked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.blocked)
}

// DialError is the error of the last failed connection to hostport
// (host:port), nil when none failed. A browser reports a failed tunnel
// without its cause; this is the cause (a refusal of the guard, a name
// that does not resolve, a refused connection).
func (p *GuardProxy) DialError(hostport string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed[hostport]
}

// refused records a failed dial: its error, and the guard's refusals.
func (p *GuardProxy) refused(hostport string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.failed[hostport]; ok || len(p.failed) < maxFailedKept {
		p.failed[hostport] = err
	}
	if netguard.IsBlocked(err) && len(p.blocked) < maxBlockedKept {
		p.blocked = append(p.blocked, hostport+": "+err.Error())
	}
}

// URL is the proxy's address for the browser's --proxy-server.
func (p *GuardProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *GuardProxy) Close() {
	_ = p.srv.Close()
	p.tr.CloseIdleConnections()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// track remembers tunnelled connections, so Close ends them.
func (p *GuardProxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
}

func (p *GuardProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Host == "" || (r.URL.Scheme != "http" && r.URL.Scheme != "ws") {
		http.Error(w, "proxy requests only", http.StatusBadRequest)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		p.refused(hostPort(r.URL.Host, "80"), err)
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func (p *GuardProxy) connect(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	up, err := p.dial.DialContext(ctx, "tcp", r.Host)
	if err != nil {
		p.refused(hostPort(r.Host, "443"), err)
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "hijacking not supported", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		_ = up.Close()
		_ = down.Close()
		return
	}
	p.track(up, down)
	go func() {
		if n := buf.Reader.Buffered(); n > 0 {
			b, _ := buf.Reader.Peek(n)
			_, _ = up.Write(b)
		}
		_, _ = io.Copy(up, down)
		_ = up.Close()
	}()
	go func() {
		_, _ = io.Copy(down, up)
		_ = down.Close()
	}()
}

// hostPort adds the default port to a host without one.
func hostPort(host, port string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}
