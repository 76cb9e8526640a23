package manager_test

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/clientip"
	"github.com/uptime-operator/uptime-operator/internal/httpserver"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// env is the control plane and manager the package's tests share (see
// package testenv). Tests of the manager's start-up (replicas, restarts,
// its RBAC) run managers of their own on the same control plane.
var env *testenv.Env

// serverLimits are the shared manager's listener timeouts, short enough
// for TestListenersCloseSlowAndIdleConnections to see them act.
var serverLimits = httpserver.Limits{ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond}

// metricsAddr is where the shared manager serves metrics, securely, with
// the per-monitor series (TestMetricsEndpointSecured).
var metricsAddr string

// TestMain starts one control plane and the real manager for the package,
// with what the tests of its options need: both API listeners with short
// timeouts, the loopback as a trusted proxy, secure metrics with the
// per-monitor series, private targets allowed.
func TestMain(m *testing.M) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	metricsAddr = ln.Addr().String()
	_ = ln.Close()
	testenv.Main(m, manager.Options{
		APIListen: "127.0.0.1:0", AggregatedListen: "127.0.0.1:0", ServerLimits: serverLimits,
		ClientAddresses: clientip.Resolver{Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		MetricsAddr:     metricsAddr, MetricsSecure: true, MonitorSeries: true,
		AllowPrivateTargets: true,
	}, func(e *testenv.Env) error { env = e; return nil })
}
