package controllers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// LiveSource supplies the engine's run-time state of a monitor; without one
// every monitor stays pending.
type LiveSource = monitor.LiveSource

// MonitorReconciler keeps Monitor status current: the effective regions,
// interval and timeout, the display target, configuration conditions, and the
// engine's live state. It claims a monitor's history in the store when it
// first sees the object and retires it when the object is deleted, so a
// re-created monitor keeps its history (see HistoryKeeper).
type MonitorReconciler struct {
	client.Client
	// Secrets reads the Secrets Monitors may reference (the manager's
	// credsecrets cache); a Secret that may not be referenced may come back
	// as a *credentials.NotAllowedError instead of the Secret.
	Secrets client.Reader
	// Plans resolves each namespace's plan.
	Plans *plans.Resolver
	// Live supplies run-time state; may be nil.
	Live LiveSource
	// History claims and retires generations in the store; may be nil.
	History HistoryKeeper
	// NewHeartbeatToken makes heartbeat tokens for cron monitors created
	// without one (the REST API mints them at create time); may be nil.
	// Tokens are kept in the Monitor's credentials Secret
	// (reconcileHeartbeatToken).
	NewHeartbeatToken func() string
	// Updates triggers reconciles when the engine's state of a monitor
	// changes (throttled by the engine); may be nil.
	Updates <-chan event.TypedGenericEvent[*monv1.Monitor]
	// StatusWrites paces status writes across all Monitors; nil writes at
	// once. Nothing else waits for them: agents are assigned a Monitor
	// from the cache as soon as it exists (see assign.ForRegion).
	StatusWrites *StatusPacer
	// Recorder records a Warning Event when the monitor stalls (a Secret
	// or every region is missing); nil records none.
	Recorder record.EventRecorder

	// claimed holds the UIDs this process has claimed (ClaimMonitorHistory),
	// so a reconcile claims once per process, not once per status refresh.
	claimed sync.Map
	// prefetch claims ahead of the first status write.
	prefetch claimPrefetch
}

// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitors,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitors/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitors/finalizers,verbs=update
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=proberegions;plans;monitorgroups;escalationpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete

// Reconcile brings one Monitor's status up to date. A status that changed
// is written when the pacer gives its turn; until then the reconcile
// requeues itself for that time and does nothing else when it comes early.
//
// A Monitor without a status for its generation (just created, or its
// spec changed) takes its turn before the reconcile reads anything else,
// and is reconciled in full when the turn comes; its requeues go first in
// the work queue, refreshes last (see requeueAt).
func (r *MonitorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	if wait, lane := r.StatusWrites.Waiting(req.NamespacedName, time.Now()); wait > 0 {
		return requeueAt(wait, lane), nil
	}
	var m monv1.Monitor
	if err := r.Get(ctx, req.NamespacedName, &m); err != nil {
		if apierrors.IsNotFound(err) {
			r.StatusWrites.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := m.DeepCopy()
	// pacedEarly: the reconcile took its turn before reading (see
	// below) and requeued itself for it; hasTurn: it took a turn that is
	// now, for the write at its end.
	pacedEarly, hasTurn := false, false
	defer func() {
		if pacedEarly {
			return
		}
		setProgressConditions(&m.Status.Conditions, m.Generation, monv1.MonitorConditionConfigured)
		if equality.Semantic.DeepEqual(before.Status, m.Status) {
			r.StatusWrites.Forget(req.NamespacedName)
			return
		}
		if !hasTurn {
			lane := statusLane(&before.Status, &m.Status)
			if wait := r.StatusWrites.Turn(req.NamespacedName, time.Now(), lane); wait > 0 {
				res = requeueAt(wait, lane)
				return
			}
		}
		recordStalled(r.Recorder, &m, before.Status.Conditions, m.Status.Conditions)
		patchStatus(ctx, r.Client, &m, before, true, &retErr)
	}()

	if !m.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, &m)
	}
	if controllerutil.AddFinalizer(&m, monv1.HistoryFinalizer) {
		if err := r.Update(ctx, &m); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
		before = m.DeepCopy()
	}

	if changed, err := r.reconcileHeartbeatToken(ctx, &m); err != nil {
		return ctrl.Result{}, err
	} else if changed {
		before = m.DeepCopy()
	}
	if m.Status.ObservedGeneration != m.Generation {
		// A first status for this generation will be written whatever
		// the reads below find: wait for the turn before reading, and
		// read once, when it comes. After a bulk create or a restart each
		// Monitor is read once, not once to queue and again to write;
		// its history is claimed meanwhile, off the reconcile workers.
		wait := r.StatusWrites.Turn(req.NamespacedName, time.Now(), LaneChange)
		if wait > 0 {
			pacedEarly = true
			r.prefetchClaim(&m)
			return requeueAt(wait, LaneChange), nil
		}
		hasTurn = true
	}
	if err := r.reconcileHistory(ctx, &m); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileEffective(ctx, &m); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileConfigured(ctx, &m); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileLive(ctx, &m); err != nil {
		return ctrl.Result{}, err
	}
	m.Status.ObservedGeneration = m.Generation
	if !conditions.IsTrue(m.Status.Conditions, monv1.MonitorConditionConfigured) {
		// Neither Secrets nor ProbeRegions are watched for Monitors: look
		// again, so a stalled monitor recovers once they exist.
		return ctrl.Result{RequeueAfter: secretRetryInterval}, nil
	}
	return ctrl.Result{}, nil
}

