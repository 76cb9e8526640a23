package testutil

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/certs"
)

// PrivateCAServer starts an HTTPS server on loopback whose certificate (for
// 127.0.0.1, ::1 and localhost) is signed by a fresh private CA, as an
// internal service's would be, and returns it with the CA's PEM
// certificate. Clients that trust only the system roots refuse it.
func PrivateCAServer(t testing.TB, h http.Handler) (srv *httptest.Server, caPEM []byte) {
	t.Helper()
	ca, err := certs.NewCA("uptime-operator test private CA")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue("internal.test", []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, false)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv = httptest.NewUnstartedServer(h)
	// Refused handshakes are what the tests expect; keep them out of the log.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, ca.CertPEM
}
