package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/podsecurity"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// TestProbeRegionDeployments runs the real manager on envtest and checks
// that a managed region in use gets a probe Deployment placed as the region
// says, that it scales to zero when no monitor uses the region, and that the
// region's status counts its monitors.
func TestProbeRegionDeployments(t *testing.T) {
	env := testenv.Use(t, env)
	// The region's name is the test's own: other tests' regions and
	// Monitors share the control plane and the process's metrics.
	const ns, code = probeNS, "placed"
	ctx := context.Background()
	c := env.Client
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(c.Create(ctx, &monv1.ProbeRegion{
		ObjectMeta: metav1.ObjectMeta{Name: code},
		Spec: monv1.ProbeRegionSpec{Placement: monv1.ProbePlacement{
			Mode: monv1.PlacementManaged, Replicas: 2,
			NodeSelector: map[string]string{"topology.kubernetes.io/region": "eu-west-1"},
			Tolerations:  []corev1.Toleration{{Key: "probes", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		}},
	}))
	m := &monv1.Monitor{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: env.Namespace(t, nil)},
		Spec:       monv1.MonitorSpec{URL: "https://example.com/", Regions: []string{code}},
	}
	check(c.Create(ctx, m))

	dep := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: ns, Name: "uptime-operator-probe-" + code}
	waitFor(t, "the probe deployment", func() bool {
		return c.Get(ctx, key, dep) == nil && dep.Spec.Replicas != nil && *dep.Spec.Replicas == 2
	})
	ps := dep.Spec.Template.Spec
	if ps.NodeSelector["topology.kubernetes.io/region"] != "eu-west-1" || len(ps.Tolerations) != 1 {
		t.Errorf("placement not applied: nodeSelector %v tolerations %v", ps.NodeSelector, ps.Tolerations)
	}
	ctr := ps.Containers[0]
	if ctr.Image != "registry.example/uptime-operator:v1" || !slices.Contains(ctr.Args, "--region") || !slices.Contains(ctr.Args, code) {
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
	checkProbeCredentials(t, ps, ctr, code)
	checkSecureMetrics(t, ps, ctr)
	if ctr.SecurityContext == nil || *ctr.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("pod identity/security: sa %q security %+v", ps.ServiceAccountName, ctr.SecurityContext)
	}
	// The Pod template passes Pod Security baseline and restricted (issue 28
	// row 1): ping through the ping_group_range sysctl, no NET_RAW.
	if v := podsecurity.Violations(&dep.Spec.Template.ObjectMeta, &ps); len(v) != 0 {
		t.Errorf("the probe Pod template is refused by Pod Security: %v", v)
	}
	if len(ps.ImagePullSecrets) != 1 || ps.ImagePullSecrets[0].Name != "registry-creds" || ctr.Resources.Requests.Cpu().IsZero() {
		t.Errorf("pull secrets %v resources %+v", ps.ImagePullSecrets, ctr.Resources)
	}
	// Two replicas: a disruption budget of one, owned by the region.
	pdb := &policyv1.PodDisruptionBudget{}
	waitFor(t, "the probe disruption budget", func() bool { return c.Get(ctx, key, pdb) == nil })
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.Selector.MatchLabels["uptime-operator.io/region"] != code {
		t.Errorf("disruption budget spec %+v", pdb.Spec)
	}
	tmpVol, tmpMount := volumeNamed(ps.Volumes, "tmp"), mountNamed(ctr.VolumeMounts, "tmp")
	if !*ctr.SecurityContext.ReadOnlyRootFilesystem || tmpMount == nil || tmpMount.MountPath != "/tmp" ||
		tmpVol == nil || tmpVol.EmptyDir == nil {
		t.Errorf("a read-only root needs a writable /tmp (emptyDir): mounts %+v volumes %+v", ctr.VolumeMounts, ps.Volumes)
	}
	var region monv1.ProbeRegion
	waitFor(t, "the region's monitor count", func() bool {
		return c.Get(ctx, client.ObjectKey{Name: code}, &region) == nil && region.Status.Monitors == 1
	}, func() string {
		var list monv1.MonitorList
		_ = c.List(ctx, &list)
		var using []string
		for _, m := range list.Items {
			if slices.Contains(monitor.Regions(&m), code) {
				using = append(using, m.Namespace+"/"+m.Name)
			}
		}
		return fmt.Sprintf("status.monitors=%d, monitors using the region now: %v", region.Status.Monitors, using)
	})
	// The chart's offline alert joins on this gauge to skip idle regions.
	regionMonitors := metrics.RegionMonitors.WithLabelValues(code)
	waitFor(t, "uptime_operator_probe_region_monitors to count the monitor", func() bool {
		return gaugeValue(regionMonitors) == 1
	})

	// Pods refused (envtest runs no Deployment controller, so the test
	// writes what it would: the ReplicaSet's FailedCreate as the
	// Deployment's ReplicaFailure): the region says why.
	refusal := `pods "uptime-operator-probe-eu-west-6d9f" is forbidden: violates PodSecurity "restricted:latest": seccompProfile`
	dep.Status.Conditions = []appsv1.DeploymentCondition{{
		Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: refusal,
		LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}
	check(c.Status().Update(ctx, dep))
	waitFor(t, "the region's ProbePods condition to show the refusal", func() bool {
		if c.Get(ctx, client.ObjectKey{Name: code}, &region) != nil {
			return false
		}
		pods := meta.FindStatusCondition(region.Status.Conditions, monv1.ProbeRegionConditionProbePods)
		ready := meta.FindStatusCondition(region.Status.Conditions, monv1.ConditionReady)
		return pods != nil && pods.Status == metav1.ConditionFalse && pods.Reason == monv1.ReasonPodsRefused &&
			strings.Contains(pods.Message, refusal) && ready != nil && ready.Reason == monv1.ReasonPodsRefused
	})

	// Pausing the only monitor leaves the region unused: scale to zero.
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.Paused = true
	check(c.Patch(ctx, m, patch))
	waitFor(t, "the deployment to scale to zero", func() bool {
		return c.Get(ctx, key, dep) == nil && dep.Spec.Replicas != nil && *dep.Spec.Replicas == 0
	})
	waitFor(t, "uptime_operator_probe_region_monitors to say the region is idle", func() bool {
		return gaugeValue(regionMonitors) == 0
	})
	waitFor(t, "the disruption budget to go with the replicas", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, key, &policyv1.PodDisruptionBudget{}))
	})
}

// waitFor waits up to a minute for ok; state, when given, says what was
// seen instead.
func waitFor(t *testing.T, what string, ok func() bool, state ...func() string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			for _, s := range state {
				what += " (" + s() + ")"
			}
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// gaugeValue reads a gauge's value.
func gaugeValue(g prometheus.Gauge) float64 {
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		return -1
	}
	return m.GetGauge().GetValue()
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
