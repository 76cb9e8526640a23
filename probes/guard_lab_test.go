package probes

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/netguard/netguardtest"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
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
