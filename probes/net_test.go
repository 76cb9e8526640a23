package probes

import (
	"encoding/json"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/miekg/dns"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

func hostPort(t *testing.T, addr string) (string, int32) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return h, int32(n)
}

func netAssignment(typ, addr string, t *testing.T, cfg monv1.MonitorSpec) probeapi.Assignment {
	h, p := hostPort(t, addr)
	if cfg.UDP != nil {
		cfg.UDP.Host, cfg.UDP.Port = h, p
	} else {
		if cfg.Port == nil {
			cfg.Port = &monv1.PortConfig{}
		}
		cfg.Port.Host, cfg.Port.Port = h, p
	}
	return probeapi.Assignment{Type: typ, Config: cfg, TimeoutMs: 2000}
}

func TestPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	open := ln.Addr().String()
	wantStatus(t, run(t, netAssignment(probeapi.TypePort, open, t, monv1.MonitorSpec{}), testEnv()), probeapi.StatusUp)
	wantStatus(t, run(t, netAssignment(probeapi.TypePort, open, t, monv1.MonitorSpec{}), &Env{}), probeapi.StatusBlocked)
	ln.Close()
	res := run(t, netAssignment(probeapi.TypePort, open, t, monv1.MonitorSpec{}), testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorRefused {
		t.Fatalf("error type %q", res.ErrorType)
	}
}

func TestPortTLS(t *testing.T) {
	ts := httptest.NewTLSServer(testMux())
	defer ts.Close()
	a := netAssignment(probeapi.TypePort, ts.Listener.Addr().String(), t, monv1.MonitorSpec{Port: &monv1.PortConfig{TLS: true}})
	res := run(t, a, tlsEnv(ts))
	wantStatus(t, res, probeapi.StatusUp)
	if res.TLS == nil || res.TLS.Subject == "" {
		t.Fatalf("tls info %+v", res.TLS)
	}
	res = run(t, a, testEnv()) // untrusted CA
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorTLS {
		t.Fatalf("error type %q: %s", res.ErrorType, res.ErrorMessage)
	}
}

