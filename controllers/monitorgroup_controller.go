package controllers

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
)

// MonitorGroupIndex indexes Monitors by the name of their group
// (spec.groupRef.name).
const MonitorGroupIndex = "spec.groupRef.name"

// MonitorGroupReconciler writes a group's status from its members' status:
// how many monitors the group holds and how many have an open incident, the
// Monitors and Down columns of `kubectl get monitorgroups`.
type MonitorGroupReconciler struct {
	client.Client
}

// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitorgroups,verbs=get;list;watch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitorgroups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitors,verbs=get;list;watch

// Reconcile counts the members of one group.
func (r *MonitorGroupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	var g monv1.MonitorGroup
	if err := r.Get(ctx, req.NamespacedName, &g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := g.DeepCopy()
	defer func() {
		setProgressConditions(&g.Status.Conditions, g.Generation, monv1.ConditionReady)
		patchStatus(ctx, r.Client, &g, before, !equality.Semantic.DeepEqual(before.Status, g.Status), &retErr)
	}()
	var members monv1.MonitorList
	if err := r.List(ctx, &members, client.InNamespace(g.Namespace), client.MatchingFields{MonitorGroupIndex: g.Name}); err != nil {
		return ctrl.Result{}, err
	}
	SetMonitorGroupStatus(&g, members.Items)
	return ctrl.Result{}, nil
}

// SetMonitorGroupStatus computes g's status from its member monitors.
func SetMonitorGroupStatus(g *monv1.MonitorGroup, members []monv1.Monitor) {
	var down int32
	for i := range members {
		if members[i].Status.OpenIncident != nil {
			down++
		}
	}
	g.Status.ObservedGeneration = g.Generation
	g.Status.Monitors, g.Status.Down = int32(len(members)), down
	conditions.Set(&g.Status.Conditions, g.Generation, monv1.ConditionReady, true, monv1.ReasonReconciled,
		fmt.Sprintf("%d monitors, %d with an open incident", len(members), down))
}

// SetupWithManager registers the reconciler and the Monitor index it reads.
// A Monitor's change requeues its group, and on a move both groups (update
// events map the old and the new object).
func (r *MonitorGroupReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &monv1.Monitor{}, MonitorGroupIndex, func(o client.Object) []string {
		if ref := o.(*monv1.Monitor).Spec.GroupRef; ref != nil {
			return []string{ref.Name}
		}
		return nil
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).For(&monv1.MonitorGroup{}).Named("monitorgroup").
		Watches(&monv1.Monitor{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			ref := o.(*monv1.Monitor).Spec.GroupRef
			if ref == nil {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: ref.Name}}}
		})).Complete(r)
}
