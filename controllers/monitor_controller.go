package controllers

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/webhooks"
)

// LiveState is what the engine knows of a monitor at run time: the latest
// check, the open incident and uptime. The Monitor controller merges it into
// status so that status has a single writer.
type LiveState struct {
	LastStatus         string
	LastCheckedAt      *time.Time
	LastResponseTimeMs *int64
	LastError          string
	OpenIncident       *monv1.IncidentRef
	RecentIncidents    []monv1.IncidentRef
	Uptime24h          *float64
	Uptime30d          *float64
	Regions            []monv1.RegionState
	UnderMaintenance   bool
	HeartbeatPath      string
}

// LiveSource supplies LiveState. The engine implements it; without one every
// monitor stays pending.
type LiveSource interface {
	LiveState(ctx context.Context, m *monv1.Monitor) (*LiveState, error)
}

// HistoryDeleter removes a deleted monitor's history from the store.
type HistoryDeleter interface {
	DeleteMonitorHistory(ctx context.Context, monitorID string) error
}

// MonitorReconciler keeps Monitor status current: the effective regions,
// interval and timeout, the display target, configuration conditions, and the
// engine's live state. It removes history when a monitor is deleted.
type MonitorReconciler struct {
	client.Client
	// Secrets reads Secrets directly: the manager caches only API keys.
	Secrets client.Reader
	// Plans resolves each namespace's plan.
	Plans *plans.Resolver
	// Live supplies run-time state; may be nil.
	Live LiveSource
	// History deletes store history on deletion; may be nil.
	History HistoryDeleter
	// NewHeartbeatToken makes heartbeat tokens for cron monitors created
	// without one (the REST API mints them at create time); may be nil.
	NewHeartbeatToken func() string
	// Updates triggers reconciles when the engine's state of a monitor
	// changes (throttled by the engine); may be nil.
	Updates <-chan event.TypedGenericEvent[*monv1.Monitor]
}

// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitors,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitors/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitors/finalizers,verbs=update
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=proberegions;plans;monitorgroups;escalationpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete

