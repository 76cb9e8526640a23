package probes

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// connCounter is a loopback server that counts the connections it accepts.
type connCounter struct {
	*httptest.Server
	opened atomic.Int64
}

func newConnCounter(t *testing.T, h http.Handler, tls bool) *connCounter {
	c := &connCounter{}
	c.Server = httptest.NewUnstartedServer(h)
	c.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.opened.Add(1)
		}
	}
	if tls {
		c.StartTLS()
	} else {
		c.Start()
	}
	t.Cleanup(c.Close)
	return c
}

func reuseAssignment(id, url string, cfg monv1.HTTPConfig) probeapi.Assignment {
	a := httpAssignment(url, cfg)
	a.ID = id
	return a
}

// TestReuseConnection: with http.reuseConnection a monitor's checks share
// one kept-alive connection (its later checks measure no connect time and
// still report the certificate), each monitor its own; without it, or when
// the connection cannot carry another exchange (a truncated body, a
// response without framing, the server's Connection: close, a POST), every
// check opens its own; a connection the server closed while parked is
// replaced within the check.
func TestReuseConnection(t *testing.T) {
	mux := testMux()
	mux.HandleFunc("/close", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close")
		fmt.Fprint(w, "bye")
	})
	plain := newConnCounter(t, mux, false)
	secure := newConnCounter(t, mux, true)
	env := testEnv()
	env.RootCAs = x509.NewCertPool()
	env.RootCAs.AddCert(secure.Certificate())
	reuse := monv1.HTTPConfig{ReuseConnection: true, Keyword: "Hello"}

	checks := func(srv *connCounter, id, path string, cfg monv1.HTTPConfig, n int) []probeapi.Result {
		t.Helper()
		var out []probeapi.Result
		for range n {
			res := run(t, reuseAssignment(id, srv.URL+path, cfg), env)
			out = append(out, res)
		}
		return out
	}
	opened := func(srv *connCounter, before int64) int64 { return srv.opened.Load() - before }

	t.Run("one connection for a monitor's checks", func(t *testing.T) {
		before := plain.opened.Load()
		rs := checks(plain, "m-plain", "/text", reuse, 5)
		for i, res := range rs {
			wantStatus(t, res, probeapi.StatusUp)
			if i > 0 && res.Timings.ConnectMs != 0 {
				t.Errorf("check %d on a reused connection measured connect time %v", i, res.Timings.ConnectMs)
			}
		}
		if n := opened(plain, before); n != 1 {
			t.Fatalf("5 checks opened %d connections, want 1", n)
		}
		// Another monitor of the same URL has its own.
		checks(plain, "m-other", "/text", reuse, 2)
		if n := opened(plain, before); n != 2 {
			t.Fatalf("a second monitor opened %d connections in all, want 2", n)
		}
	})

	t.Run("TLS: the certificate of the handshake stays with the connection", func(t *testing.T) {
		before := secure.opened.Load()
		rs := checks(secure, "m-tls", "/text", reuse, 3)
		for _, res := range rs {
			wantStatus(t, res, probeapi.StatusUp)
			if res.TLS == nil || res.TLS.NotAfter.IsZero() {
				t.Fatalf("a reused TLS connection reported no certificate: %+v", res.TLS)
			}
		}
		if rs[1].Timings.TLSMs != 0 {
			t.Errorf("a reused connection measured a handshake: %v ms", rs[1].Timings.TLSMs)
		}
		if n := opened(secure, before); n != 1 {
			t.Fatalf("3 checks opened %d connections, want 1", n)
		}
	})

	t.Run("a new connection each time", func(t *testing.T) {
		kib := int32(1024)
		for name, c := range map[string]struct {
			path string
			cfg  monv1.HTTPConfig
		}{
			"off by default":    {"/text", monv1.HTTPConfig{}},
			"truncated body":    {"/huge", monv1.HTTPConfig{ReuseConnection: true, MaxResponseBytes: &kib}},
			"connection: close": {"/close", monv1.HTTPConfig{ReuseConnection: true}},
			"a POST":            {"/echo", monv1.HTTPConfig{ReuseConnection: true, Method: "POST", Body: "x"}},
		} {
			before := plain.opened.Load()
			for _, res := range checks(plain, "m-"+strings.ReplaceAll(name, " ", "-"), c.path, c.cfg, 3) {
				wantStatus(t, res, probeapi.StatusUp)
			}
			if n := opened(plain, before); n != 3 {
				t.Errorf("%s: 3 checks opened %d connections, want 3", name, n)
			}
		}
	})

	t.Run("a connection the server closed is replaced within the check", func(t *testing.T) {
		before := plain.opened.Load()
		checks(plain, "m-closed", "/text", reuse, 1)
		plain.CloseClientConnections()
		rs := checks(plain, "m-closed", "/text", reuse, 2)
		for _, res := range rs {
			wantStatus(t, res, probeapi.StatusUp)
		}
		if n := opened(plain, before); n != 2 {
			t.Fatalf("opened %d connections, want 2 (the first, and its replacement)", n)
		}
	})
}

// TestReuseNeedsFraming: a body that ends with the connection (no length,
// no chunks, HTTP/1.0) cannot carry another exchange.
func TestReuseNeedsFraming(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				buf := make([]byte, 4096)
				_, _ = c.Read(buf)
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nstreamed until close"))
				c.Close()
			}()
		}
	}()
	for range 3 {
		wantStatus(t, run(t, reuseAssignment("m-unframed", "http://"+ln.Addr().String()+"/", monv1.HTTPConfig{ReuseConnection: true}), testEnv()), probeapi.StatusUp)
	}
	if n := accepted.Load(); n != 3 {
		t.Fatalf("3 checks made %d connections, want 3", n)
	}
}

// TestReuseBounded: an agent parks at most maxParked connections; the
// checks of further monitors close theirs, as without reuse.
func TestReuseBounded(t *testing.T) {
	srv := newConnCounter(t, testMux(), false)
	t.Cleanup(func() {
		parked.Range(func(k, v any) bool {
			if parked.CompareAndDelete(k, v) {
				parkedCount.Add(-1)
				v.(*parkedConn).close()
			}
			return true
		})
	})
	env := testEnv()
	for i := range maxParked + 50 {
		res := run(t, reuseAssignment(fmt.Sprint("bounded-", i), srv.URL+"/text", monv1.HTTPConfig{ReuseConnection: true}), env)
		wantStatus(t, res, probeapi.StatusUp)
		if n := parkedCount.Load(); n > maxParked {
			t.Fatalf("%d connections parked, over the bound of %d", n, maxParked)
		}
	}
	if n := parkedCount.Load(); n != maxParked {
		t.Fatalf("%d connections parked after %d monitors, want the bound %d", n, maxParked+50, maxParked)
	}
}
