package clientip

import (
	"net/http"
	"net/netip"
)

// Bucket is the key a per-address limit counts r under: the client address
// (From), with IPv6 addresses grouped by /64, since one host usually holds
// a whole /64 and could otherwise take a fresh bucket per request.
func Bucket(r *http.Request) string {
	raw := From(r)
	addr, err := netip.ParseAddr(raw)
	if err != nil {
		return raw
	}
	if addr.Is6() && !addr.Is4In6() {
		if pfx, err := addr.Prefix(64); err == nil {
			return pfx.String()
		}
	}
	return addr.Unmap().String()
}
