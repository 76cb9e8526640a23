package controllers_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// TestProbeRegionDeployments runs the real manager on envtest and checks
// that a managed region in use gets a probe Deployment placed as the region
// says, that it scales to zero when no monitor uses the region, and that the
// region's status counts its monitors.
func TestProbeRegionDeployments(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" && os.Getenv("CI") != "true" {
		t.Skip("KUBEBUILDER_ASSETS is not set (make test sets it)")
	}
	const ns = "uptime-operator-system"
	env, err := testenv.Start(manager.Options{
		Namespace: ns, ProbeImage: "registry.example/uptime-operator:v1", ProbeServerURL: "https://uptime-operator-api." + ns + ".svc",
		Store: filepath.Join(t.TempDir(), "uptime.db"), SkipNameValidation: true,
		ProbeTrustedCA: &trust.BundleRef{ConfigMap: "company-ca", Key: "bundle.pem"},
		ProbeServerCA:  &trust.BundleRef{Secret: "uptime-operator-api-cert"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	ctx := context.Background()
	c := env.Client
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	check(c.Create(ctx, &monv1.ProbeRegion{
		ObjectMeta: metav1.ObjectMeta{Name: "eu-west"},
		Spec: monv1.ProbeRegionSpec{Placement: monv1.ProbePlacement{
			Mode: monv1.PlacementManaged, Replicas: 2,
			NodeSelector: map[string]string{"topology.kubernetes.io/region": "eu-west-1"},
			Tolerations:  []corev1.Toleration{{Key: "probes", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		}},
	}))
	m := &monv1.Monitor{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       monv1.MonitorSpec{URL: "https://example.com/", Regions: []string{"eu-west"}},
	}
	check(c.Create(ctx, m))

	dep := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: ns, Name: "uptime-operator-probe-eu-west"}
	waitFor(t, "the probe deployment", func() bool {
		return c.Get(ctx, key, dep) == nil && dep.Spec.Replicas != nil && *dep.Spec.Replicas == 2
	})
	ps := dep.Spec.Template.Spec
	if ps.NodeSelector["topology.kubernetes.io/region"] != "eu-west-1" || len(ps.Tolerations) != 1 {
		t.Errorf("placement not applied: nodeSelector %v tolerations %v", ps.NodeSelector, ps.Tolerations)
	}
	ctr := ps.Containers[0]
	if ctr.Image != "registry.example/uptime-operator:v1" || !slices.Contains(ctr.Args, "--region") || !slices.Contains(ctr.Args, "eu-west") {
		t.Errorf("container: image %s args %v", ctr.Image, ctr.Args)
	}
	// The trusted CA bundle is mounted and handed to the agent.
	caVol, caMount := volumeNamed(ps.Volumes, "trusted-ca"), mountNamed(ctr.VolumeMounts, "trusted-ca")
	if caVol == nil || caVol.ConfigMap == nil || caVol.ConfigMap.Name != "company-ca" ||
		len(caVol.ConfigMap.Items) != 1 || caVol.ConfigMap.Items[0].Key != "bundle.pem" ||
		caMount == nil || caMount.MountPath != "/etc/uptime-operator/trusted-ca" ||
		!slices.Contains(ctr.Args, "--trusted-ca-file") || !slices.Contains(ctr.Args, "/etc/uptime-operator/trusted-ca/ca.crt") {
		t.Errorf("trusted CA bundle not passed: volumes %+v mounts %+v args %v", ps.Volumes, ctr.VolumeMounts, ctr.Args)
	}
	checkProbeCredentials(t, ps, ctr, "eu-west")
	if ctr.SecurityContext == nil || *ctr.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("pod identity/security: sa %q security %+v", ps.ServiceAccountName, ctr.SecurityContext)
	}
	tmpVol, tmpMount := volumeNamed(ps.Volumes, "tmp"), mountNamed(ctr.VolumeMounts, "tmp")
	if !*ctr.SecurityContext.ReadOnlyRootFilesystem || tmpMount == nil || tmpMount.MountPath != "/tmp" ||
		tmpVol == nil || tmpVol.EmptyDir == nil {
		t.Errorf("a read-only root needs a writable /tmp (emptyDir): mounts %+v volumes %+v", ctr.VolumeMounts, ps.Volumes)
	}
	var region monv1.ProbeRegion
	waitFor(t, "the region's monitor count", func() bool {
		return c.Get(ctx, client.ObjectKey{Name: "eu-west"}, &region) == nil && region.Status.Monitors == 1
	})

	// Pausing the only monitor leaves the region unused: scale to zero.
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.Paused = true
	check(c.Patch(ctx, m, patch))
	waitFor(t, "the deployment to scale to zero", func() bool {
		return c.Get(ctx, key, dep) == nil && dep.Spec.Replicas != nil && *dep.Spec.Replicas == 0
	})
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func volumeNamed(vs []corev1.Volume, name string) *corev1.Volume {
	for i := range vs {
		if vs[i].Name == name {
			return &vs[i]
		}
	}
	return nil
}

func mountNamed(ms []corev1.VolumeMount, name string) *corev1.VolumeMount {
	for i := range ms {
		if ms[i].Name == name {
			return &ms[i]
		}
	}
	return nil
}
