package controllers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
	"github.com/uptime-operator/uptime-operator/internal/oncall"
)

// OnCallScheduleReconciler shows who is on call in a schedule's status and
// comes back at the next handoff.
type OnCallScheduleReconciler struct {
	client.Client
	Now func() time.Time
}

// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=oncallschedules,verbs=get;list;watch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=oncallschedules/status,verbs=get;update;patch

// Reconcile updates one schedule's current participant.
func (r *OnCallScheduleReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	var s monv1.OnCallSchedule
	if err := r.Get(ctx, req.NamespacedName, &s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := s.DeepCopy()
	defer func() {
		setProgressConditions(&s.Status.Conditions, s.Generation, monv1.ConditionReady)
		patchStatus(ctx, r.Client, &s, before, !equality.Semantic.DeepEqual(before.Status, s.Status), &retErr)
	}()
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	s.Status.ObservedGeneration = s.Generation
	p, until, ok := oncall.Current(&s.Spec, now)
	if !ok {
		s.Status.Current, s.Status.CurrentUntil = nil, nil
		conditions.Set(&s.Status.Conditions, s.Generation, monv1.ConditionReady, true, monv1.ReasonNotStarted, "the rotation starts at "+s.Spec.StartsAt.UTC().Format(time.RFC3339))
		return ctrl.Result{RequeueAfter: s.Spec.StartsAt.Sub(now) + time.Second}, nil
	}
	s.Status.Current = &p
	t := metav1.NewTime(until)
	s.Status.CurrentUntil = &t
	conditions.Set(&s.Status.Conditions, s.Generation, monv1.ConditionReady, true, monv1.ReasonReconciled, p.Name+" is on call")
	return ctrl.Result{RequeueAfter: until.Sub(now) + time.Second}, nil
}

// SetupWithManager registers the reconciler.
func (r *OnCallScheduleReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&monv1.OnCallSchedule{}).Named("oncallschedule").Complete(r)
}
