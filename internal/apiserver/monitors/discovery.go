package monitors

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Subdomain discovery. The hosted service reads certificate-transparency
// logs; the operator runs without access to them, so it resolves a fixed
// list of common names under the domain instead and says so in the answer.

// commonSubdomains are the names tried, most likely first.
var commonSubdomains = []string{
	"www", "api", "app", "mail", "status", "admin", "blog", "shop", "store", "docs",
	"dev", "staging", "test", "beta", "portal", "dashboard", "auth", "login", "sso", "id",
	"account", "accounts", "cdn", "static", "assets", "media", "img", "images", "files", "download",
	"m", "mobile", "web", "webmail", "smtp", "imap", "pop", "mx", "ns1", "ns2",
	"vpn", "remote", "git", "gitlab", "jenkins", "ci", "grafana", "monitor", "support", "help",
	"forum", "community", "news", "events", "careers", "partners", "pay", "billing", "search", "ws",
}

// Bounds of a discovery run.
const (
	discoveryConcurrency = 8
	discoveryLookup      = 2 * time.Second
	discoveryTotal       = 10 * time.Second
)

var hostnameLabelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// normalizeDomain lower-cases d, drops a trailing dot and reports whether it
// is a hostname of at least two labels.
func normalizeDomain(d string) (string, bool) {
	d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
	if len(d) == 0 || len(d) > 253 {
		return d, false
	}
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return d, false
	}
	for _, l := range labels {
		if !hostnameLabelRE.MatchString(l) {
			return d, false
		}
	}
	return d, true
}

// usableAddrs keeps the addresses a monitor may target: public ones, or all
// with allowPrivate. The result is sorted.
func usableAddrs(addrs []netip.Addr, allowPrivate bool) []string {
	out := []string{}
	for _, a := range addrs {
		if allowPrivate || netguard.Reason(a) == "" {
			out = append(out, a.Unmap().String())
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// discoverSubdomains answers GET /monitors/discover-subdomains?domain=. It
// looks the common names up with bounded concurrency and a short timeout and
// returns those that resolve to addresses a monitor may target. When the
// domain has a wildcard record, names answering exactly the wildcard's
// addresses are left out. Limited to 20 per 15 minutes per workspace.
func (h *Handlers) discoverSubdomains(w http.ResponseWriter, r *http.Request) {
	domain, ok := normalizeDomain(r.URL.Query().Get("domain"))
	if !ok {
		core.WriteValidation(w, core.FieldErr("domain", "must be a domain name such as example.com"))
		return
	}
	res := h.resolver
	if res == nil {
		res = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(r.Context(), discoveryTotal)
	defer cancel()
	lookup := func(host string) []string {
		lctx, lcancel := context.WithTimeout(ctx, discoveryLookup)
		defer lcancel()
		addrs, err := res.LookupNetIP(lctx, "ip", host)
		if err != nil {
			return nil
		}
		return usableAddrs(addrs, h.allowPrivateTargets)
	}
	// A random label shows whether the zone answers every name.
	probe := make([]byte, 8)
	_, _ = rand.Read(probe)
	wildcard := lookup("uo-" + hex.EncodeToString(probe) + "." + domain)

	found := make([][]string, len(commonSubdomains))
	sem := make(chan struct{}, discoveryConcurrency)
	var wg sync.WaitGroup
	for i, name := range commonSubdomains {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			found[i] = lookup(name + "." + domain)
		})
	}
	wg.Wait()
	out := []restapi.Subdomain{}
	for i, addrs := range found {
		if len(addrs) == 0 || (len(wildcard) > 0 && slices.Equal(addrs, wildcard)) {
			continue
		}
		host := commonSubdomains[i] + "." + domain
		out = append(out, restapi.Subdomain{Hostname: host, Addresses: addrs, SuggestedURL: "https://" + host})
	}
	scope := "public addresses"
	if h.allowPrivateTargets {
		scope = "any address (private targets are allowed)"
	}
	httpjson.Write(w, http.StatusOK, restapi.Subdomains{
		Domain:                  domain,
		Subdomains:              out,
		NamesChecked:            len(commonSubdomains),
		WildcardDNS:             len(wildcard) > 0,
		TimedOut:                ctx.Err() != nil,
		Sources:                 []string{"dns"},
		CertificateTransparency: false,
		Note: fmt.Sprintf("Found by resolving %d common names under %s with the operator's resolver, keeping names that resolve to %s. "+
			"Certificate-transparency logs are not used, so names outside the list are not found.", len(commonSubdomains), domain, scope),
	})
}
