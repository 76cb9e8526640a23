//go:build e2e

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The suite's private CA, as a cluster admin would have one: the receiver
// Pod serves a certificate it issued for its Service DNS name, and the chart
// is installed with trustedCA.configMap naming a ConfigMap that holds it.
const (
	trustedCAConfigMap = "e2e-trusted-ca"
	receiverTLSSecret  = "e2e-receiver-tls"
)

var (
	testCAOnce                         sync.Once
	testCAPEM, testCertPEM, testKeyPEM []byte
)

// testCA issues the CA and the receiver's certificate once per run.
func testCA() (caPEM, certPEM, keyPEM []byte) {
	testCAOnce.Do(func() { testCAPEM, testCertPEM, testKeyPEM = issueTestCA() })
	return testCAPEM, testCertPEM, testKeyPEM
}

func issueTestCA() (caPEM, certPEM, keyPEM []byte) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "uptime-operator e2e test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	Expect(err).NotTo(HaveOccurred())
	ca, err := x509.ParseCertificate(caDER)
	Expect(err).NotTo(HaveOccurred())

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "e2e-receiver.default.svc"},
		DNSNames: []string{
			"e2e-receiver.default.svc.cluster.local", "e2e-receiver.default.svc", "e2e-receiver.default",
		},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// installTestCA creates the release namespace if needed, the ConfigMap with
// the test CA there (before helm install, which mounts it), and the
// receiver's serving certificate Secret in the work namespace.
func installTestCA() {
	caPEM, certPEM, keyPEM := testCA()
	createReleaseNamespace()
	objs := []map[string]any{
		{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": trustedCAConfigMap, "namespace": ns, "labels": map[string]string{"e2e": "uptime"}},
			"data":     map[string]string{"ca.crt": string(caPEM)},
		},
		{
			"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
			"metadata":   map[string]any{"name": receiverTLSSecret, "namespace": workNS, "labels": map[string]string{"e2e": "uptime"}},
			"stringData": map[string]string{"tls.crt": string(certPEM), "tls.key": string(keyPEM)},
		},
	}
	for _, o := range objs {
		b, err := json.Marshal(o)
		Expect(err).NotTo(HaveOccurred())
		apply(string(b))
	}
}

// createReleaseNamespace creates the release namespace enforcing Pod
// Security "restricted", as a platform team's cluster would: every Pod of
// the product (manager, probe agents) must be admitted there.
func createReleaseNamespace() {
	GinkgoHelper()
	_, _ = kubectl("create", "namespace", ns)
	mustKubectl("label", "--overwrite", "namespace", ns,
		"pod-security.kubernetes.io/enforce=restricted", "pod-security.kubernetes.io/enforce-version=latest",
		"pod-security.kubernetes.io/warn=restricted")
}
