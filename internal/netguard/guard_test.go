package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/netguard/netguardtest"
)

func TestReason(t *testing.T) {
	cases := []struct {
		ip      string
		blocked bool
	}{
		{"127.0.0.1", true},
		{"127.1.2.3", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"172.32.0.1", false},
		{"192.168.1.1", true},
		{"169.254.169.254", true},
		{"169.254.1.1", true},
		{"168.63.129.16", true}, // Azure WireServer
		{"168.63.129.17", false},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"100.128.0.1", false},
		{"0.0.0.0", true},
		{"224.0.0.1", true},
		{"255.255.255.255", true},
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"::1", true},
		{"::", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"fe80::1", true},
		{"ff02::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"::ffff:8.8.8.8", false},
		{"2001:4860:4860::8888", false},
	}
	for _, c := range cases {
		t.Run(c.ip, func(t *testing.T) {
			got := Reason(netip.MustParseAddr(c.ip)) != ""
			if got != c.blocked {
				t.Fatalf("Reason(%s) blocked=%v, want %v", c.ip, got, c.blocked)
			}
		})
	}
	if r := Reason(netip.MustParseAddr("169.254.169.254")); r != "cloud metadata" {
		t.Fatalf("metadata reason = %q", r)
	}
}

// TestReasonTrickyTargets judges the shared hostile-target table and the
// public addresses hidden in the same IPv6 forms.
func TestReasonTrickyTargets(t *testing.T) {
	for _, tg := range netguardtest.Targets {
		if got := Reason(netip.MustParseAddr(tg.Addr)); got != tg.Reason {
			t.Errorf("Reason(%s) = %q, want %q", tg.Addr, got, tg.Reason)
		}
	}
	for _, a := range netguardtest.Allowed {
		if got := Reason(netip.MustParseAddr(a)); got != "" {
			t.Errorf("Reason(%s) = %q, want public", a, got)
		}
	}
	if got := Reason(netip.MustParseAddr("fe80::1%eth0")); got != "link-local" {
		t.Errorf("zoned link-local: %q", got)
	}
}

func TestEmbeddedIPv4(t *testing.T) {
	cases := []struct{ ip, v4, form string }{
		{"::ffff:1.2.3.4", "1.2.3.4", "ipv4-mapped"},
		{"::ffff:0:1.2.3.4", "1.2.3.4", "ipv4-translated"},
		{"::1.2.3.4", "1.2.3.4", "ipv4-compatible"},
		{"64:ff9b::1.2.3.4", "1.2.3.4", "nat64"},
		{"2002:102:304:5::6", "1.2.3.4", "6to4"},
		{"2001:0:4136:e378:8000:63bf:fefd:fcfb", "1.2.3.4", "teredo"},
		{"2001:db8::5efe:1.2.3.4", "1.2.3.4", "isatap"},
		{"2001:db8::200:5efe:1.2.3.4", "1.2.3.4", "isatap"},
		{"::1", "", ""},
		{"::", "", ""},
		{"2001:4860:4860::8888", "", ""},
		{"1.2.3.4", "", ""},
	}
	for _, c := range cases {
		v4, form, ok := EmbeddedIPv4(netip.MustParseAddr(c.ip))
		if ok != (c.v4 != "") || ok && (v4.String() != c.v4 || form != c.form) {
			t.Errorf("EmbeddedIPv4(%s) = %v %q %v, want %s %q", c.ip, v4, form, ok, c.v4, c.form)
		}
	}
}

