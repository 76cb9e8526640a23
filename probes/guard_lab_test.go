package probes

import (
	"testing"

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
