package cli

import (
	"io"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/clientip"
	"github.com/uptime-operator/uptime-operator/internal/manager"
)

func TestManagerClientAddressFlags(t *testing.T) {
	parse := func(args ...string) (manager.Options, error) {
		var o manager.Options
		fs := newFlagSet("manager", io.Discard)
		finish := managerFlags(fs, &o)
		if err := fs.Parse(args); err != nil {
			return o, err
		}
		return o, finish()
	}
	o, err := parse()
	if err != nil || len(o.ClientAddresses.Trusted) != 0 || o.ClientAddresses.Header != clientip.HeaderXForwardedFor {
		t.Fatalf("defaults: %+v, %v", o.ClientAddresses, err)
	}
	o, err = parse("--trusted-proxies=10.0.0.0/8, 192.168.1.7,fd00::/8", "--forwarded-header=forwarded")
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("fd00::/8")}
	if err != nil || !slices.Equal(o.ClientAddresses.Trusted, want) || o.ClientAddresses.Header != clientip.HeaderForwarded {
		t.Fatalf("parsed: %+v, %v", o.ClientAddresses, err)
	}
	if _, err := parse("--trusted-proxies=ingress.example"); err == nil || !strings.Contains(err.Error(), "--trusted-proxies") {
		t.Fatalf("bad CIDR: %v", err)
	}
	if _, err := parse("--forwarded-header=X-Real-IP"); err == nil || !strings.Contains(err.Error(), "--forwarded-header") {
		t.Fatalf("bad header: %v", err)
	}
}

// TestManagerProbeTLSFlags: the probe API's TLS listener needs its
// certificate, and the CA Secret of managed agents is passed as a bundle.
func TestManagerProbeTLSFlags(t *testing.T) {
	parse := func(args ...string) (manager.Options, error) {
		var o manager.Options
		fs := newFlagSet("manager", io.Discard)
		finish := managerFlags(fs, &o)
		if err := fs.Parse(args); err != nil {
			return o, err
		}
		return o, finish()
	}
	if _, err := parse("--probe-listen=:9444"); err == nil || !strings.Contains(err.Error(), "--probe-cert-dir") {
		t.Fatalf("a TLS listener without a certificate: %v", err)
	}
	o, err := parse("--probe-listen=:9444", "--probe-cert-dir=/certs", "--probe-server-ca-secret=uptime-operator-api-cert")
	if err != nil || o.ProbeListen != ":9444" || o.ProbeCertDir != "/certs" || o.ProbeServerCA == nil ||
		o.ProbeServerCA.Secret != "uptime-operator-api-cert" || o.ProbeServerCA.Key != "ca.crt" {
		t.Fatalf("parsed: %+v %+v, %v", o, o.ProbeServerCA, err)
	}
}
