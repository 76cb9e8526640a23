// Package clientip finds the address of the client that sent a request, the
// key of every per-address limit (invalid API keys, failed heartbeat pings,
// public status pages and their sign-in form, confirmation links, monitor
// writes, stats).
//
// Behind an Ingress or Gateway every connection comes from the proxy, so
// the TCP peer would put all clients in one bucket: one client's bad keys
// would block everyone. A proxy appends the address it received a
// connection from to X-Forwarded-For (or Forwarded), so the list reads
// client, proxy 1, proxy 2, … from left to right, and only its right end is
// written by proxies we trust; anything further left may be forged by the
// client. The client address is therefore the right-most address of that
// list that is not itself a trusted proxy, and the header is read only when
// the TCP peer is a trusted proxy. With no trusted proxies (the default) the
// header is ignored and the peer is the client.
package clientip

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// The headers a proxy may append the client address to.
const (
	// HeaderXForwardedFor is the de facto standard that ingress-nginx,
	// Envoy (Gateway API implementations), Traefik and cloud load balancers
	// write.
	HeaderXForwardedFor = "X-Forwarded-For"
	// HeaderForwarded is RFC 7239; its for= parameters are read.
	HeaderForwarded = "Forwarded"
)

// Resolver finds client addresses. The zero value trusts no proxy.
type Resolver struct {
	// Trusted are the networks of the proxies in front of the listener.
	Trusted []netip.Prefix
	// Header is the one header the proxies write: HeaderXForwardedFor when
	// empty. Only one is read, because a proxy that appends to one passes
	// the other through unchanged, and a forged value in it would win.
	Header string
}

// ParsePrefixes reads a list of CIDRs; a bare address is its own /32 or
// /128. Empty entries are skipped.
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.Contains(s, "/") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q is not an address or CIDR: %w", s, err)
			}
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is not a CIDR: %w", s, err)
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(0, p.Bits()-96))
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// ParseHeader checks a header name given on the command line.
func ParseHeader(s string) (string, error) {
	switch {
	case s == "" || strings.EqualFold(s, HeaderXForwardedFor):
		return HeaderXForwardedFor, nil
	case strings.EqualFold(s, HeaderForwarded):
		return HeaderForwarded, nil
	}
	return "", fmt.Errorf("forwarded header %q: use %s or %s", s, HeaderXForwardedFor, HeaderForwarded)
}

func (res Resolver) trusted(a netip.Addr) bool {
	for _, p := range res.Trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Resolve returns the client address of r: the TCP peer, or, when the peer
// is a trusted proxy, the right-most address of the forwarding header that
// is not a trusted proxy. When the walk meets an entry that is not an
// address (unknown, an obfuscated name, garbage) it stops at the last
// trusted hop: nothing left of it can be believed.
func (res Resolver) Resolve(r *http.Request) netip.Addr {
	peer := peerAddr(r)
	if !peer.IsValid() || len(res.Trusted) == 0 || !res.trusted(peer) {
		return peer
	}
	hops := res.hops(r)
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			return client
		}
		client = a
		if !res.trusted(a) {
			return a
		}
	}
	// Every hop is a trusted address: the left-most is the client.
	return client
}

// hops lists the forwarding header's entries, left to right, across every
// line of the header.
func (res Resolver) hops(r *http.Request) []string {
	var out []string
	if res.Header == HeaderForwarded {
		for _, line := range r.Header.Values(HeaderForwarded) {
			for _, elem := range strings.Split(line, ",") {
				v := ""
				for _, pair := range strings.Split(elem, ";") {
					k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
					if ok && strings.EqualFold(k, "for") {
						v = strings.Trim(val, `"`)
					}
				}
				// An element without for= still stands for a hop.
				out = append(out, v)
			}
		}
		return out
	}
	for _, line := range r.Header.Values(HeaderXForwardedFor) {
		for _, v := range strings.Split(line, ",") {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// parseHop reads one entry: an address, optionally with a port, IPv6 in
// brackets when it has one.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

func peerAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}

type ctxKey struct{}

// Middleware resolves the client address of each request once and keeps it
// in the request's context for From.
func (res Resolver) Middleware(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(WithAddr(r.Context(), res.Resolve(r))))
	})
}

// WithAddr returns ctx carrying a as the client address (the manager's
// in-process MCP calls pass on the address of the MCP client).
func WithAddr(ctx context.Context, a netip.Addr) context.Context {
	return context.WithValue(ctx, ctxKey{}, a)
}

// From is the client address of r as every per-address limit counts it:
// the address Middleware resolved, else the TCP peer (a handler served
// without the middleware trusts no proxy). An unparsable peer is returned
// as written.
func From(r *http.Request) string {
	if a, ok := r.Context().Value(ctxKey{}).(netip.Addr); ok && a.IsValid() {
		return a.String()
	}
	if a := peerAddr(r); a.IsValid() {
		return a.String()
	}
	return r.RemoteAddr
}
