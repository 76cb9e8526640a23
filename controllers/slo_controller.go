package controllers

import (
	"context"
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
	"github.com/uptime-operator/uptime-operator/internal/maintenance"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// SLIStore is the part of the store the SLO controller reads.
type SLIStore interface {
	Stats(ctx context.Context, q store.StatsQuery) (store.Stats, error)
	LatencyStats(ctx context.Context, monitorID string, from, to time.Time, thresholdMs int64) (good, total int64, err error)
}

// SLOAlerts builds the events sent when an SLO starts burning or exhausts its
// budget; nil disables them.
type SLOAlerts interface {
	SLOEvents(ctx context.Context, kind string, slo *monv1.SLO, m *monv1.Monitor) ([]store.OutboxEvent, error)
}

// SLOReconciler computes an SLO's SLI, error budget and multi-window burn
// rates from the store, and raises BudgetExhausted, BurningFast and
// BurningSlow.
type SLOReconciler struct {
	client.Client
	Store  SLIStore
	Alerts SLOAlerts
	Events EventQueue
	Now    func() time.Time
	// Every is how often an SLO is re-evaluated (default 1 minute).
	Every time.Duration
	// Recorder records a Warning Event when the SLO stalls (its monitor
	// is missing); nil records none.
	Recorder record.EventRecorder
}

// Burn-rate alert windows of the Google SRE workbook: the fast alert looks
// at 1 h confirmed by 5 m, the slow alert at 6 h confirmed by 30 m.
var burnWindows = []struct {
	name string
	d    time.Duration
}{{"5m", 5 * time.Minute}, {"30m", 30 * time.Minute}, {"1h", time.Hour}, {"6h", 6 * time.Hour}}

// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=slos,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=slos/status,verbs=get;update;patch

// Reconcile evaluates one SLO.
func (r *SLOReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	var slo monv1.SLO
	if err := r.Get(ctx, req.NamespacedName, &slo); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := slo.DeepCopy()
	defer func() {
		setProgressConditions(&slo.Status.Conditions, slo.Generation, monv1.ConditionReady)
		recordStalled(r.Recorder, &slo, before.Status.Conditions, slo.Status.Conditions)
		patchStatus(ctx, r.Client, &slo, before, !equality.Semantic.DeepEqual(before.Status, slo.Status), &retErr)
	}()
	every := r.Every
	if every == 0 {
		every = time.Minute
	}
	slo.Status.ObservedGeneration = slo.Generation
	if slo.Spec.Enabled != nil && !*slo.Spec.Enabled {
		conditions.Set(&slo.Status.Conditions, slo.Generation, monv1.ConditionReady, true, monv1.ReasonDisabled, "evaluation is disabled")
		return ctrl.Result{}, nil
	}
	var m monv1.Monitor
	if err := r.Get(ctx, client.ObjectKey{Namespace: slo.Namespace, Name: slo.Spec.MonitorRef.Name}, &m); err != nil {
		if apierrors.IsNotFound(err) {
			conditions.Set(&slo.Status.Conditions, slo.Generation, monv1.ConditionReady, false, monv1.ReasonReferenceNotFound,
				"monitor "+slo.Spec.MonitorRef.Name+" not found")
			return ctrl.Result{RequeueAfter: every}, nil
		}
		return ctrl.Result{}, err
	}
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	excluded, err := r.maintenanceOf(ctx, &m, now.Add(-time.Duration(slo.Spec.WindowMinutes)*time.Minute), now)
	if err != nil {
		return ctrl.Result{}, err
	}
	window := time.Duration(max(slo.Spec.WindowMinutes, 60)) * time.Minute
	good, total, err := r.count(ctx, &slo, &m, now.Add(-window), now, excluded)
	if err != nil {
		return ctrl.Result{}, err
	}
	b := ComputeBudget(slo.Spec.TargetPercentage, window, good, total)
	slo.Status.CurrentSLI, slo.Status.ErrorBudgetMinutes = b.SLI, &b.TotalMinutes
	slo.Status.ErrorBudgetRemainingMinutes, slo.Status.ErrorBudgetRemainingPercent = &b.RemainingMinutes, &b.RemainingPercent
	rates := map[string]float64{}
	slo.Status.BurnRates = nil
	for _, w := range burnWindows {
		g, t, err := r.count(ctx, &slo, &m, now.Add(-w.d), now, excluded)
		if err != nil {
			return ctrl.Result{}, err
		}
		rate := BurnRate(slo.Spec.TargetPercentage, g, t)
		rates[w.name] = rate
		slo.Status.BurnRates = append(slo.Status.BurnRates, monv1.BurnRate{Window: w.name, Rate: round(rate, 3)})
	}
	t := metav1.NewTime(now.Truncate(time.Second))
	slo.Status.LastEvaluatedAt = &t
	fast, slow := BurnAlerts(rates, slo.Spec.BurnRateFastThreshold, slo.Spec.BurnRateSlowThreshold)
	wasFast := conditions.IsTrue(slo.Status.Conditions, monv1.SLOConditionBurningFast)
	wasSlow := conditions.IsTrue(slo.Status.Conditions, monv1.SLOConditionBurningSlow)
	wasExhausted := conditions.IsTrue(slo.Status.Conditions, monv1.SLOConditionBudgetExhausted)
	exhausted := total > 0 && b.RemainingMinutes <= 0
	setSLOBurnConditions(&slo, rates, fast, slow, exhausted, b)
	conditions.Set(&slo.Status.Conditions, slo.Generation, monv1.ConditionReady, true, monv1.ReasonReconciled, "evaluated")

	for _, a := range []struct {
		kind, condition string
		started         bool
	}{
		{alertevent.SLOBurningFast, monv1.SLOConditionBurningFast, fast && !wasFast},
		{alertevent.SLOBurningSlow, monv1.SLOConditionBurningSlow, slow && !wasSlow},
		{alertevent.SLOBudgetExhausted, monv1.SLOConditionBudgetExhausted, exhausted && !wasExhausted},
	} {
		if a.started {
			if err := r.alert(ctx, a.kind, episode(before.Status.Conditions, a.condition), &slo, &m); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	return ctrl.Result{RequeueAfter: every}, nil
}

// alert announces kind for the episode that starts now; episode names it
// (see episode), so a retried reconcile announces it under the same id.
func (r *SLOReconciler) alert(ctx context.Context, kind, episode string, slo *monv1.SLO, m *monv1.Monitor) error {
	ctrl.LoggerFrom(ctx).Info("slo alert", "event", kind)
	if r.Alerts == nil || r.Events == nil {
		return nil
	}
	events, err := r.Alerts.SLOEvents(ctx, kind, slo, m)
	if err != nil {
		return fmt.Errorf("build %s event: %w", kind, err)
	}
	stampAnnouncement(events, slo.UID, kind, episode)
	return r.Events.EnqueueEvents(ctx, events...)
}

// episode names the episode of condition t that starts when it turns True:
// the stored (not yet updated) condition's status and last transition, or
// "first" when it was never set. Until the status patch that records the
// new episode succeeds, every retry sees the same stored condition; once
// it is recorded, the next episode can only begin after another transition
// to False, with a later time.
func episode(stored []metav1.Condition, t string) string {
	c := meta.FindStatusCondition(stored, t)
	if c == nil {
		return "first"
	}
	return string(c.Status) + "@" + c.LastTransitionTime.UTC().Format(time.RFC3339)
}

// count returns good and total events of the SLI over [from, to), leaving
// out maintenance occurrences.
func (r *SLOReconciler) count(ctx context.Context, slo *monv1.SLO, m *monv1.Monitor, from, to time.Time, excluded []maintenance.Occurrence) (int64, int64, error) {
	var good, total int64
	var clipped []maintenance.Occurrence
	for _, o := range excluded {
		if o.End.After(from) && o.Start.Before(to) {
			clipped = append(clipped, maintenance.Occurrence{Start: later(o.Start, from), End: earlier(o.End, to)})
		}
	}
	for _, iv := range maintenance.Subtract(from, to, clipped) {
		if slo.Spec.SLIType == monv1.SLILatency {
			g, t, err := r.Store.LatencyStats(ctx, string(m.UID), iv.Start, iv.End, int64(LatencyThreshold(slo, m)))
			if err != nil {
				return 0, 0, err
			}
			good, total = good+g, total+t
			continue
		}
		st, err := r.Store.Stats(ctx, store.StatsQuery{MonitorID: string(m.UID), From: iv.Start, To: iv.End})
		if err != nil {
			return 0, 0, err
		}
		good, total = good+st.Successful(), total+st.Successful()+st.Failed()
	}
	return good, total, nil
}

// maintenanceOf lists the maintenance occurrences covering m in [from, to).
func (r *SLOReconciler) maintenanceOf(ctx context.Context, m *monv1.Monitor, from, to time.Time) ([]maintenance.Occurrence, error) {
	var list monv1.MaintenanceWindowList
	if err := r.List(ctx, &list, client.InNamespace(m.Namespace)); err != nil {
		return nil, fmt.Errorf("list maintenance windows: %w", err)
	}
	var out []maintenance.Occurrence
	for i := range list.Items {
		if maintenance.Covers(&list.Items[i].Spec, m) {
			out = append(out, maintenance.Occurrences(&list.Items[i].Spec, from, to)...)
		}
	}
	return mergeOccurrences(out), nil
}

// mergeOccurrences sorts and merges overlapping occurrences.
func mergeOccurrences(in []maintenance.Occurrence) []maintenance.Occurrence {
	if len(in) < 2 {
		return in
	}
	sorted := append([]maintenance.Occurrence(nil), in...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && sorted[j].Start.Before(sorted[j-1].Start); j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	out := []maintenance.Occurrence{sorted[0]}
	for _, o := range sorted[1:] {
		last := &out[len(out)-1]
		if !o.Start.After(last.End) {
			last.End = later(last.End, o.End)
			continue
		}
		out = append(out, o)
	}
	return out
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// LatencyThreshold is a latency SLI's threshold: the SLO's own, else the
// monitor's degraded response time, else 1000 ms.
func LatencyThreshold(slo *monv1.SLO, m *monv1.Monitor) int32 {
	if slo.Spec.LatencyThresholdMs > 0 {
		return slo.Spec.LatencyThresholdMs
	}
	if m.Spec.HTTP != nil && m.Spec.HTTP.DegradedResponseTimeMs != nil {
		return *m.Spec.HTTP.DegradedResponseTimeMs
	}
	return 1000
}

// Budget is an SLO's error budget over its window.
type Budget struct {
	// SLI is the share of good events in percent; nil without events.
	SLI *float64
	// TotalMinutes is the window's budget: window × (1 − target).
	TotalMinutes float64
	// RemainingMinutes is TotalMinutes minus the minutes spent, where spent
	// = window × bad share. It goes negative when overspent.
	RemainingMinutes float64
	// RemainingPercent is RemainingMinutes / TotalMinutes × 100.
	RemainingPercent float64
}

// ComputeBudget derives the SLI and error budget from event counts. Events
// are spread evenly over the window, so the bad share of events is the bad
// share of time.
func ComputeBudget(target float64, window time.Duration, good, total int64) Budget {
	b := Budget{TotalMinutes: round(window.Minutes()*(1-target/100), 3)}
	b.RemainingMinutes, b.RemainingPercent = b.TotalMinutes, 100
	if total == 0 {
		return b
	}
	sli := round(float64(good)/float64(total)*100, 4)
	b.SLI = &sli
	spent := window.Minutes() * float64(total-good) / float64(total)
	b.RemainingMinutes = round(b.TotalMinutes-spent, 3)
	if b.TotalMinutes > 0 {
		b.RemainingPercent = round(b.RemainingMinutes/b.TotalMinutes*100, 2)
	}
	return b
}

// BurnRate is how fast the budget burns: the bad share of events divided by
// the allowed bad share. 1 spends exactly the budget over the window.
func BurnRate(target float64, good, total int64) float64 {
	allowed := 1 - target/100
	if total == 0 || allowed <= 0 {
		return 0
	}
	return (float64(total-good) / float64(total)) / allowed
}

// BurnAlerts applies the multi-window rule: the fast alert fires when the 1h
// and the 5m burn rates both exceed the fast threshold, the slow alert when
// the 6h and the 30m rates exceed the slow threshold.
func BurnAlerts(rates map[string]float64, fastThreshold, slowThreshold float64) (fast, slow bool) {
	fast = rates["1h"] > fastThreshold && rates["5m"] > fastThreshold
	slow = rates["6h"] > slowThreshold && rates["30m"] > slowThreshold
	return fast, slow
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// SetupWithManager registers the reconciler; SLOs are also re-evaluated
// every minute.
func (r *SLOReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor(EventSource)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&monv1.SLO{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("slo").
		Complete(r)
}

// setSLOBurnConditions records the three alert conditions of an evaluation:
// BurningFast and BurningSlow with the burn rates of their windows, and
// BudgetExhausted with the minutes left.
func setSLOBurnConditions(slo *monv1.SLO, rates map[string]float64, fast, slow, exhausted bool, b Budget) {
	set := func(t string, on bool, reasonOn, reasonOff, msg string) {
		reason := reasonOff
		if on {
			reason = reasonOn
		}
		conditions.Set(&slo.Status.Conditions, slo.Generation, t, on, reason, msg)
	}
	set(monv1.SLOConditionBurningFast, fast, monv1.ReasonFastBurn, monv1.ReasonBelowThreshold,
		fmt.Sprintf("burn rate 1h %.2f, 5m %.2f (threshold %.2f)", rates["1h"], rates["5m"], slo.Spec.BurnRateFastThreshold))
	set(monv1.SLOConditionBurningSlow, slow, monv1.ReasonSlowBurn, monv1.ReasonBelowThreshold,
		fmt.Sprintf("burn rate 6h %.2f, 30m %.2f (threshold %.2f)", rates["6h"], rates["30m"], slo.Spec.BurnRateSlowThreshold))
	set(monv1.SLOConditionBudgetExhausted, exhausted, monv1.ReasonExhausted, monv1.ReasonBudgetLeft,
		fmt.Sprintf("%.1f of %.1f budget minutes left", b.RemainingMinutes, b.TotalMinutes))
}