func udpEcho(t *testing.T, reply func([]byte) []byte) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := reply(buf[:n]); out != nil {
				pc.WriteTo(out, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

func TestUDP(t *testing.T) {
	echo := udpEcho(t, func(b []byte) []byte { return append([]byte("PONG "), b...) })
	silent := udpEcho(t, func([]byte) []byte { return nil })
	cfg := func(u monv1.UDPConfig) monv1.MonitorSpec { return monv1.MonitorSpec{UDP: &u} }

	wantStatus(t, run(t, netAssignment(probeapi.TypeUDP, echo, t, cfg(monv1.UDPConfig{Payload: "ping", ExpectedResponse: "PONG"})), testEnv()), probeapi.StatusUp)
	wantStatus(t, run(t, netAssignment(probeapi.TypeUDP, echo, t, cfg(monv1.UDPConfig{PayloadHex: "70696e67", ExpectedResponse: `^PONG pi.g$`})), testEnv()), probeapi.StatusUp)
	res := run(t, netAssignment(probeapi.TypeUDP, echo, t, cfg(monv1.UDPConfig{Payload: "ping", ExpectedResponse: "HELLO"})), testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorResponseMismatch {
		t.Fatalf("error type %q", res.ErrorType)
	}

	a := netAssignment(probeapi.TypeUDP, silent, t, cfg(monv1.UDPConfig{Payload: "ping"}))
	a.TimeoutMs = 200
	res = run(t, a, testEnv())
	wantStatus(t, res, probeapi.StatusUnknown)
	if res.ErrorType != probeapi.ErrorNoResponse {
		t.Fatalf("error type %q", res.ErrorType)
	}
	a.Config.UDP.SilentIsUp = true
	wantStatus(t, run(t, a, testEnv()), probeapi.StatusUp)

	// A closed port answers with ICMP port unreachable.
	pc, _ := net.ListenPacket("udp", "127.0.0.1:0")
	closed := pc.LocalAddr().String()
	pc.Close()
	res = run(t, netAssignment(probeapi.TypeUDP, closed, t, cfg(monv1.UDPConfig{Payload: "ping"})), testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorPortUnreachable {
		t.Fatalf("error type %q: %s", res.ErrorType, res.ErrorMessage)
	}
	wantStatus(t, run(t, netAssignment(probeapi.TypeUDP, echo, t, cfg(monv1.UDPConfig{Payload: "ping"})), &Env{}), probeapi.StatusBlocked)
}

// startDNS serves a small zone on 127.0.0.1 over UDP and TCP.
func startDNS(t *testing.T) string {
	t.Helper()
	h := testZone()
	// UDP and TCP share the port number; another test may hold that TCP
	// port, so try a few UDP ports.
	var pc net.PacketConn
	var ln net.Listener
	for attempt := 0; ; attempt++ {
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
		if attempt == 20 {
			t.Fatal(err)
		}
	}
	serveDNS(t, pc, ln, h)
	return pc.LocalAddr().String()
}

// serveDNS serves h on pc and ln until the test ends.
func serveDNS(t *testing.T, pc net.PacketConn, ln net.Listener, h dns.Handler) {
	us := &dns.Server{PacketConn: pc, Handler: h}
	ts := &dns.Server{Listener: ln, Handler: h}
	go us.ActivateAndServe()
	go ts.ActivateAndServe()
	t.Cleanup(func() { us.Shutdown(); ts.Shutdown() })
}

// testZone answers example.test and a few names of a cluster's DNS.
func testZone() dns.Handler {
	zone := map[string][]string{
		"example.test. A":             {"example.test. 60 IN A 192.0.2.10", "example.test. 60 IN A 192.0.2.11"},
		"example.test. AAAA":          {"example.test. 60 IN AAAA 2001:db8::1"},
		"example.test. MX":            {"example.test. 60 IN MX 10 Mail.Example.Test."},
		"example.test. TXT":           {`example.test. 60 IN TXT "v=spf1 " "-all"`},
		"example.test. NS":            {"example.test. 60 IN NS ns1.example.test."},
		"example.test. SOA":           {"example.test. 60 IN SOA ns1.example.test. admin.example.test. 2024010101 7200 3600 1209600 300"},
		"example.test. CAA":           {`example.test. 60 IN CAA 0 issue "letsencrypt.org"`},
		"www.example.test. CNAME":     {"www.example.test. 60 IN CNAME example.test."},
		"_sip._tcp.example.test. SRV": {"_sip._tcp.example.test. 60 IN SRV 10 5 5060 sip.example.test."},
		// What a cluster's resolver knows.
		"kubernetes.default.svc.cluster.local. A":   {"kubernetes.default.svc.cluster.local. 5 IN A 10.96.0.1"},
		"kubernetes.default.svc.cluster.local. TXT": {`kubernetes.default.svc.cluster.local. 5 IN TXT "internal"`},
		"_https._tcp.kubernetes.default.svc.cluster.local. SRV": {
			"_https._tcp.kubernetes.default.svc.cluster.local. 5 IN SRV 0 100 443 kubernetes.default.svc.cluster.local."},
		"db.corp.example. A":         {"db.corp.example. 5 IN A 192.0.2.20"},
		"private.example.test. A":    {"private.example.test. 60 IN A 10.0.0.5"},
		"wireserver.example.test. A": {"wireserver.example.test. 60 IN A 168.63.129.16"},
		"alias.example.test. CNAME":  {"alias.example.test. 60 IN CNAME kubernetes.default.svc.cluster.local."},
		"alias.example.test. A":      {"alias.example.test. 60 IN CNAME kubernetes.default.svc.cluster.local.", "kubernetes.default.svc.cluster.local. 5 IN A 10.96.0.1"},
	}
	return dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		if q.Name == "fail.test." {
			m.Rcode = dns.RcodeServerFailure
		} else if rrs, ok := zone[q.Name+" "+dns.TypeToString[q.Qtype]]; ok {
			for _, s := range rrs {
				rr, err := dns.NewRR(s)
				if err != nil {
					panic(err)
				}
				m.Answer = append(m.Answer, rr)
			}
		} else if !strings.HasSuffix(q.Name, "example.test.") {
			m.Rcode = dns.RcodeNameError
		}
		w.WriteMsg(m)
	})
}

func TestDNS(t *testing.T) {
	server := startDNS(t)
	type tc struct {
		name, rt, proto, match string
		expected               []string
		want                   probeapi.Status
		answers                []string
	}
	cases := []tc{
		{"example.test", "A", "udp", "", nil, probeapi.StatusUp, []string{"192.0.2.10", "192.0.2.11"}},
		{"example.test", "A", "tcp", "any", []string{"192.0.2.11", "203.0.113.1"}, probeapi.StatusUp, nil},
		{"example.test", "A", "", "all", []string{"192.0.2.11", "203.0.113.1"}, probeapi.StatusDown, nil},
		{"example.test", "A", "", "all", []string{"192.0.2.11"}, probeapi.StatusUp, nil},
		{"example.test", "A", "", "exact", []string{"192.0.2.11"}, probeapi.StatusDown, nil},
		{"example.test", "A", "", "exact", []string{"192.0.2.11", "192.0.2.10"}, probeapi.StatusUp, nil},
		{"example.test", "AAAA", "", "", []string{"2001:DB8:0::1"}, probeapi.StatusUp, []string{"2001:db8::1"}},
		{"example.test", "MX", "", "", []string{"10 mail.example.test."}, probeapi.StatusUp, []string{"10 mail.example.test"}},
		{"example.test", "TXT", "", "", []string{"v=spf1 -all"}, probeapi.StatusUp, nil},
		{"example.test", "NS", "", "", []string{"ns1.example.test"}, probeapi.StatusUp, nil},
		{"example.test", "SOA", "", "", nil, probeapi.StatusUp, []string{"ns1.example.test admin.example.test 2024010101 7200 3600 1209600 300"}},
		{"example.test", "CAA", "", "", []string{`0 issue "letsencrypt.org"`}, probeapi.StatusUp, nil},
		{"www.example.test", "CNAME", "", "", []string{"example.test"}, probeapi.StatusUp, nil},
		{"_sip._tcp.example.test", "SRV", "", "", []string{"10 5 5060 sip.example.test"}, probeapi.StatusUp, nil},
		{"empty.example.test", "A", "", "", nil, probeapi.StatusDown, nil},
		{"nope.invalid", "A", "", "", nil, probeapi.StatusDown, nil},
		{"fail.test", "A", "", "", nil, probeapi.StatusDown, nil},
	}
	for _, c := range cases {
		t.Run(c.name+"-"+c.rt+"-"+c.match, func(t *testing.T) {
			a := probeapi.Assignment{Type: probeapi.TypeDNS, TimeoutMs: 2000, Config: monv1.MonitorSpec{DNS: &monv1.DNSConfig{
				Name: c.name, RecordType: monv1.DNSRecordType(c.rt), Resolver: server, Protocol: c.proto, MatchMode: monv1.DNSMatchMode(c.match), ExpectedValues: c.expected}}}
			res := run(t, a, testEnv())
			wantStatus(t, res, c.want)
			if c.answers != nil {
				var d dnsDetails
				json.Unmarshal(res.Details, &d)
				if strings.Join(d.Answers, "|") != strings.Join(c.answers, "|") {
					t.Fatalf("answers %q want %q", d.Answers, c.answers)
				}
			}
		})
	}
}

func TestDNSResolverUnreachable(t *testing.T) {
	pc, _ := net.ListenPacket("udp", "127.0.0.1:0")
	dead := pc.LocalAddr().String()
	pc.Close()
	a := probeapi.Assignment{Type: probeapi.TypeDNS, TimeoutMs: 500, Config: monv1.MonitorSpec{DNS: &monv1.DNSConfig{Name: "example.test", Resolver: dead}}}
	// A resolver chosen by the monitor is the target: down.
	wantStatus(t, run(t, a, testEnv()), probeapi.StatusDown)
	// The probe's own resolver failing is inconclusive: unknown.
	conf := filepath.Join(t.TempDir(), "resolv.conf")
	h, _ := hostPort(t, dead)
	os.WriteFile(conf, []byte("nameserver "+h+"\noptions timeout:1\n"), 0o600)
	a.Config.DNS.Resolver = ""
	env := testEnv()
	env.SystemResolverConf = conf
	res := run(t, a, env)
	wantStatus(t, res, probeapi.StatusUnknown)
	// A chosen resolver on loopback is blocked without AllowPrivate.
	a.Config.DNS.Resolver = startDNS(t)
	wantStatus(t, run(t, a, &Env{Guard: netguard.Guard{}}), probeapi.StatusBlocked)
}

// TestDNSSystemResolverKeepsClusterNamesInside (issue 27 row 8): the
// probe's own resolver is the cluster's. With the guard on, a dns monitor
// without a resolver of its own cannot ask it about cluster names (the
// cluster domain, its search domains) nor learn answers that point at
// guarded addresses or internal names; public names still resolve. With
// the guard off (in-cluster monitoring) every name resolves as before.
func TestDNSSystemResolverKeepsClusterNamesInside(t *testing.T) {
	// resolv.conf names servers without a port: the resolver must listen on
	// port 53, which needs root; a loopback address of its own avoids a
	// local resolver already on 127.0.0.53 or 127.0.0.1.
	const resolverIP = "127.77.0.53"
	pc, err := net.ListenPacket("udp", resolverIP+":53")
	if err != nil {
		t.Skipf("cannot listen on port 53: %v", err)
	}
	ln, err := net.Listen("tcp", resolverIP+":53")
	if err != nil {
		pc.Close()
		t.Skipf("cannot listen on port 53: %v", err)
	}
	serveDNS(t, pc, ln, testZone())
	conf := filepath.Join(t.TempDir(), "resolv.conf")
	os.WriteFile(conf, []byte("nameserver "+resolverIP+"\nsearch team.svc.cluster.local svc.cluster.local cluster.local corp.example\noptions ndots:5\n"), 0o600)
	guarded := &Env{Guard: netguard.Guard{}, SystemResolverConf: conf}
	open := &Env{Guard: netguard.Guard{AllowPrivate: true}, SystemResolverConf: conf}
	for _, tc := range []struct {
		name, rt string
		guarded  probeapi.Status
	}{
		{"kubernetes.default.svc.cluster.local", "A", probeapi.StatusBlocked},
		{"kubernetes.default.svc.cluster.local", "TXT", probeapi.StatusBlocked},
		{"_https._tcp.kubernetes.default.svc.cluster.local", "SRV", probeapi.StatusBlocked},
		{"db.corp.example", "A", probeapi.StatusBlocked},         // a search domain of the resolver
		{"private.example.test", "A", probeapi.StatusBlocked},    // a public name answering a private address
		{"wireserver.example.test", "A", probeapi.StatusBlocked}, // ... or a cloud metadata address
		{"alias.example.test", "CNAME", probeapi.StatusBlocked},  // a public name pointing into the cluster
		{"alias.example.test", "A", probeapi.StatusBlocked},
		{"example.test", "A", probeapi.StatusUp},
		{"example.test", "MX", probeapi.StatusUp},
	} {
		t.Run(tc.name+"-"+tc.rt, func(t *testing.T) {
			a := probeapi.Assignment{Type: probeapi.TypeDNS, TimeoutMs: 2000, Config: monv1.MonitorSpec{DNS: &monv1.DNSConfig{Name: tc.name, RecordType: monv1.DNSRecordType(tc.rt)}}}
			res := run(t, a, guarded)
			wantStatus(t, res, tc.guarded)
			if tc.guarded == probeapi.StatusBlocked {
				var d dnsDetails
				json.Unmarshal(res.Details, &d)
				if len(d.Answers) > 0 || strings.ContainsAny(res.ErrorMessage, "0123456789") {
					t.Fatalf("a blocked lookup told its answers: %+v %q", d, res.ErrorMessage)
				}
			}
			wantStatus(t, run(t, a, open), probeapi.StatusUp)
		})
	}
}

func TestPing(t *testing.T) {
	c, _, err := listenICMP(true)
	if err != nil {
		t.Skipf("kernel refuses both datagram and raw ICMP sockets: %v", err)
	}
	c.Close()
	a := probeapi.Assignment{Type: probeapi.TypePing, TimeoutMs: 3000, Config: monv1.MonitorSpec{Ping: &monv1.PingConfig{Host: "127.0.0.1", PacketCount: 3}}}
	res := run(t, a, testEnv())
	wantStatus(t, res, probeapi.StatusUp)
	var d pingDetails
	json.Unmarshal(res.Details, &d)
	if d.Sent != 3 || d.Received != 3 || d.LossPercent != 0 || d.RTTMaxMs <= 0 {
		t.Fatalf("details %+v", d)
	}
	a.Config.Ping.PacketCount = 50 // clamped
	res = run(t, a, testEnv())
	json.Unmarshal(res.Details, &d)
	if d.Sent != maxPacketCount {
		t.Fatalf("sent %d", d.Sent)
	}
	wantStatus(t, run(t, a, &Env{}), probeapi.StatusBlocked)
}

func TestPingIPv6(t *testing.T) {
	c, _, err := listenICMP(false)
	if err != nil {
		t.Skipf("kernel refuses both datagram and raw ICMPv6 sockets: %v", err)
	}
	c.Close()
	a := probeapi.Assignment{Type: probeapi.TypePing, TimeoutMs: 3000, Config: monv1.MonitorSpec{Ping: &monv1.PingConfig{Host: "::1", PacketCount: 2}}}
	res := run(t, a, testEnv())
	wantStatus(t, res, probeapi.StatusUp)
	var d pingDetails
	if err := json.Unmarshal(res.Details, &d); err != nil {
		t.Fatal(err)
	}
	if d.Sent != 2 || d.Received != 2 || d.LossPercent != 0 {
		t.Fatalf("details %+v", d)
	}
	wantStatus(t, run(t, a, &Env{}), probeapi.StatusBlocked)
}
