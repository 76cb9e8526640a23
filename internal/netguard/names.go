package netguard

import (
	"strings"
)

// internalSuffixes are DNS suffixes that only a resolver inside the cluster
// or the cloud network answers: the Kubernetes cluster domain and its
// services, the reserved private-use names (RFC 6762 .local, RFC 8375
// home.arpa, ICANN's .internal, which GCP and AWS use for instance names)
// and localhost. Custom cluster domains are caught by the resolver's own
// search list (see NameReason).
var internalSuffixes = []string{"cluster.local", "svc", "local", "localhost", "internal", "home.arpa"}

// NameReason returns why a DNS name may not be looked up through the
// probe's own (system) resolver, or "" when it may. That resolver is the
// cluster's: asked for kubernetes.default.svc.cluster.local it answers
// what only workloads in the cluster should know. A name is refused when it
// is, or lies under, one of the internal suffixes or one of the resolver's
// search domains (a Pod's resolv.conf lists <namespace>.svc.<cluster
// domain>, svc.<cluster domain> and <cluster domain>, whatever the cluster
// domain is, then the node's domains such as ec2.internal).
func NameReason(name string, search []string) string {
	n := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
	under := func(suffix string) bool {
		s := strings.ToLower(strings.Trim(strings.TrimSpace(suffix), "."))
		return s != "" && (n == s || strings.HasSuffix(n, "."+s))
	}
	for _, s := range internalSuffixes {
		if under(s) {
			return "internal name"
		}
	}
	for _, s := range search {
		if under(s) {
			return "internal name (resolver search domain " + strings.Trim(s, ".") + ")"
		}
	}
	return ""
}

// CheckName returns a *BlockedError when name may not be looked up through
// the probe's own resolver (NameReason).
func (g Guard) CheckName(name string, search []string) error {
	if g.AllowPrivate {
		return nil
	}
	if r := NameReason(name, search); r != "" {
		return &BlockedError{Address: strings.TrimSuffix(name, "."), Reason: r}
	}
	return nil
}
