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
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
)

// StatusPageReconciler keeps StatusPage status current: the state of each
// listed monitor (missing ones reported), the overall status, the public URL
// and the Ready condition. Page status follows monitor status through a watch
// on Monitors.
type StatusPageReconciler struct {
	client.Client
	// BaseURL is the public base URL of the direct listener; status.url is
	// BaseURL + "/s/" + slug (a path when empty).
	BaseURL string
	// Recorder records a Warning Event when the page stalls (its slug is
	// taken, a listed monitor is missing); nil records none.
	Recorder record.EventRecorder
}

// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=statuspages,verbs=get;list;watch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=statuspages/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitors;maintenancewindows,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// Reconcile brings one StatusPage's status up to date.
func (r *StatusPageReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	var page monv1.StatusPage
	if err := r.Get(ctx, req.NamespacedName, &page); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := page.DeepCopy()
	defer func() {
		setProgressConditions(&page.Status.Conditions, page.Generation, monv1.ConditionReady)
		recordStalled(r.Recorder, &page, before.Status.Conditions, page.Status.Conditions)
		patchStatus(ctx, r.Client, &page, before, !equality.Semantic.DeepEqual(before.Status, page.Status), &retErr)
	}()
	if !page.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // nothing to clean up: the page owns no other object
	}

	res, err := r.reconcileMonitors(ctx, &page)
	if err != nil {
		conditions.Set(&page.Status.Conditions, page.Generation, monv1.ConditionReady, false,
			monv1.ReasonReconcileError, err.Error())
		return ctrl.Result{}, err
	}
	slugOwner, err := r.slugOwner(ctx, &page)
	if err != nil {
		return ctrl.Result{}, err
	}
	page.Status.URL = r.BaseURL + "/s/" + statuspage.Slug(&page)
	ok, reason, msg := StatusPageReady(&page, res.Missing, res.LeftOff, slugOwner)
	conditions.Set(&page.Status.Conditions, page.Generation, monv1.ConditionReady, ok, reason, msg)
	page.Status.ObservedGeneration = page.Generation
	return ctrl.Result{}, nil
}

// reconcileMonitors records the state of each monitor the page shows
// (listed or joined by label) and the overall status.
func (r *StatusPageReconciler) reconcileMonitors(ctx context.Context, page *monv1.StatusPage) (statuspage.Resolved, error) {
	res, err := statuspage.ResolveMonitors(ctx, r.Client, page)
	if err != nil {
		return res, err
	}
	states := make([]monv1.StatusPageMonitorState, 0, len(res.Entries))
	values := make([]string, 0, len(res.Entries))
	for _, e := range res.Entries {
		s := statuspage.MonitorMissing
		if e.Monitor != nil {
			s = string(e.Monitor.Status.CurrentStatus)
			if s == "" {
				s = string(monv1.StatusPending)
			}
		}
		states = append(states, monv1.StatusPageMonitorState{Name: e.Ref.MonitorRef.Name, Status: s})
		values = append(values, s)
	}
	page.Status.Monitors = states
	page.Status.OverallStatus = string(statuspage.OverallStatus(values))
	return res, nil
}

// slugOwner returns the page that owns this page's slug ("namespace/name"),
// which may be the page itself.
func (r *StatusPageReconciler) slugOwner(ctx context.Context, page *monv1.StatusPage) (string, error) {
	pages, err := statuspage.ListBy(ctx, r.Client, statuspage.IndexSlug, statuspage.Slug(page))
	if err != nil {
		return "", err
	}
	owner := statuspage.Owner(pages)
	if owner == nil {
		return page.Namespace + "/" + page.Name, nil
	}
	return owner.Namespace + "/" + owner.Name, nil
}

