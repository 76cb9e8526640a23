package controllers

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/podsecurity"
)

// TestProbePodsCondition: a ReplicaFailure of the probe Deployment (Pod
// Security refusing the Pods, issue 28 row 1) reaches the region as
// ProbePods=False with the Deployment's message, and Ready says it too.
func TestProbePodsCondition(t *testing.T) {
	refused := appsv1.DeploymentCondition{
		Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
		Message: `pods "uptime-operator-probe-eu-x" is forbidden: violates PodSecurity "restricted:latest": unrestricted capabilities`,
	}
	for _, tc := range []struct {
		name       string
		replicas   int32
		conds      []appsv1.DeploymentCondition
		ok         bool
		reason     string
		msgContain string
	}{
		{"pods created", 2, nil, true, monv1.ReasonPodsCreated, "of 2 pods ready"},
		{"scaled to zero", 0, nil, true, monv1.ReasonScaledToZero, "no monitor"},
		{"refused by pod security", 1, []appsv1.DeploymentCondition{refused}, false, monv1.ReasonPodsRefused, `violates PodSecurity "restricted:latest"`},
		{"failure resolved", 1, []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionFalse}}, true, monv1.ReasonPodsCreated, "0 of 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "uptime-operator-probe-eu"},
				Spec: appsv1.DeploymentSpec{Replicas: ptr.To(tc.replicas)}, Status: appsv1.DeploymentStatus{Conditions: tc.conds}}
			ok, reason, msg := probePodsCondition(dep)
			if ok != tc.ok || reason != tc.reason || !strings.Contains(msg, tc.msgContain) {
				t.Fatalf("probePodsCondition = %v %s %q, want %v %s containing %q", ok, reason, msg, tc.ok, tc.reason, tc.msgContain)
			}
			if ok {
				return
			}
			pr := &monv1.ProbeRegion{Spec: monv1.ProbeRegionSpec{Placement: monv1.ProbePlacement{Mode: monv1.PlacementManaged}}}
			pr.Status.Conditions = []metav1.Condition{{Type: monv1.ProbeRegionConditionProbePods, Status: metav1.ConditionFalse, Reason: reason, Message: msg}}
			if ready, reason, msg := RegionReadiness(pr, 1); ready || reason != monv1.ReasonPodsRefused || msg == "" {
				t.Fatalf("RegionReadiness = %v %s %q, want not ready, PodsRefused", ready, reason, msg)
			}
		})
	}
}

// TestProbePodSecurity: the probe Pod passes Pod Security baseline and
// restricted by default (ping through the ping_group_range sysctl), and a
// region that asks for NET_RAW gets it (and is then refused by both, as
// documented on placement.netRaw).
func TestProbePodSecurity(t *testing.T) {
	build := func(p monv1.ProbePlacement) corev1.PodSpec {
		pr := &monv1.ProbeRegion{Spec: monv1.ProbeRegionSpec{Placement: p}}
		var ps corev1.PodSpec
		c := corev1.Container{Name: "probe", Image: "uptime-operator:v1"}
		applyProbePodSecurity(pr, &ps, &c)
		applyProbePlacement(pr, ProbeDeploymentOptions{}, map[string]string{"a": "b"}, &ps, &c)
		ps.Containers = []corev1.Container{c}
		return ps
	}
	ps := build(monv1.ProbePlacement{})
	if v := podsecurity.Violations(&metav1.ObjectMeta{}, &ps); len(v) != 0 {
		t.Fatalf("default probe Pod refused: %v", v)
	}
	if s := ps.SecurityContext.Sysctls; len(s) != 1 || s[0].Name != "net.ipv4.ping_group_range" {
		t.Errorf("sysctls = %v, want net.ipv4.ping_group_range", s)
	}
	sc := ps.Containers[0].SecurityContext
	if !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || !*sc.RunAsNonRoot || len(sc.Capabilities.Add) != 0 {
		t.Errorf("container security context %+v", sc)
	}
	if r := ps.Containers[0].Resources; r.Requests.Cpu().String() != "50m" || r.Limits.Memory().String() != "256Mi" {
		t.Errorf("default resources = %+v", r)
	}
	netRaw := build(monv1.ProbePlacement{NetRaw: true})
	if add := netRaw.Containers[0].SecurityContext.Capabilities.Add; len(add) != 1 || add[0] != "NET_RAW" {
		t.Errorf("netRaw: capabilities add = %v", add)
	}
	if v := podsecurity.Violations(&metav1.ObjectMeta{}, &netRaw); len(v) != 2 {
		t.Errorf("netRaw must fail baseline and restricted, got %v", v)
	}
}

// TestProbePlacement: the pod template override reaches the Pod, with the
// manager's pull secrets first and a default spread for several replicas.
func TestProbePlacement(t *testing.T) {
	sel := map[string]string{"uptime-operator.io/region": "eu"}
	pr := &monv1.ProbeRegion{Spec: monv1.ProbeRegionSpec{Placement: monv1.ProbePlacement{
		Replicas:          3,
		ImagePullSecrets:  []corev1.LocalObjectReference{{Name: "region-pull"}},
		PriorityClassName: "probes",
		Affinity:          &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}},
		Resources:         &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
	}}}
	var ps corev1.PodSpec
	var c corev1.Container
	applyProbePlacement(pr, ProbeDeploymentOptions{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "manager-pull"}}}, sel, &ps, &c)
	if len(ps.ImagePullSecrets) != 2 || ps.ImagePullSecrets[0].Name != "manager-pull" || ps.ImagePullSecrets[1].Name != "region-pull" {
		t.Errorf("imagePullSecrets = %v", ps.ImagePullSecrets)
	}
	if ps.PriorityClassName != "probes" || ps.Affinity == nil || c.Resources.Limits != nil {
		t.Errorf("override not applied: priority %q affinity %v resources %+v", ps.PriorityClassName, ps.Affinity, c.Resources)
	}
	if tsc := ps.TopologySpreadConstraints; len(tsc) != 1 || tsc[0].TopologyKey != corev1.LabelHostname || tsc[0].LabelSelector.MatchLabels["uptime-operator.io/region"] != "eu" {
		t.Errorf("default spread = %+v", tsc)
	}
	pr.Spec.Placement.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule}}
	applyProbePlacement(pr, ProbeDeploymentOptions{}, sel, &ps, &c)
	if tsc := ps.TopologySpreadConstraints; len(tsc) != 1 || tsc[0].TopologyKey != "topology.kubernetes.io/zone" || tsc[0].LabelSelector == nil {
		t.Errorf("region spread = %+v", tsc)
	}
	if pr.Spec.Placement.TopologySpreadConstraints[0].LabelSelector != nil {
		t.Errorf("applyProbePlacement changed the region's spec")
	}
}
