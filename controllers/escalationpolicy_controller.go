package controllers

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
)

// EscalationPolicyReconciler keeps an EscalationPolicy's Ready condition:
// False with ReferenceNotFound while a step names an AlertChannel that does
// not exist in the policy's namespace. Steps are fired by the escalator
// (package alerting), not here.
type EscalationPolicyReconciler struct {
	client.Client
	// Recorder records a Warning Event when the policy stalls (a channel
	// it names is missing); nil records none.
	Recorder record.EventRecorder
}

// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=escalationpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=escalationpolicies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=alertchannels,verbs=get;list;watch

// Reconcile brings one EscalationPolicy's status up to date.
func (r *EscalationPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	var p monv1.EscalationPolicy
	if err := r.Get(ctx, req.NamespacedName, &p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := p.DeepCopy()
	defer func() {
		setProgressConditions(&p.Status.Conditions, p.Generation, monv1.ConditionReady)
		recordStalled(r.Recorder, &p, before.Status.Conditions, p.Status.Conditions)
		patchStatus(ctx, r.Client, &p, before, !equality.Semantic.DeepEqual(before.Status, p.Status), &retErr)
	}()

	if !p.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // nothing outside the object to clean up
	}

	if err := r.reconcileReferences(ctx, &p); err != nil {
		conditions.Set(&p.Status.Conditions, p.Generation, monv1.ConditionReady, false, monv1.ReasonReconcileError, err.Error())
		return ctrl.Result{}, err
	}
	p.Status.ObservedGeneration = p.Generation
	return ctrl.Result{}, nil
}

// reconcileReferences sets Ready from the AlertChannels the steps name.
func (r *EscalationPolicyReconciler) reconcileReferences(ctx context.Context, p *monv1.EscalationPolicy) error {
	var list monv1.AlertChannelList
	if err := r.List(ctx, &list, client.InNamespace(p.Namespace)); err != nil {
		return fmt.Errorf("list alert channels: %w", err)
	}
	existing := make(map[string]bool, len(list.Items))
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp.IsZero() {
			existing[list.Items[i].Name] = true
		}
	}
	ready, reason, msg := EscalationPolicyReady(&p.Spec, existing)
	conditions.Set(&p.Status.Conditions, p.Generation, monv1.ConditionReady, ready, reason, msg)
	return nil
}

// EscalationPolicyReady computes the Ready condition of a policy from the
// names of the AlertChannels that exist in its namespace: False with
// ReferenceNotFound naming every missing channel and its step, else True.
func EscalationPolicyReady(spec *monv1.EscalationPolicySpec, existing map[string]bool) (bool, string, string) {
	var missing []string
	for i, s := range spec.Steps {
		for _, ch := range s.Channels {
			if !existing[ch.Name] {
				missing = append(missing, fmt.Sprintf("%s (step %d)", ch.Name, i+1))
			}
		}
	}
	if len(missing) > 0 {
		return false, monv1.ReasonReferenceNotFound, "alert channel not found: " + strings.Join(missing, ", ")
	}
	return true, monv1.ReasonReconciled, fmt.Sprintf("%d steps, every channel exists", len(spec.Steps))
}

// SetupWithManager registers the reconciler. It reacts to spec changes of
// policies and to AlertChannels appearing or disappearing in their
// namespace (channel status writes do not trigger it).
func (r *EscalationPolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor(EventSource)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&monv1.EscalationPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&monv1.AlertChannel{}, handler.EnqueueRequestsFromMapFunc(r.policiesNaming),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }})).
		Named("escalationpolicy").
		Complete(r)
}

// policiesNaming maps an AlertChannel to the policies of its namespace that
// name it.
func (r *EscalationPolicyReconciler) policiesNaming(ctx context.Context, obj client.Object) []reconcile.Request {
	var list monv1.EscalationPolicyList
	if err := r.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "unable to list escalation policies")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		p := &list.Items[i]
		if policyNames(&p.Spec, obj.GetName()) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)})
		}
	}
	return out
}

func policyNames(spec *monv1.EscalationPolicySpec, channel string) bool {
	for _, s := range spec.Steps {
		for _, ch := range s.Channels {
			if ch.Name == channel {
				return true
			}
		}
	}
	return false
}
