package probes

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

const (
	defaultPacketCount = 3
	maxPacketCount     = 10
	// maxPacketWait bounds the wait for one echo reply.
	maxPacketWait = 2 * time.Second
)

// pingDetails is Result.Details of ping checks.
type pingDetails struct {
	Address     string  `json:"address"`
	Socket      string  `json:"socket"`
	Sent        int     `json:"sent"`
	Received    int     `json:"received"`
	LossPercent float64 `json:"loss_percent"`
	RTTMinMs    float64 `json:"rtt_min_ms"`
	RTTAvgMs    float64 `json:"rtt_avg_ms"`
	RTTMaxMs    float64 `json:"rtt_max_ms"`
}

func init() { register(checkPing, monv1.MonitorPing) }

// checkPing sends packet_count ICMP echo requests (clamped to 1-10) and
// reports loss and round trips: all lost is down, some lost is degraded.
// It uses an unprivileged ICMP datagram socket when the kernel allows one
// (net.ipv4.ping_group_range) and a raw socket otherwise.
func checkPing(ctx context.Context, a *probeapi.Assignment, env *Env) probeapi.Result {
	cfg := a.Config.Ping
	if cfg == nil {
		cfg = &monv1.PingConfig{}
	}
	if cfg.Host == "" {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, errors.New("host is required"))
	}
	ip, err := resolveOne(ctx, cfg.Host)
	if err != nil {
		return fromError(err)
	}
	if err := env.Guard.CheckIP(ip); err != nil {
		return fromError(err)
	}
	conn, socket, err := listenICMP(ip.Is4())
	if err != nil {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInternal, err)
	}
	defer conn.Close()

	count := int(cfg.PacketCount)
	if count == 0 {
		count = defaultPacketCount
	}
	count = max(1, min(count, maxPacketCount))
	var dst net.Addr = &net.IPAddr{IP: ip.AsSlice()}
	if socket == "udp" {
		dst = &net.UDPAddr{IP: ip.AsSlice()}
	}
	d := pingDetails{Address: ip.String(), Socket: socket, Sent: count}
	id := rand.IntN(0xffff)
	seq0 := rand.IntN(0x7fff)
	var total time.Duration
	for i := range count {
		if ctx.Err() != nil {
			d.Sent = i
			break
		}
		rtt, ok, err := echo(ctx, conn, dst, ip, socket == "udp", id, (seq0+i)&0xffff)
		if err != nil {
			return failure(probeapi.StatusUnknown, probeapi.ErrorInternal, err)
		}
		if !ok {
			continue
		}
		r := fms(rtt)
		if d.Received == 0 || r < d.RTTMinMs {
			d.RTTMinMs = r
		}
		d.RTTMaxMs = max(d.RTTMaxMs, r)
		d.Received++
		total += rtt
	}
	if d.Sent > 0 {
		d.LossPercent = float64(d.Sent-d.Received) * 100 / float64(d.Sent)
	}
	res := probeapi.Result{Status: probeapi.StatusUp}
	if d.Received > 0 {
		avg := total / time.Duration(d.Received)
		d.RTTAvgMs = fms(avg)
		res.ResponseTimeMs = ms(avg)
	}
	switch {
	case d.Received == 0:
		res.Status, res.ErrorType = probeapi.StatusDown, probeapi.ErrorPacketLoss
		res.ErrorMessage = fmt.Sprintf("no echo reply to %d packets", d.Sent)
	case d.Received < count:
		res.Status, res.ErrorType = probeapi.StatusDegraded, probeapi.ErrorPacketLoss
		res.ErrorMessage = fmt.Sprintf("%.0f%% packet loss", d.LossPercent)
	}
	res.Details = details(d)
	return res
}

// resolveOne resolves host to one address, preferring IPv4.
func resolveOne(ctx context.Context, host string) (netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap(), nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, err
	}
	if len(addrs) == 0 {
		return netip.Addr{}, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	for _, a := range addrs {
		if a.Unmap().Is4() {
			return a.Unmap(), nil
		}
	}
	return addrs[0], nil
}

// listenICMP opens an unprivileged datagram ICMP socket or, failing that, a
// raw one.
func listenICMP(v4 bool) (*icmp.PacketConn, string, error) {
	dgram, raw, any := "udp4", "ip4:icmp", "0.0.0.0"
	if !v4 {
		dgram, raw, any = "udp6", "ip6:ipv6-icmp", "::"
	}
	c, err1 := icmp.ListenPacket(dgram, any)
	if err1 == nil {
		return c, "udp", nil
	}
	c, err2 := icmp.ListenPacket(raw, any)
	if err2 == nil {
		return c, "raw", nil
	}
	return nil, "", fmt.Errorf("open icmp socket: %w", errors.Join(err1, err2))
}

// echo sends one echo request and waits for its reply. ok is false when no
// reply arrived in time.
func echo(ctx context.Context, conn *icmp.PacketConn, dst net.Addr, ip netip.Addr, dgram bool, id, seq int) (time.Duration, bool, error) {
	var typ icmp.Type = ipv4.ICMPTypeEcho
	proto := 1
	if !ip.Is4() {
		typ, proto = ipv6.ICMPTypeEchoRequest, 58
	}
	payload := []byte("uptime-operator-probe")
	msg := icmp.Message{Type: typ, Body: &icmp.Echo{ID: id, Seq: seq, Data: payload}}
	b, err := msg.Marshal(nil)
	if err != nil {
		return 0, false, fmt.Errorf("marshal echo: %w", err)
	}
	deadline := time.Now().Add(maxPacketWait)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetReadDeadline(deadline)
	start := time.Now()
	if _, err := conn.WriteTo(b, dst); err != nil {
		return 0, false, fmt.Errorf("send echo: %w", err)
	}
	buf := make([]byte, 1500)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return 0, false, nil
			}
			return 0, false, fmt.Errorf("read echo reply: %w", err)
		}
		rtt := time.Since(start)
		m, err := icmp.ParseMessage(proto, buf[:n])
		if err != nil {
			continue
		}
		e, isEcho := m.Body.(*icmp.Echo)
		if !isEcho || (m.Type != ipv4.ICMPTypeEchoReply && m.Type != ipv6.ICMPTypeEchoReply) || e.Seq != seq {
			continue
		}
		// Datagram sockets rewrite the id and filter replies per socket;
		// raw sockets see every reply on the host.
		if !dgram && (e.ID != id || !sameIP(from, ip)) {
			continue
		}
		return rtt, true, nil
	}
}

func sameIP(a net.Addr, ip netip.Addr) bool {
	var b net.IP
	switch x := a.(type) {
	case *net.IPAddr:
		b = x.IP
	case *net.UDPAddr:
		b = x.IP
	}
	got, ok := netip.AddrFromSlice(b)
	return ok && got.Unmap() == ip.Unmap()
}
