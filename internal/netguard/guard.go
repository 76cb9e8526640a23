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
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// cloudMetadata are the cloud platforms' instance endpoints that hand out
// credentials, identity tokens or VM configuration to whoever on the machine
// asks. 169.254.169.254 (AWS, GCP, Azure IMDS, OpenStack, ...) is also
// link-local; Azure's WireServer 168.63.129.16 is in public address space,
// so no range would block it.
var cloudMetadata = map[netip.Addr]bool{
	netip.AddrFrom4([4]byte{169, 254, 169, 254}): true,
	netip.AddrFrom4([4]byte{168, 63, 129, 16}):   true,
}

// Prefixes of IPv6 addresses that carry an IPv4 address a packet to them
// ends up at: a NAT64 translator, a 6to4 or Teredo relay, or a host that
// still speaks the deprecated IPv4-compatible form delivers it to that IPv4
// address. They are judged by the IPv4 rules, so an IPv6-only cluster with
// NAT64 cannot be pointed at 64:ff9b::10.0.0.1 to reach a private address.
var (
	nat64WellKnown  = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour       = netip.MustParsePrefix("2002::/16")
	teredo          = netip.MustParsePrefix("2001::/32")
	ipv4Compatible  = netip.MustParsePrefix("::/96")
	ipv4Translated  = netip.MustParsePrefix("::ffff:0:0:0/96")
	localUseNAT64   = netip.MustParsePrefix("64:ff9b:1::/48")
	isatapInterface = [4]byte{0x00, 0x00, 0x5e, 0xfe}
)

// EmbeddedIPv4 returns the IPv4 address that an IPv6 address carries, and
// the name of the form, when ip is one of the forms that deliver to it:
// IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d),
// IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4
// (2002:aabb:ccdd::/48), Teredo (2001:0::/32, the client address XOR'ed in
// the last 32 bits) and ISATAP interface identifiers (…:0:5efe:a.b.c.d and
// …:200:5efe:a.b.c.d). The local-use NAT64 prefix 64:ff9b:1::/48 is not
// unwrapped: where its IPv4 address sits depends on the operator's prefix
// length, so Reason blocks it whole.
func EmbeddedIPv4(ip netip.Addr) (netip.Addr, string, bool) {
	if !ip.Is6() {
		return netip.Addr{}, "", false
	}
	ip = ip.WithZone("")
	b := ip.As16()
	last4 := func() netip.Addr { return netip.AddrFrom4([4]byte(b[12:16])) }
	switch {
	case ip.Is4In6():
		return ip.Unmap(), "ipv4-mapped", true
	case ipv4Translated.Contains(ip):
		return last4(), "ipv4-translated", true
	case ip == netip.IPv6Unspecified() || ip == netip.IPv6Loopback():
		// :: and ::1 are IPv6 addresses of their own, not 0.0.0.0/0.0.0.1.
		return netip.Addr{}, "", false
	case ipv4Compatible.Contains(ip):
		return last4(), "ipv4-compatible", true
	case nat64WellKnown.Contains(ip):
		return last4(), "nat64", true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), "6to4", true
	case teredo.Contains(ip):
		return netip.AddrFrom4([4]byte{b[12] ^ 0xff, b[13] ^ 0xff, b[14] ^ 0xff, b[15] ^ 0xff}), "teredo", true
	case [4]byte(b[8:12]) == isatapInterface || [4]byte(b[8:12]) == [4]byte{0x02, 0x00, 0x5e, 0xfe}:
		return last4(), "isatap", true
	}
	return netip.Addr{}, "", false
}

// Reason returns why ip is blocked, or "" when it is a public address. IPv6
// forms that carry an IPv4 address (see EmbeddedIPv4) are blocked when
// either the IPv6 address or the IPv4 address it carries is, and the reason
// names the form ("loopback via nat64").
func Reason(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid"
	}
	ip = ip.WithZone("")
	if localUseNAT64.Contains(ip) {
		return "local-use nat64"
	}
	if r := reason(ip.Unmap()); r != "" {
		return r
	}
	if v4, form, ok := EmbeddedIPv4(ip); ok {
		r := reason(v4)
		if r == "" || form == "ipv4-mapped" {
			return r
		}
		return r + " via " + form
	}
	return reason(ip)
}

// reason judges a plain IPv4 or IPv6 address against the blocked ranges.
func reason(ip netip.Addr) string {
	if ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return "broadcast"
	}
	if cloudMetadata[ip] {
		return "cloud metadata"
	}
	for _, b := range blockedPrefixes {
		if b.prefix.Contains(ip) {
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