// Work-queue priorities of requeued reconciles: a write users wait for
// goes before the engine's requests (priority 0) and the Monitors of the
// start's initial list (handler.LowPriority), which a pending first write
// would otherwise wait behind; a timestamps-only refresh goes last.
const (
	priorityChange  = 100
	priorityRefresh = handler.LowPriority
)

// requeueAt is the result of a reconcile whose status write waits d in
// lane.
func requeueAt(d time.Duration, lane Lane) ctrl.Result {
	p := priorityChange
	if lane == LaneRefresh {
		p = priorityRefresh
	}
	return ctrl.Result{RequeueAfter: d, Priority: &p}
}

// statusLane says whether the change from before to after is one users
// read (LaneChange: the first status of a generation, the state, the open
// incident, the uptime as shown, a condition) or only newer timestamps of
// the last check (LaneRefresh).
func statusLane(before, after *monv1.MonitorStatus) Lane {
	b, a := before.DeepCopy(), after.DeepCopy()
	for _, st := range []*monv1.MonitorStatus{b, a} {
		st.LastCheckedAt, st.LastResponseTimeMs = nil, nil
		for i := range st.Regions {
			st.Regions[i].LastCheckedAt = nil
		}
	}
	if equality.Semantic.DeepEqual(b, a) {
		return LaneRefresh
	}
	return LaneChange
}

func (r *MonitorReconciler) reconcileDelete(ctx context.Context, m *monv1.Monitor) error {
	if !controllerutil.ContainsFinalizer(m, monv1.HistoryFinalizer) {
		return nil
	}
	if err := r.retireHistory(ctx, m); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(m, monv1.HistoryFinalizer)
	if err := r.Update(ctx, m); err != nil {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	return nil
}

// reconcileEffective computes the regions, interval and timeout in use.
func (r *MonitorReconciler) reconcileEffective(ctx context.Context, m *monv1.Monitor) error {
	plan, err := r.Plans.ForNamespace(ctx, m.Namespace)
	if err != nil {
		return err
	}
	var available []string
	if len(m.Spec.Regions) == 0 && m.Spec.Type != monv1.MonitorCron {
		if available, err = monitor.RegionCodes(ctx, r.Client); err != nil {
			return err
		}
	}
	m.Status.EffectiveRegions = monitor.EffectiveRegions(&m.Spec, plan, available)
	m.Status.EffectiveIntervalSeconds = monitor.EffectiveIntervalSeconds(&m.Spec, plan)
	m.Status.EffectiveTimeoutMs = monitor.EffectiveTimeoutMs(&m.Spec)
	m.Status.Target = monitor.Target(&m.Spec)
	return nil
}

// reconcileConfigured checks the Secrets the monitor reads and sets the
// Configured condition.
func (r *MonitorReconciler) reconcileConfigured(ctx context.Context, m *monv1.Monitor) error {
	var missing *secretProblem
	for _, ref := range monitor.SecretRefs(&m.Spec) {
		var s corev1.Secret
		err := r.Secrets.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}, &s)
		if apierrors.IsNotFound(err) {
			missing = &secretProblem{name: ref.Name}
			break
		}
		if notAllowed := (*credentials.NotAllowedError)(nil); errors.As(err, &notAllowed) {
			missing = &secretProblem{name: ref.Name, notAllowed: notAllowed.Error()}
			break
		}
		if err != nil {
			return fmt.Errorf("get secret %s: %w", ref.Name, err)
		}
		if err := credentials.Referable(&s, m); err != nil {
			missing = &secretProblem{name: ref.Name, notAllowed: err.Error()}
			break
		}
		if _, ok := s.Data[ref.Key]; !ok {
			missing = &secretProblem{name: ref.Name, key: ref.Key, keyNotFound: true}
			break
		}
	}
	setConfiguredCondition(m, missing)
	return nil
}

// reconcileLive merges the engine's state and derives currentStatus,
// Available and Ready.
func (r *MonitorReconciler) reconcileLive(ctx context.Context, m *monv1.Monitor) error {
	var live *monitor.LiveState
	if r.Live != nil {
		var err error
		if live, err = r.Live.LiveState(ctx, m); err != nil {
			return fmt.Errorf("read live state: %w", err)
		}
	}
	monitor.ApplyLiveState(&m.Status, live)
	m.Status.CurrentStatus = monitor.CurrentStatus(&m.Spec, live)
	setAvailableCondition(m)
	setMonitorReadyCondition(m)
	return nil
}

// monitorsInNamespace maps a maintenance window to the monitors of its
// namespace, whose maintenance state may have changed.
func (r *MonitorReconciler) monitorsInNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	var list monv1.MonitorList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, m := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
	}
	return out
}

// SetupWithManager registers the reconciler. It reacts to spec changes
// (generation), not to its own status writes, and to engine updates.
func (r *MonitorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor(EventSource)
	}
	if err := r.startClaimPrefetch(mgr); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&monv1.Monitor{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
			predicate.AnnotationChangedPredicate{}))).
		Watches(&monv1.MaintenanceWindow{}, handler.EnqueueRequestsFromMapFunc(r.monitorsInNamespace)).
		Named("monitor").
		// A reconcile mostly waits on kube-apiserver (a status patch) and
		// the store, so many run side by side: with 100,000 Monitors the
		// first pass after a start or a bulk create is bounded by this.
		WithOptions(controller.Options{MaxConcurrentReconciles: 32})
	if r.Updates != nil {
		b = b.WatchesRawSource(source.Channel(r.Updates, &handler.TypedEnqueueRequestForObject[*monv1.Monitor]{}))
	}
	return b.Complete(r)
}