// TestDialerTrickyTargets dials every target of the lab through the guard's
// dialer: none is reached, each public address is, and without the guard
// the targets are reachable (the lab is real).
func TestDialerTrickyTargets(t *testing.T) {
	lab := netguardtest.Start(t)
	if lab == nil {
		return
	}
	hostPort := func(url string) string { return strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/") }
	lab.Check(t, func(url string) (bool, string) {
		c, err := Guard{}.Dialer(2*time.Second).Dial("tcp", hostPort(url))
		if err == nil {
			c.Close()
			return false, "connected"
		}
		return IsBlocked(err), err.Error()
	})
	for _, tg := range netguardtest.Targets {
		if !tg.Dial {
			continue
		}
		c, err := Guard{AllowPrivate: true}.Dialer(2*time.Second).Dial("tcp", hostPort(lab.URL(tg.Addr, "")))
		if err != nil {
			t.Fatalf("unguarded dial of %s: %v", tg.Addr, err)
		}
		c.Close()
	}
}

func TestControl(t *testing.T) {
	g := Guard{}
	err := g.Control("tcp4", "127.0.0.1:80", nil)
	var be *BlockedError
	if !errors.As(err, &be) || be.Reason != "loopback" {
		t.Fatalf("want loopback BlockedError, got %v", err)
	}
	if err := g.Control("tcp6", "[::ffff:192.168.0.1]:443", nil); !IsBlocked(err) {
		t.Fatalf("mapped private not blocked: %v", err)
	}
	if err := g.Control("tcp4", "8.8.8.8:53", nil); err != nil {
		t.Fatalf("public blocked: %v", err)
	}
	if err := (Guard{AllowPrivate: true}).Control("tcp4", "127.0.0.1:80", nil); err != nil {
		t.Fatalf("AllowPrivate still blocks: %v", err)
	}
}

func TestDialerBlocksLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, err = Guard{}.Dialer(time.Second).Dial("tcp", ln.Addr().String())
	if !IsBlocked(err) {
		t.Fatalf("dial loopback: want blocked, got %v", err)
	}
	// "localhost" resolves at dial time; the hook sees the resolved address.
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_, err = Guard{}.Dialer(time.Second).Dial("tcp", net.JoinHostPort("localhost", port))
	if !IsBlocked(err) {
		t.Fatalf("dial localhost: want blocked, got %v", err)
	}
	c, err := Guard{AllowPrivate: true}.Dialer(time.Second).Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("allowed dial: %v", err)
	}
	c.Close()
}

func TestCheckHost(t *testing.T) {
	ctx := context.Background()
	if err := (Guard{}).CheckHost(ctx, "127.0.0.1"); !IsBlocked(err) {
		t.Fatalf("want blocked, got %v", err)
	}
	if err := (Guard{}).CheckHost(ctx, "localhost"); !IsBlocked(err) {
		t.Fatalf("localhost: want blocked, got %v", err)
	}
	if err := (Guard{}).CheckHost(ctx, "93.184.216.34"); err != nil {
		t.Fatalf("public: %v", err)
	}
}

func TestNameReason(t *testing.T) {
	search := []string{"team.svc.corp.example", "svc.corp.example", "corp.example", "us-west-2.compute.amazonaws.example"}
	for name, blocked := range map[string]bool{
		"kubernetes.default.svc.cluster.local":             true,
		"kubernetes.default.svc.cluster.local.":            true,
		"KUBERNETES.Default.SVC.Cluster.Local":             true,
		"_https._tcp.kubernetes.default.svc.cluster.local": true,
		"cluster.local":             true,
		"kube-dns.kube-system.svc":  true,
		"printer.local":             true,
		"localhost":                 true,
		"metadata.google.internal":  true,
		"ip-10-0-0-1.ec2.internal":  true,
		"router.home.arpa":          true,
		"api.team.svc.corp.example": true, // custom cluster domain via the search list
		"corp.example":              true,
		"ip-10-0-0-1.us-west-2.compute.amazonaws.example": true,
		"example.com":               false,
		"svc.example.com":           false,
		"cluster.local.example.com": false,
		"notcorp.example":           false,
		"internal.example.com":      false,
	} {
		if got := NameReason(name, search) != ""; got != blocked {
			t.Errorf("NameReason(%q) blocked=%v, want %v", name, got, blocked)
		}
	}
	if err := (Guard{AllowPrivate: true}).CheckName("kubernetes.default.svc.cluster.local", nil); err != nil {
		t.Errorf("AllowPrivate refused a name: %v", err)
	}
	if err := (Guard{}).CheckName("kubernetes.default.svc.cluster.local", nil); !IsBlocked(err) {
		t.Errorf("the guard let a cluster name through: %v", err)
	}
}
