package controllers

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
)

// pingGroupRange is the safe sysctl that lets every group open unprivileged
// ICMP sockets, so ping monitors work without NET_RAW. Pod Security baseline
// and restricted both allow it (the chart's remote-mode agent sets the same).
var pingGroupRange = corev1.Sysctl{Name: "net.ipv4.ping_group_range", Value: "0 2147483647"}

// ProbeDefaultResources are the agent container's resources when a region
// sets none: small requests so the scheduler counts the agent, and a memory
// limit so a runaway check cannot take the node's memory.
func ProbeDefaultResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
	}
}

// applyProbePodSecurity makes a probe Pod pass Pod Security "restricted":
// non-root with the RuntimeDefault seccomp profile, a read-only root, no
// privilege escalation and every capability dropped. Ping uses the
// ping_group_range sysctl; NET_RAW is added only when the region asks for
// it (placement.netRaw), which baseline and restricted refuse.
func applyProbePodSecurity(pr *monv1.ProbeRegion, ps *corev1.PodSpec, c *corev1.Container) {
	ps.SecurityContext = &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		Sysctls:        []corev1.Sysctl{pingGroupRange},
	}
	caps := &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	if pr.Spec.Placement.NetRaw {
		caps.Add = []corev1.Capability{"NET_RAW"}
	}
	c.SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		Capabilities:             caps,
	}
}

// applyProbePlacement applies the region's pod template override (the
// placement fields) to a probe Pod: node selector, tolerations, affinity,
// spread, priority, pull secrets (the manager's first, then the region's)
// and resources (ProbeDefaultResources when the region sets none). With
// more than one replica and no spread of its own, the agents spread softly
// over nodes, so one node's loss does not take the whole region.
func applyProbePlacement(pr *monv1.ProbeRegion, o ProbeDeploymentOptions, selector map[string]string, ps *corev1.PodSpec, c *corev1.Container) {
	p := pr.Spec.Placement
	ps.NodeSelector = p.NodeSelector
	ps.Tolerations = p.Tolerations
	ps.Affinity = p.Affinity
	ps.PriorityClassName = p.PriorityClassName
	ps.ImagePullSecrets = append(append([]corev1.LocalObjectReference(nil), o.ImagePullSecrets...), p.ImagePullSecrets...)
	spread := make([]corev1.TopologySpreadConstraint, 0, len(p.TopologySpreadConstraints))
	for _, tsc := range p.TopologySpreadConstraints {
		if tsc.LabelSelector == nil {
			tsc.LabelSelector = &metav1.LabelSelector{MatchLabels: selector}
		}
		spread = append(spread, tsc)
	}
	if len(spread) == 0 && p.Replicas > 1 {
		spread = append(spread, corev1.TopologySpreadConstraint{
			MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: selector},
		})
	}
	ps.TopologySpreadConstraints = spread
	if len(spread) == 0 {
		ps.TopologySpreadConstraints = nil
	}
	c.Resources = ProbeDefaultResources()
	if p.Resources != nil {
		c.Resources = *p.Resources
	}
}

// reconcileProbePDB keeps a PodDisruptionBudget (at most one agent down at
// a time) beside a probe Deployment that runs more than one replica, so a
// node drain cannot take a whole region offline at once; with one replica
// or none it deletes the budget, which would otherwise block every drain.
func (r *ProbeRegionReconciler) reconcileProbePDB(ctx context.Context, pr *monv1.ProbeRegion, dep *appsv1.Deployment) error {
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: dep.Name, Namespace: dep.Namespace}}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas <= 1 {
		if err := r.Delete(ctx, pdb); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete probe disruption budget: %w", err)
		}
		return nil
	}
	_, err := controllerutil.CreateOrPatch(ctx, r.Client, pdb, func() error {
		pdb.Labels = dep.Spec.Template.Labels
		pdb.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		pdb.Spec.MinAvailable = nil
		pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: dep.Spec.Selector.MatchLabels}
		return controllerutil.SetControllerReference(pr, pdb, r.Scheme())
	})
	if err != nil {
		return fmt.Errorf("apply probe disruption budget: %w", err)
	}
	return nil
}

// probePodsCondition says whether a managed region's probe Deployment can
// create its Pods. The Deployment controller copies a ReplicaSet's
// FailedCreate (Pod Security admission, a ResourceQuota, a missing
// ServiceAccount) into the Deployment's ReplicaFailure condition; without
// this condition a refused region only showed an empty ONLINE column.
func probePodsCondition(dep *appsv1.Deployment) (bool, string, string) {
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			return false, monv1.ReasonPodsRefused, fmt.Sprintf("deployment %s cannot create pods: %s: %s", dep.Name, c.Reason, c.Message)
		}
	}
	if dep.Spec.Replicas != nil && *dep.Spec.Replicas == 0 {
		return true, monv1.ReasonScaledToZero, "no monitor uses the region: its probe deployment runs no pods"
	}
	return true, monv1.ReasonPodsCreated, fmt.Sprintf("deployment %s: %d of %d pods ready", dep.Name, dep.Status.ReadyReplicas, ptr.Deref(dep.Spec.Replicas, 1))
}

// probeDeploymentFor reads a region's probe Deployment, nil when it does
// not exist (yet).
func (r *ProbeRegionReconciler) probeDeploymentFor(ctx context.Context, code string) (*appsv1.Deployment, error) {
	dep := &appsv1.Deployment{}
	err := r.Get(ctx, client.ObjectKey{Namespace: r.Probe.Namespace, Name: probeDeploymentName(code)}, dep)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get probe deployment: %w", err)
	}
	return dep, nil
}

// reconcileProbePods keeps the disruption budget of a managed region's
// probe Deployment and records on the region whether its Pods can be
// created (the ProbePods condition; the Ready condition names the refusal
// too, since it is why no agent comes online).
func (r *ProbeRegionReconciler) reconcileProbePods(ctx context.Context, pr *monv1.ProbeRegion) error {
	if r.Probe.Namespace == "" || r.Probe.Image == "" {
		return nil
	}
	dep, err := r.probeDeploymentFor(ctx, monitor.RegionCode(pr))
	if err != nil || dep == nil {
		return err
	}
	if err := r.reconcileProbePDB(ctx, pr, dep); err != nil {
		return err
	}
	ok, reason, msg := probePodsCondition(dep)
	conditions.Set(&pr.Status.Conditions, pr.Generation, monv1.ProbeRegionConditionProbePods, ok, reason, msg)
	return nil
}
