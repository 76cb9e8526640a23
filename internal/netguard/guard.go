package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// BlockedError reports that a connection or host was refused because its
// address lies in a blocked range. Checks map it to the status "blocked".
type BlockedError struct {
	// Address is the refused IP address (without port).
	Address string
	// Reason names the blocked range, for example "loopback".
	Reason string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("address %s is blocked (%s)", e.Address, e.Reason)
}

// IsBlocked reports whether err is or wraps a *BlockedError.
func IsBlocked(err error) bool {
	var b *BlockedError
	return errors.As(err, &b)
}

// Guard decides which destination addresses may be dialed.
// The zero value blocks every non-public address.
type Guard struct {
	// AllowPrivate disables the guard so private, loopback and link-local
	// targets can be monitored (in-cluster monitoring, dev mode, tests).
	AllowPrivate bool
}

var blockedPrefixes = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade nat"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "ietf protocol assignments"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use nat64"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// Reason returns why ip is blocked, or "" when it is a public address.
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are judged as their IPv4 form.
func Reason(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid"
	}
	ip = ip.Unmap().WithZone("")
	if ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return "broadcast"
	}
	for _, b := range blockedPrefixes {
		if b.prefix.Contains(ip) {
			if ip.Is4() && ip == netip.AddrFrom4([4]byte{169, 254, 169, 254}) {
				return "cloud metadata"
			}
			return b.reason
		}
	}
	return ""
}

// CheckIP returns a *BlockedError when ip may not be dialed.
func (g Guard) CheckIP(ip netip.Addr) error {
	if g.AllowPrivate {
		return nil
	}
	if r := Reason(ip); r != "" {
		return &BlockedError{Address: ip.Unmap().String(), Reason: r}
	}
	return nil
}

// Control is a net.Dialer Control hook. It runs after name resolution on the
// exact address about to be connected, so it cannot be bypassed by DNS
// rebinding.
func (g Guard) Control(network, address string, _ syscall.RawConn) error {
	if g.AllowPrivate {
		return nil
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return &BlockedError{Address: host, Reason: "unparsable address"}
	}
	return g.CheckIP(ip)
}

// Dialer returns a net.Dialer whose connections pass through the guard.
func (g Guard) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: g.Control}
}

// CheckHost resolves host (a name or an IP literal) and returns a
// *BlockedError when any resolved address is blocked. It is meant for
// validation when a monitor is saved; the dial-time Control hook remains the
// enforcement point.
func (g Guard) CheckHost(ctx context.Context, host string) error {
	if g.AllowPrivate {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return g.CheckIP(ip)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", host, err)
	}
	for _, a := range addrs {
		if err := g.CheckIP(a); err != nil {
			return err
		}
	}
	return nil
}
