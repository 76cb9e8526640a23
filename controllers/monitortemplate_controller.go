package controllers

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
	"github.com/uptime-operator/uptime-operator/internal/discovery"
)

// DiscoveryFieldOwner is the field manager of the Monitors the
// MonitorTemplate controller writes, so that `kubectl get -o yaml
// --show-managed-fields` tells them from hand-written fields.
const DiscoveryFieldOwner = "uptime-operator-discovery"

// discoveryHashAnnotation on a discovered Monitor is the hash of the spec
// the template last wrote, so a template field removed since is removed
// from the Monitor too (a comparison of the set fields alone would keep it).
const discoveryHashAnnotation = "monitoring.uptime-operator.io/template-hash"

// maxStatusObjects bounds status.objects; status.objectsTotal counts all.
const maxStatusObjects = 100

// MonitorTemplateReconciler makes the Monitors of the Ingresses, Gateway
// API routes and Services a MonitorTemplate serves (package discovery
// decides which objects, endpoints and names) and keeps them following the
// objects: it creates the Monitors (and, with spec.slo, their SLOs) it is
// missing, updates those whose endpoint or template changed and deletes
// those no object wants any more.
// It writes only Monitors it owns (controller ownerReference and the
// DiscoveredFromLabel): a Monitor of a wanted name made by anyone else is
// reported as a conflict and left alone. It also creates and deletes the
// implicit template (monv1.ImplicitTemplateName) of objects that opt in by
// annotation alone. Objects it reads are never written: an annotation it
// cannot read becomes a Warning Event on the object.
type MonitorTemplateReconciler struct {
	client.Client
	// Recorder records Warning Events on objects with annotations that
	// cannot be read and on templates that stall; nil records none.
	Recorder record.EventRecorder
	// gateway says which Gateway API kinds the cluster serves (see
	// gatewayWatch); the reconciler reads only those.
	gateway gatewayKinds
}

// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitortemplates,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitortemplates/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=monitors;slos,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes;grpcroutes;gateways,verbs=get;list;watch

