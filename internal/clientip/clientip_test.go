package clientip

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestResolve(t *testing.T) {
	trusted, err := ParsePrefixes([]string{"10.0.0.0/8", " 192.168.1.5", "", "fd00::/8", "::ffff:172.16.0.0/108"})
	if err != nil {
		t.Fatal(err)
	}
	xff := Resolver{Trusted: trusted}
	fwd := Resolver{Trusted: trusted, Header: HeaderForwarded}
	cases := []struct {
		name   string
		res    Resolver
		peer   string
		header []string
		want   string
	}{
		{"no proxies trusted: header ignored", Resolver{}, "10.1.1.1:5000", []string{"203.0.113.7"}, "10.1.1.1"},
		{"untrusted peer cannot spoof", xff, "198.51.100.9:5000", []string{"203.0.113.7"}, "198.51.100.9"},
		{"trusted peer, one client", xff, "10.1.1.1:5000", []string{"203.0.113.7"}, "203.0.113.7"},
		{"forged left part ignored", xff, "10.1.1.1:5000", []string{"1.2.3.4, 203.0.113.7"}, "203.0.113.7"},
		{"chain of trusted proxies", xff, "10.1.1.1:5000", []string{"1.2.3.4, 203.0.113.7, 10.2.2.2, 192.168.1.5"}, "203.0.113.7"},
		{"header over several lines", xff, "10.1.1.1:5000", []string{"1.2.3.4", "203.0.113.7, 10.9.9.9"}, "203.0.113.7"},
		{"address with port", xff, "10.1.1.1:5000", []string{"203.0.113.7:4711"}, "203.0.113.7"},
		{"ipv6 with brackets and port", xff, "[fd00::1]:5000", []string{"[2001:db8::7]:4711"}, "2001:db8::7"},
		{"ipv4-mapped peer and hop", xff, "[::ffff:10.1.1.1]:5000", []string{"::ffff:203.0.113.7"}, "203.0.113.7"},
		{"mapped trusted prefix", xff, "172.16.3.4:5000", []string{"203.0.113.7"}, "203.0.113.7"},
		{"garbage stops at the last trusted hop", xff, "10.1.1.1:5000", []string{"203.0.113.7, unknown, 10.2.2.2"}, "10.2.2.2"},
		{"no header: the proxy", xff, "10.1.1.1:5000", nil, "10.1.1.1"},
		{"all hops trusted: left-most", xff, "10.1.1.1:5000", []string{"10.3.3.3, 10.2.2.2"}, "10.3.3.3"},
		{"forwarded header", fwd, "10.1.1.1:5000", []string{`for=1.2.3.4, for="[2001:db8::7]:4711";proto=https`, "for=10.2.2.2;by=10.1.1.1"}, "2001:db8::7"},
		{"forwarded obfuscated", fwd, "10.1.1.1:5000", []string{"for=_hidden, for=10.2.2.2"}, "10.2.2.2"},
		{"forwarded resolver ignores x-forwarded-for", fwd, "10.1.1.1:5000", nil, "10.1.1.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = c.peer
			h := HeaderXForwardedFor
			if c.res.Header == HeaderForwarded {
				h = HeaderForwarded
			}
			for _, v := range c.header {
				r.Header.Add(h, v)
			}
			if c.name == "forwarded resolver ignores x-forwarded-for" {
				r.Header.Add(HeaderXForwardedFor, "203.0.113.7")
			}
			if got := c.res.Resolve(r).String(); got != c.want {
				t.Fatalf("Resolve = %s, want %s", got, c.want)
			}
			var seen string
			c.res.Middleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen = From(r) })).
				ServeHTTP(httptest.NewRecorder(), r)
			if seen != c.want {
				t.Fatalf("From behind the middleware = %s, want %s", seen, c.want)
			}
		})
	}
}

func TestFromWithoutMiddlewareIsThePeer(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "10.1.1.1:5000"
	r.Header.Set(HeaderXForwardedFor, "203.0.113.7")
	if got := From(r); got != "10.1.1.1" {
		t.Fatalf("From = %s", got)
	}
}

func TestParse(t *testing.T) {
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "10.0.0.0/8/1"} {
		if _, err := ParsePrefixes([]string{bad}); err == nil {
			t.Errorf("ParsePrefixes(%q) accepted", bad)
		}
	}
	if h, err := ParseHeader("forwarded"); err != nil || h != HeaderForwarded {
		t.Errorf("ParseHeader(forwarded) = %q, %v", h, err)
	}
	if _, err := ParseHeader("X-Real-IP"); err == nil {
		t.Error("ParseHeader(X-Real-IP) accepted")
	}
}

// TestBucketGroupsIPv6By64: two addresses of one /64 share a bucket, an IPv4
// address (plain or mapped) is its own.
func TestBucketGroupsIPv6By64(t *testing.T) {
	bucket := func(remote string) string {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		return Bucket(r)
	}
	if a, b := bucket("[2001:db8:1:2::1]:1"), bucket("[2001:db8:1:2:ffff::9]:2"); a != b || a != "2001:db8:1:2::/64" {
		t.Fatalf("one /64: %q and %q", a, b)
	}
	if a, b := bucket("[2001:db8:1:2::1]:1"), bucket("[2001:db8:1:3::1]:1"); a == b {
		t.Fatalf("two /64s share bucket %q", a)
	}
	if a, b := bucket("192.0.2.7:1"), bucket("[::ffff:192.0.2.7]:1"); a != "192.0.2.7" || b != a {
		t.Fatalf("IPv4: %q, mapped: %q", a, b)
	}
}
