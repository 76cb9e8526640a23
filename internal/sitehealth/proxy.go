package sitehealth

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/httpserver"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
)

// guardProxy is a loopback HTTP proxy that dials through the address guard.
// The audited browser sends all its traffic through it (CONNECT for https),
// so the browser reaches only the addresses the crawler may reach.
type guardProxy struct {
	ln   net.Listener
	srv  *http.Server
	dial *net.Dialer
	tr   *http.Transport

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func startGuardProxy(g netguard.Guard) (*guardProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &guardProxy{ln: ln, dial: g.Dialer(10 * time.Second), conns: map[net.Conn]struct{}{}}
	p.tr = &http.Transport{Proxy: nil, DialContext: p.dial.DialContext, TLSHandshakeTimeout: 10 * time.Second, IdleConnTimeout: 30 * time.Second}
	p.srv = httpserver.New(p, httpserver.Limits{})
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the proxy's address for the browser's --proxy-server.
func (p *guardProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *guardProxy) Close() {
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
func (p *guardProxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
}

func (p *guardProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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

func (p *guardProxy) connect(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	up, err := p.dial.DialContext(ctx, "tcp", r.Host)
	if err != nil {
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
