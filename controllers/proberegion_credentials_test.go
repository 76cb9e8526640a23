package controllers_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/uptime-operator/uptime-operator/internal/monitor"
)

// checkProbeCredentials checks what a region's probe pod talks to the
// probe API with: the region's own ServiceAccount, no token for
// kube-apiserver, a projected token for the probe audience passed as
// --token-file, and only the ca.crt of the API certificate's Secret passed
// as --server-ca-file. On main every region ran as the one shared
// ServiceAccount with its kube-apiserver token, which the probe API
// accepted for any region.
func checkProbeCredentials(t *testing.T, ps corev1.PodSpec, ctr corev1.Container, code string) {
	t.Helper()
	if ps.ServiceAccountName != monitor.RegionServiceAccount(code) || ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		t.Errorf("service account %q, automount %v; want the region's own, without a kube-apiserver token",
			ps.ServiceAccountName, ps.AutomountServiceAccountToken)
	}
	tok := volumeNamed(ps.Volumes, "probe-token")
	if tok == nil || tok.Projected == nil || len(tok.Projected.Sources) != 1 || tok.Projected.Sources[0].ServiceAccountToken == nil ||
		tok.Projected.Sources[0].ServiceAccountToken.Audience != monitor.ProbeTokenAudience {
		t.Errorf("probe token volume: %+v", tok)
	}
	if m := mountNamed(ctr.VolumeMounts, "probe-token"); m == nil || !argFollows(ctr.Args, "--token-file", m.MountPath+"/token") {
		t.Errorf("token not passed: mount %+v args %v", m, ctr.Args)
	}
	ca := volumeNamed(ps.Volumes, "probe-server-ca")
	if ca == nil || ca.Secret == nil || ca.Secret.SecretName != "uptime-operator-api-cert" ||
		len(ca.Secret.Items) != 1 || ca.Secret.Items[0].Key != "ca.crt" {
		t.Errorf("server CA volume: %+v; want only ca.crt of the API certificate's Secret", ca)
	}
	if m := mountNamed(ctr.VolumeMounts, "probe-server-ca"); m == nil || !argFollows(ctr.Args, "--server-ca-file", m.MountPath+"/ca.crt") {
		t.Errorf("server CA not passed: mount %+v args %v", m, ctr.Args)
	}
}

// argFollows reports whether flag is followed by value in args.
func argFollows(args []string, flag, value string) bool {
	i := slices.Index(args, flag)
	return i >= 0 && i+1 < len(args) && args[i+1] == value
}

// checkSecureMetrics checks a probe pod whose agent serves /metrics as the
// manager's --metrics-secure does: --metrics-listen :8443 as the "metrics"
// port (the health port 8081 apart), and a kube-apiserver token with the
// cluster's CA where in-cluster configuration reads them, to review the
// scrapes with (the token is not automounted).
func checkSecureMetrics(t *testing.T, ps corev1.PodSpec, ctr corev1.Container) {
	t.Helper()
	if !argFollows(ctr.Args, "--metrics-listen", ":8443") {
		t.Errorf("args %v; want --metrics-listen :8443", ctr.Args)
	}
	want := []corev1.ContainerPort{{Name: "health", ContainerPort: 8081}, {Name: "metrics", ContainerPort: 8443}}
	if !slices.EqualFunc(ctr.Ports, want, func(a, b corev1.ContainerPort) bool { return a.Name == b.Name && a.ContainerPort == b.ContainerPort }) {
		t.Errorf("ports %+v, want %+v", ctr.Ports, want)
	}
	tok := volumeNamed(ps.Volumes, "kube-api-token")
	if tok == nil || tok.Projected == nil || len(tok.Projected.Sources) != 2 || tok.Projected.Sources[0].ServiceAccountToken == nil ||
		tok.Projected.Sources[0].ServiceAccountToken.Audience != "" || tok.Projected.Sources[1].ConfigMap == nil ||
		tok.Projected.Sources[1].ConfigMap.Name != "kube-root-ca.crt" {
		t.Errorf("kube-apiserver token volume: %+v", tok)
	}
	if m := mountNamed(ctr.VolumeMounts, "kube-api-token"); m == nil || m.MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" {
		t.Errorf("kube-apiserver token mount: %+v", m)
	}
}