// Reconcile brings one Monitor's status up to date.
func (r *MonitorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	var m monv1.Monitor
	if err := r.Get(ctx, req.NamespacedName, &m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := m.DeepCopy()
	defer func() {
		patchStatus(ctx, r.Client, &m, before, !equality.Semantic.DeepEqual(before.Status, m.Status), &retErr)
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

	if m.Spec.Type == monv1.MonitorCron && m.Annotations[HeartbeatAnnotation] == "" && r.NewHeartbeatToken != nil {
		patch := client.MergeFrom(m.DeepCopy())
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[HeartbeatAnnotation] = r.NewHeartbeatToken()
		if err := r.Patch(ctx, &m, patch, client.FieldOwner(FieldOwner)); err != nil {
			return ctrl.Result{}, fmt.Errorf("set heartbeat token: %w", err)
		}
		before = m.DeepCopy()
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
	return ctrl.Result{}, nil
}

func (r *MonitorReconciler) reconcileDelete(ctx context.Context, m *monv1.Monitor) error {
	if !controllerutil.ContainsFinalizer(m, monv1.HistoryFinalizer) {
		return nil
	}
	if r.History != nil {
		if err := r.History.DeleteMonitorHistory(ctx, string(m.UID)); err != nil {
			return fmt.Errorf("delete history of monitor %s: %w", m.Name, err)
		}
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
	regions := m.Spec.Regions
	if len(regions) == 0 && m.Spec.Type != monv1.MonitorCron {
		available, err := webhooks.RegionCodes(ctx, r.Client)
		if err != nil {
			return err
		}
		regions = plans.DefaultRegions(plan, available)
	}
	if m.Spec.Type == monv1.MonitorCron {
		regions = nil // heartbeats are evaluated by the manager, not from regions
	}
	m.Status.EffectiveRegions = slices.Clone(regions)
	m.Status.EffectiveIntervalSeconds = max(m.Spec.IntervalSeconds, plans.MinIntervalSeconds(plan))
	m.Status.EffectiveTimeoutMs = EffectiveTimeoutMs(&m.Spec)
	m.Status.Target = Target(&m.Spec)
	return nil
}

// reconcileConfigured checks the Secrets the monitor reads.
func (r *MonitorReconciler) reconcileConfigured(ctx context.Context, m *monv1.Monitor) error {
	for _, ref := range SecretRefs(&m.Spec) {
		var s corev1.Secret
		err := r.Secrets.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}, &s)
		if apierrors.IsNotFound(err) {
			conditions.Set(&m.Status.Conditions, m.Generation, monv1.MonitorConditionConfigured, false,
				monv1.ReasonSecretNotFound, fmt.Sprintf("secret %s not found", ref.Name))
			return nil
		}
		if err != nil {
			return fmt.Errorf("get secret %s: %w", ref.Name, err)
		}
		if _, ok := s.Data[ref.Key]; !ok {
			conditions.Set(&m.Status.Conditions, m.Generation, monv1.MonitorConditionConfigured, false,
				monv1.ReasonSecretNotFound, fmt.Sprintf("secret %s has no key %s", ref.Name, ref.Key))
			return nil
		}
	}
	if len(m.Status.EffectiveRegions) == 0 && m.Spec.Type != monv1.MonitorCron {
		conditions.Set(&m.Status.Conditions, m.Generation, monv1.MonitorConditionConfigured, false,
			"NoRegions", "no probe region is available to this monitor; create a ProbeRegion")
		return nil
	}
	conditions.Set(&m.Status.Conditions, m.Generation, monv1.MonitorConditionConfigured, true,
		monv1.ReasonReconciled, "configuration is complete")
	return nil
}

// reconcileLive merges the engine's state and derives currentStatus,
// Available and Ready.
func (r *MonitorReconciler) reconcileLive(ctx context.Context, m *monv1.Monitor) error {
	var live *LiveState
	if r.Live != nil {
		var err error
		if live, err = r.Live.LiveState(ctx, m); err != nil {
			return fmt.Errorf("read live state: %w", err)
		}
	}
	ApplyLiveState(&m.Status, live)
	m.Status.CurrentStatus = CurrentStatus(&m.Spec, live)
	available := m.Status.OpenIncident == nil
	reason, msg := monv1.ReasonChecksPassing, "no incident is open"
	switch {
	case !available:
		reason, msg = monv1.ReasonIncidentOpen, "incident "+m.Status.OpenIncident.ID+" is open"
	case m.Status.CurrentStatus == monv1.StatusPending:
		reason, msg = monv1.ReasonAwaitingChecks, "no check has completed yet"
	case m.Status.CurrentStatus == monv1.StatusPaused:
		reason, msg = monv1.ReasonPaused, "the monitor is paused"
	case m.Status.CurrentStatus == monv1.StatusMaintenance:
		reason, msg = monv1.ReasonUnderMaintenance, "a maintenance window covers the monitor"
	}
	conditions.Set(&m.Status.Conditions, m.Generation, monv1.MonitorConditionAvailable, available, reason, msg)
	configured := conditions.IsTrue(m.Status.Conditions, monv1.MonitorConditionConfigured)
	readyReason, readyMsg := monv1.ReasonReconciled, "the monitor is configured and scheduled"
	if !configured {
		readyReason, readyMsg = "NotConfigured", "see the Configured condition"
	}
	conditions.Set(&m.Status.Conditions, m.Generation, monv1.ConditionReady, configured, readyReason, readyMsg)
	return nil
}

// CurrentStatus derives the monitor's state: paused and maintenance win,
// then an open incident (down), then the latest verdict, else pending.
func CurrentStatus(spec *monv1.MonitorSpec, live *LiveState) monv1.MonitorStatusValue {
	switch {
	case spec.Paused:
		return monv1.StatusPaused
	case live == nil:
		return monv1.StatusPending
	case live.UnderMaintenance:
		return monv1.StatusMaintenance
	case live.OpenIncident != nil:
		return monv1.StatusDown
	case live.LastStatus == "":
		return monv1.StatusPending
	case live.LastStatus == "down":
		// A single failing check without a confirmed incident is not "down":
		// down means an incident is open. Until regions confirm, report up.
		return monv1.StatusUp
	}
	return monv1.MonitorStatusValue(live.LastStatus)
}

// ApplyLiveState copies the engine's state into status.
func ApplyLiveState(st *monv1.MonitorStatus, live *LiveState) {
	if live == nil {
		return
	}
	st.LastStatus = live.LastStatus
	if live.LastCheckedAt != nil {
		t := metav1.NewTime(*live.LastCheckedAt)
		st.LastCheckedAt = &t
	}
	st.LastResponseTimeMs = live.LastResponseTimeMs
	st.LastError = live.LastError
	st.OpenIncident = live.OpenIncident
	st.RecentIncidents = live.RecentIncidents
	st.Uptime24h = formatPercent(live.Uptime24h)
	st.Uptime30d = formatPercent(live.Uptime30d)
	st.Regions = live.Regions
	st.UnderMaintenance = live.UnderMaintenance
	st.HeartbeatPath = live.HeartbeatPath
}

func formatPercent(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', 2, 64) + "%"
}

// Target is the monitored URL, host[:port] or DNS name, for display.
func Target(s *monv1.MonitorSpec) string {
	switch {
	case s.URL != "":
		return s.URL
	case s.Ping != nil:
		return s.Ping.Host
	case s.Port != nil:
		return net.JoinHostPort(s.Port.Host, strconv.Itoa(int(s.Port.Port)))
	case s.UDP != nil:
		return "udp://" + net.JoinHostPort(s.UDP.Host, strconv.Itoa(int(s.UDP.Port)))
	case s.DNS != nil:
		return string(s.DNS.RecordType) + " " + s.DNS.Name
	case s.Cron != nil:
		return "heartbeat " + s.Cron.CronExpression
	case s.Multistep != nil && len(s.Multistep.Steps) > 0:
		return s.Multistep.Steps[0].URL
	}
	return ""
}

// Default timeouts by type, used when the spec sets none.
const (
	DefaultHTTPTimeoutMs      = 30000
	DefaultPingTimeoutSeconds = 10
	DefaultPortTimeoutSeconds = 10
	DefaultUDPTimeoutSeconds  = 5
	DefaultDNSTimeoutSeconds  = 5
	DefaultMultistepTimeoutMs = 60000
)

// EffectiveTimeoutMs is the timeout a check of this spec actually uses.
func EffectiveTimeoutMs(s *monv1.MonitorSpec) int32 {
	pick := func(v, def int32) int32 {
		if v > 0 {
			return v
		}
		return def
	}
	switch {
	case s.HTTP != nil:
		return pick(s.HTTP.TimeoutMs, DefaultHTTPTimeoutMs)
	case s.Ping != nil:
		return 1000 * pick(s.Ping.TimeoutSeconds, DefaultPingTimeoutSeconds)
	case s.Port != nil:
		return 1000 * pick(s.Port.TimeoutSeconds, DefaultPortTimeoutSeconds)
	case s.UDP != nil:
		return 1000 * pick(s.UDP.TimeoutSeconds, DefaultUDPTimeoutSeconds)
	case s.DNS != nil:
		return 1000 * pick(s.DNS.TimeoutSeconds, DefaultDNSTimeoutSeconds)
	case s.Multistep != nil:
		return pick(s.Multistep.TimeoutMs, DefaultMultistepTimeoutMs)
	case s.MCP != nil:
		return pick(s.MCP.TimeoutMs, DefaultHTTPTimeoutMs)
	case s.Type == monv1.MonitorHTTP || s.Type == monv1.MonitorAPI || s.Type == monv1.MonitorMCP:
		return DefaultHTTPTimeoutMs
	}
	return 0
}

// SecretRefs lists every Secret key the spec reads.
func SecretRefs(s *monv1.MonitorSpec) []monv1.SecretKeySelector {
	var out []monv1.SecretKeySelector
	add := func(hs []monv1.HTTPHeader) {
		for _, h := range hs {
			if h.ValueFrom != nil {
				out = append(out, *h.ValueFrom)
			}
		}
	}
	if s.HTTP != nil {
		add(s.HTTP.Headers)
	}
	if s.MCP != nil {
		add(s.MCP.Headers)
	}
	if s.Multistep != nil {
		for _, st := range s.Multistep.Steps {
			add(st.Headers)
		}
	}
	return out
}

// HeartbeatAnnotation holds a cron monitor's heartbeat token (see
// monv1.HeartbeatTokenAnnotation; package engine reads it).
const HeartbeatAnnotation = monv1.HeartbeatTokenAnnotation

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
	b := ctrl.NewControllerManagedBy(mgr).
		For(&monv1.Monitor{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
			predicate.AnnotationChangedPredicate{}))).
		Watches(&monv1.MaintenanceWindow{}, handler.EnqueueRequestsFromMapFunc(r.monitorsInNamespace)).
		Named("monitor").
		WithOptions(controller.Options{MaxConcurrentReconciles: 8})
	if r.Updates != nil {
		b = b.WatchesRawSource(source.Channel(r.Updates, &handler.TypedEnqueueRequestForObject[*monv1.Monitor]{}))
	}
	return b.Complete(r)
}