// Reconcile brings one MonitorTemplate's Monitors and status up to date.
func (r *MonitorTemplateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	var tpl monv1.MonitorTemplate
	if err := r.Get(ctx, req.NamespacedName, &tpl); err != nil {
		if apierrors.IsNotFound(err) && req.Name == monv1.ImplicitTemplateName {
			return ctrl.Result{}, r.ensureImplicit(ctx, req.Namespace)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := tpl.DeepCopy()
	defer func() {
		setProgressConditions(&tpl.Status.Conditions, tpl.Generation, monv1.ConditionReady)
		recordStalled(r.Recorder, &tpl, before.Status.Conditions, tpl.Status.Conditions)
		patchStatus(ctx, r.Client, &tpl, before, !equality.Semantic.DeepEqual(before.Status, tpl.Status), &retErr)
	}()
	if !tpl.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // its Monitors are owned: the garbage collector deletes them
	}

	objects, err := r.objects(ctx, tpl.Namespace)
	if err != nil {
		conditions.Set(&tpl.Status.Conditions, tpl.Generation, monv1.ConditionReady, false, monv1.ReasonReconcileError, err.Error())
		return ctrl.Result{}, err
	}
	var templates monv1.MonitorTemplateList
	if err := r.List(ctx, &templates, client.InNamespace(tpl.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("list monitor templates: %w", err)
	}

	wanted, wantedSLOs := map[string]bool{}, map[string]bool{}
	var served []monv1.DiscoveredObject
	var trouble []string // "reason: message" of the first conflict or refusal
	troubleReason := ""
	for _, o := range objects {
		claim := discovery.ClaimOf(templates.Items, &o.src)
		if claim.Template != tpl.Name {
			if claim.Template != "" && discovery.Selects(&tpl, &o.src) {
				served = append(served, monv1.DiscoveredObject{Kind: o.src.Kind, Name: o.src.Name,
					Warnings: []string{"served by MonitorTemplate " + claim.Template}})
			}
			continue
		}
		plan := discovery.Plan(&tpl, &o.src)
		d := monv1.DiscoveredObject{Kind: o.src.Kind, Name: o.src.Name, Skipped: plan.Skipped,
			Warnings: append(claim.Warnings, plan.Warnings...)}
		for _, p := range plan.Monitors {
			wanted[p.Name] = true
			reason, msg, err := r.applyMonitor(ctx, &tpl, &o.src, p)
			if err == nil && reason == "" && tpl.Spec.SLO != nil {
				d.Monitors = append(d.Monitors, p.Name)
				wantedSLOs[p.Name] = true
				reason, msg, err = r.applySLO(ctx, &tpl, &o.src, p)
			}
			if err != nil {
				conditions.Set(&tpl.Status.Conditions, tpl.Generation, monv1.ConditionReady, false, monv1.ReasonReconcileError, err.Error())
				return ctrl.Result{}, err
			}
			if reason != "" {
				d.Skipped = append(d.Skipped, monv1.SkippedEndpoint{Endpoint: p.Endpoint.String(), Reason: msg})
				if troubleReason == "" {
					troubleReason = reason
				}
				trouble = append(trouble, msg)
				continue
			}
			if tpl.Spec.SLO == nil {
				d.Monitors = append(d.Monitors, p.Name)
			}
		}
		r.warnObject(o.obj, before, d.Warnings)
		served = append(served, d)
	}
	// Warnings of objects this template does not serve (an unknown
	// template named, a bad opt-in value) are reported by the implicit
	// template's reconcile, once per namespace.
	if tpl.Name == monv1.ImplicitTemplateName {
		for _, o := range objects {
			if c := discovery.ClaimOf(templates.Items, &o.src); c.Template == "" && len(c.Warnings) > 0 {
				served = append(served, monv1.DiscoveredObject{Kind: o.src.Kind, Name: o.src.Name, Warnings: c.Warnings})
				r.warnObject(o.obj, before, c.Warnings)
			}
		}
	}

	var mons monv1.MonitorList
	count, err := r.prune(ctx, &tpl, &mons, func() []client.Object { return objectsOf(mons.Items) }, wanted)
	if err != nil {
		return ctrl.Result{}, err
	}
	var slos monv1.SLOList
	if _, err := r.prune(ctx, &tpl, &slos, func() []client.Object { return objectsOf(slos.Items) }, wantedSLOs); err != nil {
		return ctrl.Result{}, err
	}
	if implicit(&tpl) && len(wanted) == 0 && !claimsAny(templates.Items, objects, tpl.Name) {
		// No object opts in any more: the implicit template goes (with
		// whatever it still owns).
		return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, &tpl))
	}

	slices.SortStableFunc(served, func(a, b monv1.DiscoveredObject) int {
		return cmp.Or(cmp.Compare(slices.Index(monv1.DiscoveredKinds, a.Kind), slices.Index(monv1.DiscoveredKinds, b.Kind)), strings.Compare(a.Name, b.Name))
	})
	tpl.Status.ObjectsTotal = int32(len(served))
	tpl.Status.Objects = served[:min(len(served), maxStatusObjects)]
	tpl.Status.Monitors = int32(count)
	tpl.Status.ObservedGeneration = tpl.Generation
	ok, reason, msg := MonitorTemplateReady(troubleReason, trouble)
	conditions.Set(&tpl.Status.Conditions, tpl.Generation, monv1.ConditionReady, ok, reason, msg)
	return ctrl.Result{}, nil
}

// MonitorTemplateReady computes the Ready condition: False with the reason
// of the first Monitor that could not be written (MonitorConflict,
// MonitorRefused) naming them all, True otherwise. Endpoints skipped by
// the object's shape or the bound are reported in status.objects and do
// not make the template unready.
func MonitorTemplateReady(reason string, trouble []string) (bool, string, string) {
	if reason != "" {
		msg := strings.Join(trouble[:min(len(trouble), 5)], "; ")
		if len(trouble) > 5 {
			msg += fmt.Sprintf("; and %d more", len(trouble)-5)
		}
		return false, reason, msg
	}
	return true, monv1.ReasonReconciled, "the template's Monitors are up to date"
}

// discovered is an object of the namespace with what discovery reads of it.
type discovered struct {
	obj client.Object
	src discovery.Source
}

