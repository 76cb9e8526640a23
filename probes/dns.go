package probes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// dnsRecordTypes are the record types dns monitors may query.
var dnsRecordTypes = map[string]uint16{
	"A": dns.TypeA, "AAAA": dns.TypeAAAA, "CNAME": dns.TypeCNAME, "MX": dns.TypeMX, "NS": dns.TypeNS,
	"TXT": dns.TypeTXT, "SOA": dns.TypeSOA, "CAA": dns.TypeCAA, "SRV": dns.TypeSRV,
}

// dnsDetails is Result.Details of dns checks. Answers are normalized and
// sorted so the manager can keep a record history and diff it.
type dnsDetails struct {
	Name       string   `json:"name"`
	RecordType string   `json:"record_type"`
	Resolver   string   `json:"resolver"`
	Protocol   string   `json:"protocol"`
	Rcode      string   `json:"rcode,omitempty"`
	Answers    []string `json:"answers"`
}

func init() { register(checkDNS, monv1.MonitorDNS) }

// checkDNS queries one record type of a name and compares the answers with
// expected_values (match any, all or exact).
//
// NXDOMAIN, SERVFAIL, REFUSED and empty answers are down. When the resolver
// cannot be reached the verdict depends on who chose it: a resolver named in
// the monitor is the thing being monitored, so it is down; the probe's own
// system resolver (resolv.conf) failing says nothing about the target, so the
// check is unknown and the region abstains. The system resolver is
// infrastructure of the probe and is not subject to the address guard; a
// chosen resolver is. The system resolver is the cluster's, though, and
// knows names only workloads inside should see: with the guard on, a name
// it may not be asked about (netguard.NameReason: the cluster domain, its
// search domains, .internal, .local) is blocked before the query, and so is
// an answer that names an internal host or an address the guard refuses,
// without its records.
func checkDNS(ctx context.Context, a *probeapi.Assignment, env *Env) probeapi.Result {
	cfg := a.Config.DNS
	if cfg == nil {
		cfg = &monv1.DNSConfig{}
	}
	rt := strings.ToUpper(string(cfg.RecordType))
	if rt == "" {
		rt = "A"
	}
	qtype, ok := dnsRecordTypes[rt]
	name := cfg.Name
	if !ok || name == "" {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, fmt.Errorf("a name and a record type among A, AAAA, CNAME, MX, NS, TXT, SOA, CAA, SRV are required"))
	}
	proto := strings.ToLower(cfg.Protocol)
	if proto == "" {
		proto = "udp"
	}
	if proto != "udp" && proto != "tcp" {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, fmt.Errorf("protocol must be udp or tcp"))
	}
	timeout := probeapi.EffectiveTimeout(a)
	var (
		servers []string
		dialer  *net.Dialer
		// search is the system resolver's search list; nil for a chosen
		// resolver, whose answers are the monitored public data.
		search []string
	)
	chosen := cfg.Resolver != ""
	if chosen {
		server := cfg.Resolver
		if _, _, err := net.SplitHostPort(server); err != nil {
			server = net.JoinHostPort(server, "53")
		}
		servers, dialer = []string{server}, env.dialer(timeout)
	} else {
		path := env.SystemResolverConf
		if path == "" {
			path = "/etc/resolv.conf"
		}
		conf, err := dns.ClientConfigFromFile(path)
		if err != nil || len(conf.Servers) == 0 {
			return failure(probeapi.StatusUnknown, probeapi.ErrorDNS, fmt.Errorf("read system resolver configuration: %w", errors.Join(err, errors.New("no nameservers"))))
		}
		for _, s := range conf.Servers {
			servers = append(servers, net.JoinHostPort(s, conf.Port))
		}
		dialer = &net.Dialer{Timeout: timeout}
		search = append([]string{}, conf.Search...)
		if err := env.Guard.CheckName(name, search); err != nil {
			return fromError(err)
		}
	}

	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = true
	m.SetEdns0(4096, false)
	d := dnsDetails{Name: name, RecordType: rt, Protocol: proto, Answers: []string{}}
	start := time.Now()
	var (
		r   *dns.Msg
		err error
	)
	for _, server := range servers {
		d.Resolver = server
		r, err = exchange(ctx, m, server, proto, dialer)
		if err == nil || netguardBlocked(err) || ctx.Err() != nil {
			break
		}
	}
	elapsed := time.Since(start)
	if err != nil {
		res := fromError(err)
		if res.Status == probeapi.StatusDown || res.Status == probeapi.StatusUnknown {
			res.ErrorType = probeapi.ErrorDNS
			res.Status = map[bool]probeapi.Status{true: probeapi.StatusDown, false: probeapi.StatusUnknown}[chosen]
		}
		res.ErrorMessage = "query resolver: " + res.ErrorMessage
		res.ResponseTimeMs = ms(elapsed)
		res.Details = details(d)
		return res
	}
	d.Rcode = dns.RcodeToString[r.Rcode]
	if !chosen {
		if err := guardAnswers(env.Guard, name, r, search); err != nil {
			res := fromError(err)
			res.ResponseTimeMs = ms(elapsed)
			res.Details = details(d)
			return res
		}
	}
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == qtype {
			d.Answers = append(d.Answers, normalizeRR(rr))
		}
	}
	slices.Sort(d.Answers)
	d.Answers = slices.Compact(d.Answers)
	res := probeapi.Result{Status: probeapi.StatusUp, ResponseTimeMs: ms(elapsed), Details: details(d)}
	switch {
	case r.Rcode != dns.RcodeSuccess:
		res.Status, res.ErrorType, res.ErrorMessage = probeapi.StatusDown, probeapi.ErrorDNS, "resolver answered "+d.Rcode
	case len(d.Answers) == 0:
		res.Status, res.ErrorType, res.ErrorMessage = probeapi.StatusDown, probeapi.ErrorDNSAnswer, "no "+rt+" records"
	case len(cfg.ExpectedValues) > 0 && !matchValues(d.Answers, normalizeExpected(cfg.ExpectedValues, qtype), string(cfg.MatchMode)):
		res.Status, res.ErrorType = probeapi.StatusDown, probeapi.ErrorDNSAnswer
		res.ErrorMessage = fmt.Sprintf("answers %s do not match expected values (%s)", truncateString(strings.Join(d.Answers, ", "), 200), matchMode(string(cfg.MatchMode)))
	}
	return res
}

