package controllers

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
)

// stalledReasons are the reasons of a False readiness condition that no
// retry clears: someone has to create (or opt in) a Secret, a probe region or the
// referenced object, pick another slug, or let the probe Deployment and its Pods in.
// Every other False reason means the controller is still getting there.
var stalledReasons = map[string]bool{
	monv1.ReasonSecretNotFound:          true,
	monv1.ReasonSecretNotAllowed:        true,
	monv1.ReasonNoRegions:               true,
	monv1.ReasonSlugTaken:               true,
	monv1.ReasonReferenceNotFound:       true,
	monv1.ReasonProbeDeploymentRejected: true,
	monv1.ReasonPodsRefused:             true,
	monv1.ReasonMonitorConflict:         true,
	monv1.ReasonMonitorRefused:          true,
}

// setProgressConditions derives the kstatus conditions Reconciling and
// Stalled of generation gen from cause, the condition type that says
// whether the object is in effect (Ready, or a Monitor's Configured, whose
// reason Ready does not repeat). A missing or True cause removes both; a
// False one with a terminal reason sets Stalled, any other False one
// Reconciling, each with the cause's reason and message, so `kubectl wait`
// and GitOps tools show the same words as the cause.
func setProgressConditions(conds *[]metav1.Condition, gen int64, cause string) {
	c := meta.FindStatusCondition(*conds, cause)
	switch {
	case c == nil || c.Status == metav1.ConditionTrue:
		meta.RemoveStatusCondition(conds, monv1.ConditionReconciling)
		meta.RemoveStatusCondition(conds, monv1.ConditionStalled)
	case stalledReasons[c.Reason]:
		reason, msg := c.Reason, c.Message
		meta.RemoveStatusCondition(conds, monv1.ConditionReconciling)
		conditions.Set(conds, gen, monv1.ConditionStalled, true, reason, msg)
	default:
		reason, msg := c.Reason, c.Message
		meta.RemoveStatusCondition(conds, monv1.ConditionStalled)
		conditions.Set(conds, gen, monv1.ConditionReconciling, true, reason, msg)
	}
}

// newlyStalled returns the Stalled condition of after when before did not
// have it with the same reason and message: the moment to tell people,
// once per problem rather than once per reconcile.
func newlyStalled(before, after []metav1.Condition) *metav1.Condition {
	now := meta.FindStatusCondition(after, monv1.ConditionStalled)
	if now == nil || now.Status != metav1.ConditionTrue {
		return nil
	}
	was := meta.FindStatusCondition(before, monv1.ConditionStalled)
	if was != nil && was.Status == metav1.ConditionTrue && was.Reason == now.Reason && was.Message == now.Message {
		return nil
	}
	return now
}

// recordStalled records a Warning Event on obj when its status became
// Stalled (see newlyStalled): the Event's reason is the Stalled reason
// (SecretNotFound, NoRegions, SlugTaken, ...), so `kubectl get events`
// and `kubectl describe` say why the object does nothing. A nil recorder
// records nothing.
func recordStalled(rec record.EventRecorder, obj runtime.Object, before, after []metav1.Condition) {
	if c := newlyStalled(before, after); c != nil && rec != nil {
		rec.Event(obj, corev1.EventTypeWarning, c.Reason, c.Message)
	}
}

// EventSource is the component of the Events the controllers record.
const EventSource = "uptime-operator-controllers"

// probeDeploymentReason is the Ready reason (and Event reason) of a failure
// to apply a region's probe Deployment: Rejected, which stalls the region,
// when the API server refused it (RBAC, an admission policy, an invalid
// object), since retrying the same Deployment cannot help; Failed, which
// the controller retries, otherwise.
func probeDeploymentReason(err error) string {
	if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return monv1.ReasonProbeDeploymentRejected
	}
	return monv1.ReasonProbeDeploymentFailed
}
