// Package hostname holds what several services need to know about a host
// name. Domain expiry watches a monitor's registrable domain and the site
// crawler keeps to the site's own: both ask Registrable, so they agree on
// what "the domain" of a host is.
package hostname

import (
	"net"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Registrable returns the domain under a public suffix that host belongs
// to (shop.example.co.uk → example.co.uk), or "" for IP literals,
// single-label names and public suffixes themselves.
func Registrable(host string) string {
	host = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
	if host == "" || net.ParseIP(host) != nil || !strings.Contains(host, ".") {
		return ""
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return ""
	}
	return d
}