// guardAnswers refuses an answer of the system resolver for name that
// carries an address the guard blocks or names an internal host (a CNAME,
// NS, MX, SRV or SOA into the cluster). The error names the kind of
// address, not the address: the answer is what must not leak.
func guardAnswers(g netguard.Guard, name string, r *dns.Msg, search []string) error {
	withheld := func(err error) error {
		var b *netguard.BlockedError
		if errors.As(err, &b) {
			return &netguard.BlockedError{Address: strings.TrimSuffix(name, "."), Reason: "the resolver's answer is " + b.Reason + "; answers withheld"}
		}
		return err
	}
	for _, rr := range r.Answer {
		var (
			ip    net.IP
			names []string
		)
		switch v := rr.(type) {
		case *dns.A:
			ip = v.A
		case *dns.AAAA:
			ip = v.AAAA
		case *dns.CNAME:
			names = []string{v.Target}
		case *dns.NS:
			names = []string{v.Ns}
		case *dns.MX:
			names = []string{v.Mx}
		case *dns.SRV:
			names = []string{v.Target}
		case *dns.SOA:
			names = []string{v.Ns, v.Mbox}
		}
		if a, ok := netip.AddrFromSlice(ip); ok {
			if err := g.CheckIP(a.Unmap()); err != nil {
				return withheld(err)
			}
		}
		for _, n := range names {
			if err := g.CheckName(n, search); err != nil {
				return withheld(err)
			}
		}
	}
	return nil
}

func netguardBlocked(err error) bool {
	s, _ := classify(err)
	return s == probeapi.StatusBlocked
}

// exchange sends m to server, retrying over TCP when a UDP answer is truncated.
func exchange(ctx context.Context, m *dns.Msg, server, proto string, dialer *net.Dialer) (*dns.Msg, error) {
	c := &dns.Client{Net: proto, Dialer: dialer}
	r, _, err := c.ExchangeContext(ctx, m, server)
	if err == nil && r.Truncated && proto == "udp" {
		c.Net = "tcp"
		r, _, err = c.ExchangeContext(ctx, m, server)
	}
	return r, err
}

// normalizeRR renders an answer as comparable text: addresses canonical,
// names lower-case without the trailing dot, TXT chunks joined.
func normalizeRR(rr dns.RR) string {
	switch v := rr.(type) {
	case *dns.A:
		return canonicalIP(v.A.String())
	case *dns.AAAA:
		return canonicalIP(v.AAAA.String())
	case *dns.CNAME:
		return normName(v.Target)
	case *dns.NS:
		return normName(v.Ns)
	case *dns.MX:
		return fmt.Sprintf("%d %s", v.Preference, normName(v.Mx))
	case *dns.TXT:
		return strings.Join(v.Txt, "")
	case *dns.SOA:
		return fmt.Sprintf("%s %s %d %d %d %d %d", normName(v.Ns), normName(v.Mbox), v.Serial, v.Refresh, v.Retry, v.Expire, v.Minttl)
	case *dns.CAA:
		return fmt.Sprintf("%d %s %s", v.Flag, strings.ToLower(v.Tag), v.Value)
	case *dns.SRV:
		return fmt.Sprintf("%d %d %d %s", v.Priority, v.Weight, v.Port, normName(v.Target))
	default:
		return rr.String()
	}
}

func normName(s string) string { return strings.ToLower(strings.TrimSuffix(s, ".")) }

func canonicalIP(s string) string {
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip.Unmap().String()
	}
	return s
}

// normalizeExpected applies the answer normalization to expected values.
func normalizeExpected(vals []string, qtype uint16) []string {
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		v = strings.TrimSpace(v)
		switch qtype {
		case dns.TypeA, dns.TypeAAAA:
			v = canonicalIP(v)
		case dns.TypeCNAME, dns.TypeNS:
			v = normName(v)
		case dns.TypeMX, dns.TypeSRV, dns.TypeSOA:
			f := strings.Fields(v)
			for i := range f {
				if _, err := strconv.Atoi(f[i]); err != nil {
					f[i] = normName(f[i])
				}
			}
			v = strings.Join(f, " ")
		case dns.TypeCAA:
			f := strings.Fields(v)
			if len(f) == 3 {
				v = fmt.Sprintf("%s %s %s", f[0], strings.ToLower(f[1]), strings.Trim(f[2], `"`))
			}
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func matchMode(m string) string {
	if m == "" {
		return "any"
	}
	return m
}

// matchValues compares sorted, de-duplicated answers with expected values.
func matchValues(answers, expected []string, mode string) bool {
	switch matchMode(mode) {
	case "all":
		for _, e := range expected {
			if !slices.Contains(answers, e) {
				return false
			}
		}
		return true
	case "exact":
		return slices.Equal(answers, expected)
	default:
		for _, e := range expected {
			if slices.Contains(answers, e) {
				return true
			}
		}
		return false
	}
}