// StatusPageReady computes the Ready condition: False with SlugTaken when
// another (older) page owns the slug, False with ReferenceNotFound when listed
// monitors are missing, False with TooManyMonitors when the bound of
// monv1.MaxStatusPageMonitors left Monitors joining by label off, True
// otherwise.
func StatusPageReady(page *monv1.StatusPage, missing []string, leftOff int, slugOwner string) (bool, string, string) {
	if self := page.Namespace + "/" + page.Name; slugOwner != "" && slugOwner != self {
		return false, monv1.ReasonSlugTaken, fmt.Sprintf("slug %q is used by status page %s", statuspage.Slug(page), slugOwner)
	}
	if len(missing) > 0 {
		return false, monv1.ReasonReferenceNotFound, "monitors not found: " + strings.Join(missing, ", ")
	}
	if leftOff > 0 {
		return false, monv1.ReasonTooManyMonitors, fmt.Sprintf("%d monitors labelled %s=%s left off: a page shows at most %d",
			leftOff, monv1.StatusPageLabel, page.Name, monv1.MaxStatusPageMonitors)
	}
	return true, monv1.ReasonReconciled, "the page is reconciled"
}

// SetupWithManager registers the StatusPage indexes and the reconciler. It
// reacts to page spec changes (generation), to Monitors whose status changes
// (mapped to the pages that list them) and to pages sharing a slug.
func (r *StatusPageReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor(EventSource)
	}
	if err := statuspage.RegisterIndexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&monv1.StatusPage{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&monv1.Monitor{}, handler.EnqueueRequestsFromMapFunc(r.pagesOfMonitor),
			builder.WithPredicates(monitorStateChanged())).
		Watches(&monv1.StatusPage{}, handler.EnqueueRequestsFromMapFunc(r.pagesWithSlug),
			builder.WithPredicates(slugEvents())).
		Named("statuspage").
		Complete(r)
}

// pagesOfMonitor maps a Monitor to the pages of its namespace that list it
// and the page its StatusPageLabel names (for an update, the old object's
// label is mapped too, so the page it leaves is reconciled).
func (r *StatusPageReconciler) pagesOfMonitor(ctx context.Context, o client.Object) []reconcile.Request {
	pages, err := statuspage.ListBy(ctx, r.Client, statuspage.IndexMonitor, o.GetName(), client.InNamespace(o.GetNamespace()))
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "unable to map monitor to status pages", "monitor", o.GetName())
		return nil
	}
	out := requests(pages)
	if name, ok := o.GetLabels()[monv1.StatusPageLabel]; ok && name != "" {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}})
	}
	return out
}

// pagesWithSlug maps a page to every other page with the same slug, so a
// contested slug is re-evaluated when its owner changes or goes away.
func (r *StatusPageReconciler) pagesWithSlug(ctx context.Context, o client.Object) []reconcile.Request {
	page, ok := o.(*monv1.StatusPage)
	if !ok {
		return nil
	}
	pages, err := statuspage.ListBy(ctx, r.Client, statuspage.IndexSlug, statuspage.Slug(page))
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "unable to map slug to status pages", "slug", statuspage.Slug(page))
		return nil
	}
	var others []monv1.StatusPage
	for _, p := range pages {
		if p.Namespace != page.Namespace || p.Name != page.Name {
			others = append(others, p)
		}
	}
	return requests(others)
}

func requests(pages []monv1.StatusPage) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(pages))
	for _, p := range pages {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&p)})
	}
	return out
}

// monitorStateChanged passes Monitor creations, deletions and updates that
// change currentStatus or how the Monitor joins a page (StatusPageLabel,
// StatusPageSectionAnnotation, spec.name on a page that sorts by it), so
// the many other status writes of a monitor do not reconcile its pages.
func monitorStateChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*monv1.Monitor)
			n, ok2 := e.ObjectNew.(*monv1.Monitor)
			return !ok1 || !ok2 || o.Status.CurrentStatus != n.Status.CurrentStatus ||
				o.Labels[monv1.StatusPageLabel] != n.Labels[monv1.StatusPageLabel] ||
				(n.Labels[monv1.StatusPageLabel] != "" && (o.Spec.Name != n.Spec.Name ||
					o.Annotations[monv1.StatusPageSectionAnnotation] != n.Annotations[monv1.StatusPageSectionAnnotation]))
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// slugEvents passes page creations and deletions and slug changes.
func slugEvents() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*monv1.StatusPage)
			n, ok2 := e.ObjectNew.(*monv1.StatusPage)
			return !ok1 || !ok2 || statuspage.Slug(o) != statuspage.Slug(n)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
