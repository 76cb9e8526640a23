package probes

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// maxUDPReply bounds the datagram read.
const maxUDPReply = 64 << 10

// udpDetails is Result.Details of udp checks.
type udpDetails struct {
	Address    string `json:"address"`
	ReplyBytes int    `json:"reply_bytes"`
	Silent     bool   `json:"silent,omitempty"`
}

func init() { register(checkUDP, monv1.MonitorUDP) }

// checkUDP sends the payload and waits for one reply until the timeout.
// A reply must match expected_response when set. No reply is unknown (UDP
// cannot tell a dropped packet from a silent service) unless silent_is_up;
// an ICMP port unreachable, seen as ECONNREFUSED on the connected socket,
// is down.
func checkUDP(ctx context.Context, a *probeapi.Assignment, env *Env) probeapi.Result {
	cfg := a.Config.UDP
	if cfg == nil {
		cfg = &monv1.UDPConfig{}
	}
	if cfg.Host == "" || cfg.Port < 1 || cfg.Port > 65535 {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, errors.New("host and port 1-65535 are required"))
	}
	payload, err := decodePayload(cfg.Payload, cfg.PayloadHex)
	if err != nil {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, err)
	}
	var re *regexp.Regexp
	if cfg.ExpectedResponse != "" {
		if re, err = regexp.Compile(cfg.ExpectedResponse); err != nil {
			return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, fmt.Errorf("compile expected_response: %w", err))
		}
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	start := time.Now()
	conn, err := env.dialer(probeapi.EffectiveTimeout(a)).DialContext(ctx, "udp", addr)
	if err != nil {
		return fromError(err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	d := udpDetails{Address: conn.RemoteAddr().String()}
	if _, err := conn.Write(payload); err != nil {
		return udpError(err, start)
	}
	buf := make([]byte, maxUDPReply)
	n, err := conn.Read(buf)
	elapsed := time.Since(start)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			d.Silent = true
			res := probeapi.Result{Status: probeapi.StatusUp, ResponseTimeMs: ms(elapsed), Details: details(d)}
			if !cfg.SilentIsUp {
				res.Status, res.ErrorType = probeapi.StatusUnknown, probeapi.ErrorNoResponse
				res.ErrorMessage = "no reply before the timeout"
			}
			return res
		}
		return udpError(err, start)
	}
	reply := buf[:n]
	d.ReplyBytes = n
	res := probeapi.Result{Status: probeapi.StatusUp, ResponseTimeMs: ms(elapsed), Details: details(d)}
	switch {
	case re != nil && !re.Match(reply):
		res.Status, res.ErrorType = probeapi.StatusDown, probeapi.ErrorResponseMismatch
		res.ErrorMessage = "reply does not match expected_response"
	}
	return res
}

func udpError(err error, start time.Time) probeapi.Result {
	res := fromError(err)
	if errors.Is(err, syscall.ECONNREFUSED) {
		res = failure(probeapi.StatusDown, probeapi.ErrorPortUnreachable, errors.New("port unreachable"))
	}
	res.ResponseTimeMs = ms(time.Since(start))
	return res
}

// decodePayload is the datagram to send: payload_hex decoded when set
// (spaces allowed between bytes), else payload as text.
func decodePayload(text, hexText string) ([]byte, error) {
	if hexText == "" {
		return []byte(text), nil
	}
	b, err := hex.DecodeString(strings.ReplaceAll(hexText, " ", ""))
	if err != nil {
		return nil, fmt.Errorf("decode payload_hex: %w", err)
	}
	return b, nil
}