// objects reads the namespace's Ingresses, Services and, when the cluster
// serves them, HTTPRoutes and GRPCRoutes (from the cache).
func (r *MonitorTemplateReconciler) objects(ctx context.Context, ns string) ([]discovered, error) {
	var out []discovered
	var ings networkingv1.IngressList
	if err := r.List(ctx, &ings, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list ingresses: %w", err)
	}
	for i := range ings.Items {
		out = append(out, discovered{&ings.Items[i], discovery.FromIngress(&ings.Items[i])})
	}
	gws := r.gateways(ctx)
	if r.gateway.has(kindHTTPRoute) {
		var routes gatewayv1.HTTPRouteList
		if err := r.List(ctx, &routes, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("list httproutes: %w", err)
		}
		for i := range routes.Items {
			out = append(out, discovered{&routes.Items[i], discovery.FromHTTPRoute(&routes.Items[i], gws)})
		}
	}
	if r.gateway.has(kindGRPCRoute) {
		var routes gatewayv1.GRPCRouteList
		if err := r.List(ctx, &routes, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("list grpcroutes: %w", err)
		}
		for i := range routes.Items {
			out = append(out, discovered{&routes.Items[i], discovery.FromGRPCRoute(&routes.Items[i], gws)})
		}
	}
	var svcs corev1.ServiceList
	if err := r.List(ctx, &svcs, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list services: %w", err)
	}
	for i := range svcs.Items {
		out = append(out, discovered{&svcs.Items[i], discovery.FromService(&svcs.Items[i])})
	}
	return out, nil
}

// gateways looks a route's parent Gateway up in the cache; nil when the
// Gateway API is not served or the Gateway does not exist.
func (r *MonitorTemplateReconciler) gateways(ctx context.Context) discovery.Gateways {
	if !r.gateway.has(kindGateway) {
		return nil
	}
	return func(ns, name string) *gatewayv1.Gateway {
		var gw gatewayv1.Gateway
		if err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &gw); err != nil {
			return nil
		}
		return &gw
	}
}

// applyMonitor creates or updates the Monitor p (see applyOwned).
func (r *MonitorTemplateReconciler) applyMonitor(ctx context.Context, tpl *monv1.MonitorTemplate, src *discovery.Source, p discovery.Planned) (reason, msg string, err error) {
	var hashed any = p.Spec
	if p.StatusPage != nil {
		hashed = []any{p.Spec, p.StatusPage}
	}
	want := &monv1.Monitor{TypeMeta: metav1.TypeMeta{APIVersion: monv1.GroupVersion.String(), Kind: "Monitor"},
		ObjectMeta: ownedMeta(tpl, src, p.Name, hashed), Spec: p.Spec}
	if p.StatusPage != nil {
		// The page shows the Monitor by this label (statuspage.Join); the
		// page's own spec is its owner's, never written here.
		want.Labels[monv1.StatusPageLabel] = p.StatusPage.Name
		if p.StatusPage.Section != "" {
			want.Annotations[monv1.StatusPageSectionAnnotation] = p.StatusPage.Section
		}
	}
	var cur monv1.Monitor
	return r.applyOwned(ctx, tpl, want, &cur, func() bool { return equality.Semantic.DeepDerivative(want.Spec, cur.Spec) })
}

// applySLO creates or updates the SLO of the Monitor p, of the same name
// (see applyOwned).
func (r *MonitorTemplateReconciler) applySLO(ctx context.Context, tpl *monv1.MonitorTemplate, src *discovery.Source, p discovery.Planned) (reason, msg string, err error) {
	spec := discovery.SLOSpec(tpl.Spec.SLO, p.Name)
	want := &monv1.SLO{TypeMeta: metav1.TypeMeta{APIVersion: monv1.GroupVersion.String(), Kind: "SLO"},
		ObjectMeta: ownedMeta(tpl, src, p.Name, spec), Spec: spec}
	var cur monv1.SLO
	return r.applyOwned(ctx, tpl, want, &cur, func() bool { return equality.Semantic.DeepDerivative(want.Spec, cur.Spec) })
}

