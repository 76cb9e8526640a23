package controllers_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// probeNS is the manager's own namespace: probe Deployments, region token
// Secrets.
const probeNS = "uptime-operator-system"

// env is the control plane and manager the package's tests share (see
// package testenv); each test works in namespaces and regions of its own.
var env *testenv.Env

// TestMain starts one control plane and the real manager for the package,
// configured as an install with managed probe Deployments (image, trusted
// CA bundle, pull secret, probe API CA, agents' metrics behind authentication), a direct listener and private
// targets allowed: what any of the tests needs.
func TestMain(m *testing.M) {
	testenv.Main(m, manager.Options{
		Namespace: probeNS, ProbeImage: "registry.example/uptime-operator:v1", ProbeServerURL: "https://uptime-operator-api." + probeNS + ".svc",
		ProbeTrustedCA:        &trust.BundleRef{ConfigMap: "company-ca", Key: "bundle.pem"},
		ProbeImagePullSecrets: []string{"registry-creds"},
		ProbeServerCA:         &trust.BundleRef{Secret: "uptime-operator-api-cert"},
		APIListen:             "127.0.0.1:0", AllowPrivateTargets: true,
		// The agents serve /metrics as the manager's are (no manager
		// metrics listener here: no MetricsAddr).
		MetricsSecure: true,
	}, func(e *testenv.Env) error {
		env = e
		return e.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeNS}})
	})
}
