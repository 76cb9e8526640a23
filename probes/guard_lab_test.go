package probes

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/netguard/netguardtest"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

// TestHTTPAndMCPGuardTrickyTargets runs the HTTP check and the MCP check
// against every hostile target of the guard's lab: each is reported as
// blocked and never reached; the public addresses are reached.
func TestHTTPAndMCPGuardTrickyTargets(t *testing.T) {
	lab := netguardtest.Start(t)
	if lab == nil {
		return
	}
	for _, typ := range []string{probeapi.TypeHTTP, probeapi.TypeMCP} {
		t.Run(typ, func(t *testing.T) {
			lab.Check(t, func(url string) (bool, string) {
				res := run(t, probeapi.Assignment{Type: typ, URL: url, TimeoutMs: 3000}, &Env{Region: "test"})
				return res.Status == probeapi.StatusBlocked, string(res.Status) + ": " + res.ErrorMessage
			})
		})
	}
}

// TestGRPCAndWebSocketGuardTrickyTargets runs the grpc and websocket checks
// against every hostile target of the guard's lab, and a websocket
// handshake that a public address redirects to a private one: each is
// reported as blocked and never reached; the public addresses are reached
// (the lab answers them with plain HTTP, so those checks are down, not
// blocked).
func TestGRPCAndWebSocketGuardTrickyTargets(t *testing.T) {
	lab := netguardtest.Start(t)
	if lab == nil {
		return
	}
	env := &Env{Region: "test"}
	t.Run("grpc", func(t *testing.T) {
		lab.Check(t, func(u string) (bool, string) {
			res := runGRPC(t, env, grpcParams{Target: strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/"), Plaintext: true}, 3*time.Second)
			return res.Status == probeapi.StatusBlocked, string(res.Status) + ": " + res.ErrorMessage
		})
	})
	t.Run("websocket", func(t *testing.T) {
		lab.Check(t, func(u string) (bool, string) {
			res := runWS(t, env, wsParams{URL: "ws" + strings.TrimPrefix(u, "http"), Message: "x"}, 3*time.Second)
			return res.Status == probeapi.StatusBlocked, string(res.Status) + ": " + res.ErrorMessage
		})
	})
	t.Run("websocket redirect", func(t *testing.T) {
		private := startWS(t)
		ln, err := net.Listen("tcp", net.JoinHostPort(netguardtest.Allowed[0], "0"))
		if err != nil {
			t.Fatal(err)
		}
		public := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, private.URL+"/echo", http.StatusFound)
		}), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = public.Serve(ln) }()
		defer public.Close()
		res := runWS(t, env, wsParams{URL: "ws://" + ln.Addr().String() + "/", Message: "x"}, 3*time.Second)
		wantError(t, res, probeapi.StatusBlocked, probeapi.ErrorBlocked, "loopback")
		if n := private.Upgrades.Load(); n != 0 {
			t.Fatalf("the private server upgraded %d connections", n)
		}
	})
}

// TestBrowserGuardPrivateRequests serves a page on a public address of the
// guard's lab that loads an image from a private address and fetches
// another: with a local Chromium (through the guard proxy) and with a
// remote one (through request interception) neither private address is
// reached, the refusals are reported, and the page itself still checks up.
// A page on a private address is blocked before the browser loads it.
func TestBrowserGuardPrivateRequests(t *testing.T) {
	lab := netguardtest.Start(t)
	if lab == nil {
		return
	}
	ln, err := net.Listen("tcp", "93.184.216.34:0")
	if err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf(`<!doctype html><html><body><div id="app"></div><img src="%s">
<script>fetch(%q).catch(() => {}); document.getElementById('app').textContent = 'Rendered';</script></body></html>`,
		lab.URL("10.0.0.1", "/pixel.png"), lab.URL("192.168.0.1", "/api"))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(page)) }), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	pageURL := "http://" + ln.Addr().String() + "/"

	local := &Env{Region: "test", Browsers: &Browsers{Path: testutil.Chromium(t)}}
	remoteEnv := &Env{Region: "test", Browsers: &Browsers{}}
	remoteEnv.Browsers.Configure(&probeapi.RegionBrowser{Endpoint: remoteBrowser(t)})
	for name, env := range map[string]*Env{"local": local, "remote": remoteEnv} {
		t.Run(name, func(t *testing.T) {
			res := run(t, probeapi.Assignment{Type: string(monv1.MonitorBrowser), URL: pageURL, TimeoutMs: 30000, Config: monv1.MonitorSpec{
				Browser: &monv1.BrowserConfig{WaitForText: "Rendered", Steps: []monv1.BrowserStep{
					// Both private requests have been answered (refused) by now.
					{Action: monv1.BrowserEvaluate, Expression: "new Promise((r) => setTimeout(() => r(true), 500))"},
				}}}}, env)
			wantStatus(t, res, probeapi.StatusUp)
			d := browserDetailsOf(t, res)
			joined := strings.Join(d.BlockedRequests, " | ")
			if !strings.Contains(joined, "10.0.0.1") || !strings.Contains(joined, "192.168.0.1") {
				t.Errorf("blocked requests %q, want both private addresses", d.BlockedRequests)
			}
			for _, addr := range []string{"10.0.0.1", "192.168.0.1"} {
				if n := lab.Reached(addr); n != 0 {
					t.Errorf("%s was reached %d times", addr, n)
				}
			}
			res = run(t, probeapi.Assignment{Type: string(monv1.MonitorBrowser), URL: lab.URL("10.0.0.1", "/"), TimeoutMs: 30000}, env)
			wantStatus(t, res, probeapi.StatusBlocked)
		})
	}
}
