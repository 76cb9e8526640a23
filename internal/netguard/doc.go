// Package netguard refuses connections to addresses a hosted monitoring
// service must never reach on behalf of its users: loopback, private
// (RFC 1918), link-local (including the 169.254.169.254 cloud metadata
// endpoint), Azure's WireServer (168.63.129.16, public address space),
// carrier-grade NAT, unique-local IPv6, unspecified and multicast
// addresses, and every IPv6 form that carries one of those IPv4 addresses
// to its destination (IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64,
// 6to4, Teredo, ISATAP).
//
// The check runs in a net.Dialer Control hook, that is on the IP address the
// socket is about to connect to after name resolution. A DNS record that
// changes between validation and dial (DNS rebinding) therefore cannot bypass
// it. CheckHost offers the same policy at validation time, for friendlier
// error messages when a monitor is created.
//
// A cluster setting (Guard.AllowPrivate) turns the guard off for in-cluster
// monitoring; dev mode enables it.
package netguard