// applyOwned creates want, or updates it when cur (read into by name) is
// controlled by tpl and not up to date (its annotations or, by
// specUpToDate, its spec). An object of that name not controlled by tpl
// is left alone: reason MonitorConflict. A write admission refuses
// returns reason MonitorRefused with its message; err is for failures a
// retry may clear.
func (r *MonitorTemplateReconciler) applyOwned(ctx context.Context, tpl *monv1.MonitorTemplate, want, cur client.Object, specUpToDate func() bool) (reason, msg string, err error) {
	kind, name := want.GetObjectKind().GroupVersionKind().Kind, want.GetName()
	err = r.Get(ctx, client.ObjectKeyFromObject(want), cur)
	switch {
	case apierrors.IsNotFound(err):
		err = r.Create(ctx, want, client.FieldOwner(DiscoveryFieldOwner))
		if apierrors.IsAlreadyExists(err) {
			// The cache is behind (our own create of a moment ago, or
			// someone else's): retry once it has the object, which then
			// tells ours from a conflict.
			return "", "", fmt.Errorf("create %s %s: %w", kind, name, err)
		}
	case err != nil:
		return "", "", fmt.Errorf("get %s %s: %w", kind, name, err)
	case !metav1.IsControlledBy(cur, tpl):
		return monv1.ReasonMonitorConflict, conflictMessage(kind, name), nil
	case cur.GetAnnotations()[discoveryHashAnnotation] == want.GetAnnotations()[discoveryHashAnnotation] &&
		cur.GetAnnotations()[monv1.DiscoveredSourceAnnotation] == want.GetAnnotations()[monv1.DiscoveredSourceAnnotation] &&
		specUpToDate():
		return "", "", nil // up to date
	default:
		err = r.apply(ctx, want)
	}
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) {
		return monv1.ReasonMonitorRefused, fmt.Sprintf("%s %s refused: %s", kind, name, apiMessage(err)), nil
	}
	if err != nil {
		return "", "", fmt.Errorf("write %s %s: %w", kind, name, err)
	}
	return "", "", nil
}

func conflictMessage(kind, name string) string {
	return fmt.Sprintf("%s %s exists and was not made by this template; left alone", kind, name)
}

// apiMessage is the API server's message of err, without the object
// prefix when it has one.
func apiMessage(err error) string {
	if s, ok := err.(apierrors.APIStatus); ok {
		return s.Status().Message
	}
	return err.Error()
}

// ownedMeta is the metadata of an object tpl writes for src: owned by
// tpl, labelled with it, its source and the hash of hashed (its spec and
// whatever else the template decides of it) annotated.
func ownedMeta(tpl *monv1.MonitorTemplate, src *discovery.Source, name string, hashed any) metav1.ObjectMeta {
	raw, _ := json.Marshal(hashed)
	sum := sha256.Sum256(raw)
	return metav1.ObjectMeta{
		Namespace: tpl.Namespace, Name: name,
		Labels: map[string]string{monv1.ManagedByLabel: monv1.ManagedByValue, monv1.DiscoveredFromLabel: tpl.Name},
		Annotations: map[string]string{
			monv1.DiscoveredSourceAnnotation: string(src.Kind) + "/" + src.Name,
			discoveryHashAnnotation:          hex.EncodeToString(sum[:8]),
		},
		// No blockOwnerDeletion: it needs update on the template's
		// finalizers, and nothing waits on these objects.
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: monv1.GroupVersion.String(), Kind: "MonitorTemplate",
			Name: tpl.Name, UID: tpl.UID, Controller: ptr.To(true),
		}},
	}
}

// apply server-side applies want (an object tpl controls) as
// DiscoveryFieldOwner, forcing: the fields it sets are the template's,
// and one it no longer sets is removed.
//
// A field is removed only when the apply entry of DiscoveryFieldOwner
// owns it, but the object was made by Create, whose fields belong to an
// Update entry of the same manager that an apply neither uses nor clears
// (a statusPage dropped from the template would leave the Monitor's label).
// So when the answer shows such an entry, it is merged into the apply
// entry (csaupgrade, as kubectl does on moving to server-side apply) and
// the apply is sent again, now removing what the template no longer sets.
func (r *MonitorTemplateReconciler) apply(ctx context.Context, want client.Object) error {
	u, err := applyConfig(want)
	if err != nil {
		return err
	}
	if err := r.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(DiscoveryFieldOwner), client.ForceOwnership); err != nil {
		return err
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(u, sets.New(DiscoveryFieldOwner), DiscoveryFieldOwner)
	if err != nil || patch == nil {
		return err
	}
	if err := r.Patch(ctx, u, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return fmt.Errorf("move the fields of %s to server-side apply: %w", want.GetName(), err)
	}
	if u, err = applyConfig(want); err != nil {
		return err
	}
	return r.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(DiscoveryFieldOwner), client.ForceOwnership)
}

