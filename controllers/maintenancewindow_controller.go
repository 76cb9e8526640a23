package controllers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
	"github.com/uptime-operator/uptime-operator/internal/maintenance"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// MaintenanceAlerts builds maintenance.started and maintenance.ended events.
type MaintenanceAlerts interface {
	MaintenanceEvents(ctx context.Context, kind string, w *monv1.MaintenanceWindow, start, end time.Time) ([]store.OutboxEvent, error)
}

// EventQueue stores outbox events.
type EventQueue interface {
	EnqueueEvents(ctx context.Context, events ...store.OutboxEvent) error
}

// MaintenanceWindowReconciler keeps a window's live state (scheduled →
// ongoing → completed, or cancelled) and announces starts and ends.
type MaintenanceWindowReconciler struct {
	client.Client
	Alerts MaintenanceAlerts
	Events EventQueue
	// Subscribers hears of starts and ends for status page subscribers; may
	// be nil.
	Subscribers MaintenanceSubscribers
	Now         func() time.Time
}

// MaintenanceSubscribers notifies status page subscribers of maintenance;
// occurrence is the start of the occurrence that started or ended, so each
// transition is announced once.
type MaintenanceSubscribers interface {
	Maintenance(ctx context.Context, w *monv1.MaintenanceWindow, started bool, occurrence time.Time) error
}

// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=maintenancewindows,verbs=get;list;watch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=maintenancewindows/status,verbs=get;update;patch

// Reconcile computes the live state and requeues at the next boundary.
func (r *MaintenanceWindowReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	var w monv1.MaintenanceWindow
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := w.DeepCopy()
	defer func() {
		setProgressConditions(&w.Status.Conditions, w.Generation, monv1.ConditionReady)
		patchStatus(ctx, r.Client, &w, before, !equality.Semantic.DeepEqual(before.Status, w.Status), &retErr)
	}()
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	state, occ := maintenance.State(&w.Spec, now)
	prev := w.Status.State
	prevStart := w.Status.CurrentStart
	w.Status.State = state
	w.Status.CurrentStart, w.Status.CurrentEnd = timePtr(occ.Start), timePtr(occ.End)
	w.Status.ObservedGeneration = w.Generation
	conditions.Set(&w.Status.Conditions, w.Generation, monv1.ConditionReady, true, monv1.ReasonReconciled, "window is "+string(state))

	// Announce transitions. A recurring window goes ongoing → scheduled for
	// its next occurrence, which ends the previous one.
	switch {
	case state == monv1.MaintenanceOngoing && (prev != monv1.MaintenanceOngoing || !sameTime(prevStart, occ.Start)):
		if err := r.announce(ctx, alertevent.MaintenanceStarted, &w, occ.Start, occ.End); err != nil {
			return ctrl.Result{}, err
		}
	case prev == monv1.MaintenanceOngoing && state != monv1.MaintenanceOngoing:
		end := now
		if before.Status.CurrentEnd != nil {
			end = before.Status.CurrentEnd.Time
		}
		start := end
		if prevStart != nil {
			start = prevStart.Time
		}
		if err := r.announce(ctx, alertevent.MaintenanceEnded, &w, start, end); err != nil {
			return ctrl.Result{}, err
		}
	}
	switch state {
	case monv1.MaintenanceScheduled:
		return ctrl.Result{RequeueAfter: occ.Start.Sub(now) + time.Second}, nil
	case monv1.MaintenanceOngoing:
		return ctrl.Result{RequeueAfter: occ.End.Sub(now) + time.Second}, nil
	}
	return ctrl.Result{}, nil
}

func (r *MaintenanceWindowReconciler) announce(ctx context.Context, kind string, w *monv1.MaintenanceWindow, start, end time.Time) error {
	ctrl.LoggerFrom(ctx).Info("maintenance window transition", "event", kind)
	if r.Subscribers != nil {
		if err := r.Subscribers.Maintenance(ctx, w, kind == alertevent.MaintenanceStarted, start); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "notify status page subscribers")
		}
	}
	if r.Alerts == nil || r.Events == nil {
		return nil
	}
	events, err := r.Alerts.MaintenanceEvents(ctx, kind, w, start, end)
	if err != nil {
		return fmt.Errorf("build %s event: %w", kind, err)
	}
	// One start and one end per occurrence, whatever the retries.
	stampAnnouncement(events, w.UID, kind, start.UTC().Format(time.RFC3339Nano))
	if err := r.Events.EnqueueEvents(ctx, events...); err != nil {
		return fmt.Errorf("enqueue %s event: %w", kind, err)
	}
	return nil
}

func timePtr(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	mt := metav1.NewTime(t)
	return &mt
}

func sameTime(a *metav1.Time, b time.Time) bool {
	return a != nil && a.Time.Equal(b)
}

// SetupWithManager registers the reconciler.
func (r *MaintenanceWindowReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&monv1.MaintenanceWindow{}).Named("maintenancewindow").Complete(r)
}
