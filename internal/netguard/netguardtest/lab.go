// Package netguardtest is the shared hostile-target table of the address
// guard and a lab that makes every target a real, reachable local server, so
// that each component that dials user-chosen addresses (the HTTP probe, the
// webhook sender, the MCP check, the site-health crawler) proves with real
// dials that the guard stops it.
//
// The lab runs the calling test again in a new network namespace
// (unshare(1)) whose loopback interface holds every target address, with
// one dual-stack HTTP listener on all of them. Nothing touches the host's
// network. It needs root (as the project's test machines and CI run); the
// test is skipped with a reason elsewhere.
package netguardtest

import (
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Target is one destination the guard must refuse.
type Target struct {
	// Addr is an IP literal.
	Addr string
	// Reason is the guard's expected reason (netguard.Reason).
	Reason string
	// Dial is false for addresses a TCP connection cannot be made to
	// (multicast, broadcast, link-local without a zone): they are judged by
	// the table test only.
	Dial bool
}

// Targets are the tricky destinations: every blocked IPv4 range, the blocked
// IPv6 ranges, and private IPv4 addresses hidden in every IPv6 form that
// delivers to an IPv4 address.
var Targets = []Target{
	// Plain IPv4.
	{"127.0.0.1", "loopback", true},
	{"127.1.2.3", "loopback", true},
	{"0.0.0.0", "unspecified", true}, // connect(0.0.0.0) reaches the local host on Linux
	{"10.0.0.1", "private", true},
	{"10.255.255.254", "private", true},
	{"172.16.0.1", "private", true},
	{"172.31.255.254", "private", true},
	{"192.168.0.1", "private", true},
	{"192.168.255.254", "private", true},
	{"169.254.169.254", "cloud metadata", true},
	{"169.254.1.1", "link-local", true},
	{"168.63.129.16", "cloud metadata", true}, // Azure WireServer, a public address
	{"100.64.0.1", "carrier-grade nat", true},
	{"100.127.255.254", "carrier-grade nat", true},
	{"192.0.0.1", "ietf protocol assignments", true},
	{"198.18.0.1", "benchmarking", true},
	{"198.19.255.254", "benchmarking", true},
	{"224.0.0.1", "multicast", false},
	{"255.255.255.255", "broadcast", false},
	{"240.0.0.1", "reserved", false},
	// Plain IPv6.
	{"::1", "loopback", true},
	{"::", "unspecified", true}, // connect(::) reaches the local host on Linux
	{"fc00::1", "unique-local", true},
	{"fd12:3456::1", "unique-local", true},
	{"fec0::1", "site-local", true},
	{"100::1", "discard-only", true},
	{"fe80::1", "link-local", false},
	{"ff02::1", "multicast", false},
	// IPv4-mapped and IPv4-translated.
	{"::ffff:127.0.0.1", "loopback", true},
	{"::ffff:10.0.0.1", "private", true},
	{"::ffff:169.254.169.254", "cloud metadata", true},
	{"::ffff:168.63.129.16", "cloud metadata", true},
	{"::ffff:0:127.0.0.1", "loopback via ipv4-translated", true},
	{"::ffff:0:10.0.0.1", "private via ipv4-translated", true},
	// IPv4-compatible (deprecated, still routed by some stacks).
	{"::127.0.0.1", "loopback via ipv4-compatible", true},
	{"::10.0.0.1", "private via ipv4-compatible", true},
	{"::169.254.169.254", "cloud metadata via ipv4-compatible", true},
	{"::192.168.1.1", "private via ipv4-compatible", true},
	// NAT64, well-known prefix.
	{"64:ff9b::127.0.0.1", "loopback via nat64", true},
	{"64:ff9b::10.0.0.1", "private via nat64", true},
	{"64:ff9b::169.254.169.254", "cloud metadata via nat64", true},
	{"64:ff9b::168.63.129.16", "cloud metadata via nat64", true},
	{"64:ff9b::192.168.1.1", "private via nat64", true},
	{"64:ff9b::100.64.0.1", "carrier-grade nat via nat64", true},
	{"64:ff9b::172.16.0.1", "private via nat64", true},
	// NAT64, local-use prefix (blocked whole).
	{"64:ff9b:1::7f00:1", "local-use nat64", true},
	{"64:ff9b:1:a00:1::", "local-use nat64", true},
	// 6to4.
	{"2002:7f00:1::1", "loopback via 6to4", true},
	{"2002:a00:1::1", "private via 6to4", true},
	{"2002:a9fe:a9fe::1", "cloud metadata via 6to4", true},
	{"2002:c0a8:101::1", "private via 6to4", true},
	{"2002:6440:1:2::3", "carrier-grade nat via 6to4", true},
	{"2002:ac10:1::1", "private via 6to4", true},
	// Teredo: the client address is the last 32 bits XOR 0xffffffff.
	{"2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback via teredo", true},
	{"2001:0:4136:e378:8000:63bf:f5ff:fffe", "private via teredo", true},
	{"2001:0:4136:e378:8000:63bf:5601:5601", "cloud metadata via teredo", true},
	{"2001:0:4136:e378:8000:63bf:3f57:fefe", "private via teredo", true},
	// ISATAP interface identifiers.
	{"2001:4860:0:1:0:5efe:7f00:1", "loopback via isatap", true},
	{"2a00:1450:0:1:200:5efe:a00:1", "private via isatap", true},
	{"fe80::5efe:808:808", "link-local", false},
}

// Allowed are public addresses, some in the same IPv6 forms, that the guard
// lets through; the lab serves them too, so a guard that blocked everything
// would fail the tests.
var Allowed = []string{
	"93.184.216.34",
	"::ffff:93.184.216.34",
	"2001:4860:4860::8888",
	"64:ff9b::808:808",
	"2002:808:808::1",
	"2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo client 8.8.8.8
}

// envChild names the test that runs inside the lab's namespace.
const envChild = "NETGUARDTEST_LAB"

// Lab is the network namespace of one test. Its HTTP listener answers every
// request with 200 and a small JSON body and records the local address of
// each connection.
type Lab struct {
	// Port is the listener's port on every address.
	Port string

	mu      sync.Mutex
	reached map[netip.Addr]int
}

// Start returns the lab when the test is running inside its namespace. In
// the parent process it runs the test again in a new namespace, reports its
// output and result, and returns nil: the caller then returns at once.
func Start(t *testing.T) *Lab {
	t.Helper()
	if os.Getenv(envChild) != t.Name() {
		runChild(t)
		return nil
	}
	run := func(args ...string) {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("link", "set", "lo", "up")
	seen := map[netip.Addr]bool{}
	var addrs []string
	for _, tg := range Targets {
		if tg.Dial {
			addrs = append(addrs, tg.Addr)
		}
	}
	for _, a := range append(addrs, Allowed...) {
		ip := netip.MustParseAddr(a).Unmap()
		if seen[ip] || ip.IsUnspecified() || ip.IsLoopback() && ip.Is4() || ip == netip.IPv6Loopback() {
			continue
		}
		seen[ip] = true
		bits := "/32"
		if ip.Is6() {
			bits = "/128"
		}
		run("addr", "add", ip.String()+bits, "dev", "lo")
	}
	lab := &Lab{reached: map[netip.Addr]int{}}
	ln, err := net.Listen("tcp", "[::]:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	_, lab.Port, _ = net.SplitHostPort(ln.Addr().String())
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"ok":true}`))
		}),
		ReadHeaderTimeout: 5 * time.Second,
		ConnState: func(c net.Conn, s http.ConnState) {
			if s != http.StateNew {
				return
			}
			if ap, err := netip.ParseAddrPort(c.LocalAddr().String()); err == nil {
				lab.mu.Lock()
				lab.reached[ap.Addr().Unmap().WithZone("")]++
				lab.mu.Unlock()
			}
		},
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return lab
}

// runChild runs t's test again inside a new network namespace.
func runChild(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the address-guard lab needs root to make a network namespace")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("the address-guard lab needs unshare(1) (util-linux)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the address-guard lab needs ip(8) (iproute2)")
	}
	cmd := exec.Command("unshare", "--net", "--", os.Args[0],
		"-test.run", "^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envChild+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s in its network namespace: %v\n%s", t.Name(), err, out)
	}
	t.Logf("%s passed in its network namespace", t.Name())
}

// URL is http://<addr>:<port><path> for a target address.
func (l *Lab) URL(addr, path string) string {
	return "http://" + net.JoinHostPort(addr, l.Port) + path
}

// Reached reports how many connections arrived on addr (its IPv4 form for
// IPv4-mapped addresses; the loopback address for the unspecified ones).
func (l *Lab) Reached(addr string) int {
	ip := netip.MustParseAddr(addr).Unmap()
	switch {
	case ip == netip.IPv4Unspecified():
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	case ip == netip.IPv6Unspecified():
		ip = netip.IPv6Loopback()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reached[ip]
}

// Check runs dial(url) for every dialable target and every allowed address
// and fails the test when a target was reached or reported other than
// blocked, or an allowed address was not reached. dial returns whether the
// component reported the destination as blocked.
func (l *Lab) Check(t *testing.T, dial func(url string) (blocked bool, detail string)) {
	t.Helper()
	// The server counts a connection in its own goroutine, after the
	// client may already have returned: reached counts are awaited for the
	// public addresses, and read for the targets after the last dial.
	n := 0
	before := map[string]int{}
	for _, tg := range Targets {
		if !tg.Dial {
			continue
		}
		n++
		if _, ok := before[tg.Addr]; !ok {
			before[tg.Addr] = l.Reached(tg.Addr)
		}
		if blocked, detail := dial(l.URL(tg.Addr, "/")); !blocked {
			t.Errorf("%s (%s): not reported as blocked: %s", tg.Addr, tg.Reason, detail)
		}
	}
	for _, a := range Allowed {
		was := l.Reached(a)
		if blocked, detail := dial(l.URL(a, "/")); blocked {
			t.Errorf("public %s reported as blocked: %s", a, detail)
		}
		deadline := time.Now().Add(5 * time.Second)
		for l.Reached(a) == was && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if l.Reached(a) == was {
			t.Errorf("public %s: the lab server was not reached", a)
		}
	}
	// By now every connection made before the public ones has been counted.
	for _, tg := range Targets {
		if tg.Dial && l.Reached(tg.Addr) != before[tg.Addr] {
			t.Errorf("%s (%s): the local server was reached", tg.Addr, tg.Reason)
		}
	}
	t.Logf("%d hostile targets blocked, %d public addresses reached", n, len(Allowed))
	if n < 50 {
		t.Fatalf("the table has only %d dialable targets; the guard's tests need at least 50", n)
	}
}