// applyConfig is want as an apply configuration: without status and
// creation time.
func applyConfig(want client.Object) (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return nil, fmt.Errorf("convert %s: %w", want.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: obj}
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

// prune lists the objects of list labelled with tpl, deletes those tpl
// controls that are not wanted any more and returns how many it keeps.
func (r *MonitorTemplateReconciler) prune(ctx context.Context, tpl *monv1.MonitorTemplate, list client.ObjectList, items func() []client.Object, wanted map[string]bool) (int, error) {
	if err := r.List(ctx, list, client.InNamespace(tpl.Namespace), client.MatchingLabels{monv1.DiscoveredFromLabel: tpl.Name}); err != nil {
		return 0, fmt.Errorf("list discovered objects: %w", err)
	}
	kept := 0
	for _, o := range items() {
		if !metav1.IsControlledBy(o, tpl) || o.GetDeletionTimestamp() != nil {
			continue
		}
		if wanted[o.GetName()] {
			kept++
			continue
		}
		uid := o.GetUID()
		if err := r.Delete(ctx, o, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return 0, fmt.Errorf("delete %s: %w", o.GetName(), err)
		}
		ctrl.LoggerFrom(ctx).Info("deleted a discovered object", "kind", fmt.Sprintf("%T", o), "name", o.GetName())
	}
	return kept, nil
}

// objectsOf returns pointers to items as client.Objects.
func objectsOf[T any, PT interface {
	*T
	client.Object
}](items []T) []client.Object {
	out := make([]client.Object, len(items))
	for i := range items {
		out[i] = PT(&items[i])
	}
	return out
}

// warnObject records a Warning Event on obj for each warning that the
// template's status did not already show for it, so an unreadable
// annotation is told once, not once per reconcile.
func (r *MonitorTemplateReconciler) warnObject(obj client.Object, before *monv1.MonitorTemplate, warnings []string) {
	if r.Recorder == nil {
		return
	}
	var shown []string
	for _, o := range before.Status.Objects {
		if string(o.Kind) == objectKind(obj) && o.Name == obj.GetName() {
			shown = o.Warnings
		}
	}
	for _, w := range warnings {
		if !slices.Contains(shown, w) && !strings.HasPrefix(w, "served by ") {
			r.Recorder.Event(obj, corev1.EventTypeWarning, "MonitorDiscovery", w)
		}
	}
}

func objectKind(obj client.Object) string {
	switch obj.(type) {
	case *networkingv1.Ingress:
		return string(monv1.KindIngress)
	case *gatewayv1.HTTPRoute:
		return string(monv1.KindHTTPRoute)
	case *gatewayv1.GRPCRoute:
		return string(monv1.KindGRPCRoute)
	case *corev1.Service:
		return string(monv1.KindService)
	}
	return ""
}

// implicit reports whether tpl is the implicit template the controller
// made (a template a user named "annotated" is theirs to keep).
func implicit(tpl *monv1.MonitorTemplate) bool {
	return tpl.Name == monv1.ImplicitTemplateName && tpl.Labels[monv1.ManagedByLabel] == monv1.ManagedByValue
}

// claimsAny reports whether any object is served by the template named.
func claimsAny(templates []monv1.MonitorTemplate, objects []discovered, name string) bool {
	for _, o := range objects {
		if discovery.ClaimOf(templates, &o.src).Template == name {
			return true
		}
	}
	return false
}

// ensureImplicit creates the namespace's implicit template when an
// object opts in by annotation without a template to serve it.
func (r *MonitorTemplateReconciler) ensureImplicit(ctx context.Context, ns string) error {
	objects, err := r.objects(ctx, ns)
	if err != nil {
		return err
	}
	var templates monv1.MonitorTemplateList
	if err := r.List(ctx, &templates, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("list monitor templates: %w", err)
	}
	if !claimsAny(templates.Items, objects, monv1.ImplicitTemplateName) {
		// Nothing to serve; an object whose opt-in cannot be read is told
		// so on itself, since no template's status lists it.
		for _, o := range objects {
			if c := discovery.ClaimOf(templates.Items, &o.src); c.Template == "" && r.Recorder != nil {
				for _, w := range c.Warnings {
					r.Recorder.Event(o.obj, corev1.EventTypeWarning, "MonitorDiscovery", w)
				}
			}
		}
		return nil
	}
	tpl := &monv1.MonitorTemplate{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: monv1.ImplicitTemplateName,
		Labels: map[string]string{monv1.ManagedByLabel: monv1.ManagedByValue},
	}}
	if err := r.Create(ctx, tpl, client.FieldOwner(FieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the implicit monitor template: %w", err)
	}
	return nil
}

// SetupWithManager registers the reconciler. It reacts to template spec
// changes, to Ingresses and Services (and Gateway API routes and
// Gateways, see gatewayWatch) whose spec, labels or annotations change,
// and to discovered Monitors that are deleted or edited.
func (r *MonitorTemplateReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor(EventSource)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&monv1.MonitorTemplate{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&monv1.Monitor{}, handler.EnqueueRequestsFromMapFunc(r.templatesOfMonitor), builder.WithPredicates(discoveredMonitorChanged())).
		Watches(&monv1.SLO{}, handler.EnqueueRequestsFromMapFunc(r.templatesOfMonitor), builder.WithPredicates(discoveredMonitorChanged())).
		Watches(&networkingv1.Ingress{}, handler.EnqueueRequestsFromMapFunc(r.templatesOfObject), builder.WithPredicates(objectChanged())).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(r.templatesOfObject), builder.WithPredicates(objectChanged())).
		Named("monitortemplate")
	return r.watchGatewayAPI(mgr, b)
}

