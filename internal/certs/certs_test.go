package certs

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"testing"
)

func TestIssueVerifies(t *testing.T) {
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _, err := ca.Issue("front-proxy-client", nil, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("client cert does not verify: %v", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Fatal("a client certificate must not serve")
	}
	srv, err := ca.ServingCert("svc.ns.svc")
	if err != nil || len(srv.Certificate) == 0 {
		t.Fatalf("serving cert: %v", err)
	}
}

// TestIssueUser: a Kubernetes user's client certificate carries the user as
// its common name and the groups as organizations (what kube-apiserver's
// client-certificate authentication reads), verifies for client auth
// against the CA, and its key matches it.
func TestIssueUser(t *testing.T) {
	ca, err := NewCA("client-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueUser("dev-admin", []string{"system:masters", "team"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatalf("certificate and key do not match: %v", err)
	}
	block, _ := pem.Decode(certPEM)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	// The organizations form one DER SET, whose members are sorted.
	orgs := slices.Sorted(slices.Values(leaf.Subject.Organization))
	if leaf.Subject.CommonName != "dev-admin" || !slices.Equal(orgs, []string{"system:masters", "team"}) {
		t.Errorf("subject %v", leaf.Subject)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate does not verify: %v", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("a user's certificate verifies for serving")
	}
}
