package cli

import (
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/clientip"
	"github.com/uptime-operator/uptime-operator/internal/manager"
)

// parseManagerFlags parses args as the manager subcommand's flags.
func parseManagerFlags(args ...string) (manager.Options, error) {
	var o manager.Options
	fs := newFlagSet("manager", io.Discard)
	finish := managerFlags(fs, &o)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	return o, finish()
}

func TestManagerClientAddressFlags(t *testing.T) {
	parse := parseManagerFlags
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

// TestManagerStoreFile (issue 27 row 8): the PostgreSQL DSN, password
// included, can be read from a file (a mounted Secret) instead of the
// argument list, which every process that lists processes can read.
func TestManagerStoreFile(t *testing.T) {
	parse := parseManagerFlags
	const dsn = "postgres://uptime:s3cret@db.example:5432/uptime?sslmode=require"
	file := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(file, []byte(dsn+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parse("--store-file=" + file)
	if err != nil || o.Store != dsn {
		t.Fatalf("--store-file: store %q, %v", o.Store, err)
	}
	if o, err := parse("--store=postgres://u@h/db"); err != nil || o.Store != "postgres://u@h/db" {
		t.Fatalf("--store still works: %q, %v", o.Store, err)
	}
	if _, err := parse("--store=/data/x.db", "--store-file="+file); err == nil {
		t.Fatal("--store with --store-file was accepted")
	}
	empty := filepath.Join(t.TempDir(), "empty")
	_ = os.WriteFile(empty, nil, 0o600)
	if _, err := parse("--store-file=" + empty); err == nil {
		t.Fatal("an empty --store-file was accepted")
	}
	if _, err := parse("--store-file=" + filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing --store-file was accepted")
	}
}

// TestManagerProbeTLSFlags: the probe API's TLS listener needs its
// certificate, and the CA Secret of managed agents is passed as a bundle.
func TestManagerProbeTLSFlags(t *testing.T) {
	parse := parseManagerFlags
	if _, err := parse("--probe-listen=:9444"); err == nil || !strings.Contains(err.Error(), "--probe-cert-dir") {
		t.Fatalf("a TLS listener without a certificate: %v", err)
	}
	o, err := parse("--probe-listen=:9444", "--probe-cert-dir=/certs", "--probe-server-ca-secret=uptime-operator-api-cert")
	if err != nil || o.ProbeListen != ":9444" || o.ProbeCertDir != "/certs" || o.ProbeServerCA == nil ||
		o.ProbeServerCA.Secret != "uptime-operator-api-cert" || o.ProbeServerCA.Key != "ca.crt" {
		t.Fatalf("parsed: %+v %+v, %v", o, o.ProbeServerCA, err)
	}
}

// TestManagerCertRotationFlags: --cert-rotation turns into the rotator's
// options, the API certificate written to each distinct API cert dir; the
// DNS names are required. --secret-namespaces is a list.
func TestManagerCertRotationFlags(t *testing.T) {
	o, err := parseManagerFlags("--namespace=ops", "--secret-namespaces=team-a, team-b,", "--cert-rotation",
		"--webhook-cert-dir=/w", "--aggregated-cert-dir=/a", "--probe-listen=:9444", "--probe-cert-dir=/a",
		"--cert-rotation-webhook-dns-names=wh.ops.svc,wh.ops.svc.cluster.local", "--cert-rotation-api-dns-names=api.ops.svc",
		"--cert-rotation-mutating-webhooks=m", "--cert-rotation-validating-webhooks=v", "--cert-rotation-apiservices=v1.api.uptime-operator.io")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.SecretNamespaces, []string{"team-a", "team-b"}) {
		t.Fatalf("secret namespaces %q", o.SecretNamespaces)
	}
	r := o.CertRotation
	if r == nil || r.Namespace != "ops" || len(r.Certs) != 2 || r.Certs[0].Dir != "/w" || r.Certs[1].Dir != "/a" ||
		!slices.Equal(r.Certs[0].DNSNames, []string{"wh.ops.svc", "wh.ops.svc.cluster.local"}) ||
		!slices.Equal(r.APIServices, []string{"v1.api.uptime-operator.io"}) || !slices.Equal(r.MutatingWebhooks, []string{"m"}) {
		t.Fatalf("rotation options: %+v", r)
	}
	if o, err := parseManagerFlags(); err != nil || o.CertRotation != nil {
		t.Fatalf("default: %+v, %v", o.CertRotation, err)
	}
	if _, err := parseManagerFlags("--cert-rotation"); err == nil || !strings.Contains(err.Error(), "dns-names") {
		t.Fatalf("no DNS names: %v", err)
	}
}

// TestManagerOIDCFlags: the provider of sso status pages, its client
// secret read from a file (a mounted Secret), and an issuer without a
// client refused at start.
func TestManagerOIDCFlags(t *testing.T) {
	o, err := parseManagerFlags()
	if err != nil || o.OIDC.IssuerURL != "" || o.OIDC.GroupsClaim != "groups" || !slices.Equal(o.OIDC.Scopes, []string{"email", "profile", "groups"}) {
		t.Fatalf("defaults: %+v, %v", o.OIDC, err)
	}
	secret := filepath.Join(t.TempDir(), "client-secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err = parseManagerFlags("--oidc-issuer-url=https://login.example.com", "--oidc-client-id=pages",
		"--oidc-client-secret-file="+secret, "--oidc-scopes=email, groups", "--oidc-groups-claim=roles")
	if err != nil || o.OIDC.IssuerURL != "https://login.example.com" || o.OIDC.ClientID != "pages" || o.OIDC.ClientSecret != "s3cret" ||
		!slices.Equal(o.OIDC.Scopes, []string{"email", "groups"}) || o.OIDC.GroupsClaim != "roles" {
		t.Fatalf("parsed: %+v, %v", o.OIDC, err)
	}
	if _, err := parseManagerFlags("--oidc-issuer-url=https://login.example.com"); err == nil || !strings.Contains(err.Error(), "--oidc-client-id") {
		t.Fatalf("issuer without client: %v", err)
	}
}