// templatesOfObject maps an object to every template of its namespace
// (which one serves it may change with its labels) and, when it opts in by
// annotation, to the implicit template, which may not exist yet.
func (r *MonitorTemplateReconciler) templatesOfObject(ctx context.Context, o client.Object) []reconcile.Request {
	var templates monv1.MonitorTemplateList
	if err := r.List(ctx, &templates, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "unable to map object to monitor templates", "object", o.GetName())
		return nil
	}
	out := make([]reconcile.Request, 0, len(templates.Items)+1)
	implicitSeen := false
	for _, t := range templates.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&t)})
		implicitSeen = implicitSeen || t.Name == monv1.ImplicitTemplateName
	}
	if _, ok := o.GetAnnotations()[monv1.MonitorAnnotation]; ok && !implicitSeen {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: monv1.ImplicitTemplateName}})
	}
	return out
}

// templatesOfMonitor maps a discovered Monitor (or SLO) to its template,
// and a deleted one of any origin to every template of its namespace (one
// may have reported it as a conflict).
func (r *MonitorTemplateReconciler) templatesOfMonitor(ctx context.Context, o client.Object) []reconcile.Request {
	if name, ok := o.GetLabels()[monv1.DiscoveredFromLabel]; ok && o.GetDeletionTimestamp() == nil {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
	}
	return r.templatesOfObject(ctx, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace()}})
}

// discoveredMonitorChanged passes Monitor deletions and spec edits of
// discovered Monitors; the template's own creations and the many status
// writes of a Monitor do not reconcile templates.
func discoveredMonitorChanged() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			_, ok := e.ObjectNew.GetLabels()[monv1.DiscoveredFromLabel]
			return ok && (e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() || e.ObjectNew.GetDeletionTimestamp() != nil)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// objectChanged passes creations, deletions and updates of an object's
// spec (generation), labels or annotations; status writes (an Ingress's
// load balancer address) pass only for Services, whose spec changes do
// not bump a generation.
func objectChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld, e.ObjectNew
			if _, svc := n.(*corev1.Service); svc {
				if os, ok := o.(*corev1.Service); ok && !equality.Semantic.DeepEqual(os.Spec.Ports, n.(*corev1.Service).Spec.Ports) {
					return true
				}
			}
			return o.GetGeneration() != n.GetGeneration() ||
				!equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) ||
				!equality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations())
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
