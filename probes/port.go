package probes

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// portDetails is Result.Details of port checks.
type portDetails struct {
	Address string `json:"address"`
	TLS     bool   `json:"tls,omitempty"`
}

func init() { register(checkPort, monv1.MonitorPort) }

// checkPort connects over TCP to host:port through the guard and, with
// tls set, completes a TLS handshake and reports the certificate.
func checkPort(ctx context.Context, a *probeapi.Assignment, env *Env) probeapi.Result {
	cfg := a.Config.Port
	if cfg == nil {
		cfg = &monv1.PortConfig{}
	}
	if cfg.Host == "" || cfg.Port < 1 || cfg.Port > 65535 {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, errors.New("host and port 1-65535 are required"))
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	start := time.Now()
	conn, err := env.dialer(probeapi.EffectiveTimeout(a)).DialContext(ctx, "tcp", addr)
	connected := time.Since(start)
	if err != nil {
		res := fromError(err)
		res.ResponseTimeMs = ms(connected)
		return res
	}
	defer conn.Close()
	res := probeapi.Result{Status: probeapi.StatusUp, Timings: &probeapi.Timings{ConnectMs: fms(connected)}}
	if cfg.TLS {
		tc := tls.Client(conn, env.tlsConfig(cfg.Host))
		tlsStart := time.Now()
		err := tc.HandshakeContext(ctx)
		res.Timings.TLSMs = fms(time.Since(tlsStart))
		if err != nil {
			out := fromError(err)
			if out.ErrorType == probeapi.ErrorConnection {
				out.ErrorType = probeapi.ErrorTLS
			}
			out.ResponseTimeMs, out.Timings = ms(time.Since(start)), res.Timings
			return out
		}
		cs := tc.ConnectionState()
		res.TLS = tlsInfo(&cs)
	}
	res.ResponseTimeMs = ms(time.Since(start))
	res.Details = details(portDetails{Address: conn.RemoteAddr().String(), TLS: cfg.TLS})
	return res
}
