package trust

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
)

// roots is the pool in use; nil means the system roots alone.
var roots atomic.Pointer[x509.CertPool]

// Roots returns the pool for tls.Config.RootCAs: the system roots plus the
// loaded bundle, or nil (which crypto/tls reads as the system roots) when no
// bundle is loaded.
func Roots() *x509.CertPool { return roots.Load() }

// ClientConfig returns a TLS client configuration that verifies servers
// against Roots, for transports that set no other TLS options.
func ClientConfig() *tls.Config {
	return &tls.Config{RootCAs: Roots(), MinVersion: tls.VersionTLS12}
}

// LoadFile adds the PEM certificates of the file at path to the system roots
// and makes the result the pool in use. An empty path leaves the system
// roots alone. A file that cannot be read, or holds no certificate, is an
// error: a bundle that silently trusts nothing would fail every check of an
// internal service with a confusing TLS error.
func LoadFile(path string) error {
	if path == "" {
		return nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read trusted CA bundle: %w", err)
	}
	pool, err := Pool(raw)
	if err != nil {
		return fmt.Errorf("trusted CA bundle %s: %w", path, err)
	}
	roots.Store(pool)
	return nil
}

// Use makes pool the pool in use (nil: the system roots alone) and returns a
// function that restores the previous one. Tests use it.
func Use(pool *x509.CertPool) (restore func()) {
	prev := roots.Swap(pool)
	return func() { roots.Store(prev) }
}

// Pool returns the system roots plus every certificate of the PEM bundle.
// Blocks other than certificates are refused, so a private key pasted into
// the bundle by mistake is reported rather than ignored.
func Pool(bundle []byte) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	n := 0
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("PEM block %d is a %q, not a CERTIFICATE", n+1, block.Type)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", n+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return pool, nil
}
