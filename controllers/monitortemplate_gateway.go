package controllers

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// The Gateway API kinds discovery reads, as bits of gatewayKinds.
const (
	kindHTTPRoute uint32 = 1 << iota
	kindGRPCRoute
	kindGateway
	allGatewayKinds = kindHTTPRoute | kindGRPCRoute | kindGateway
)

// gatewayKinds are the Gateway API kinds the cluster serves and the
// reconciler watches: read only those, since a cache read of a kind
// without its CRD fails (and would start an informer that never syncs).
type gatewayKinds struct{ bits atomic.Uint32 }

func (g *gatewayKinds) has(k uint32) bool { return g.bits.Load()&k != 0 }

// gatewayPollMax is the longest wait between two looks for Gateway API
// CRDs installed after the manager started; the first look after start is
// a second later, each next one twice as late.
const gatewayPollMax = 5 * time.Minute

// watchGatewayAPI builds the controller and watches HTTPRoutes,
// GRPCRoutes and Gateways when the cluster serves them. The manager starts
// fine without the Gateway API: it then looks again (see gatewayPollMax)
// and adds each watch when its CRD appears, so installing the Gateway API
// later needs no restart.
func (r *MonitorTemplateReconciler) watchGatewayAPI(mgr ctrl.Manager, b *builder.Builder) error {
	c, err := b.Build(r)
	if err != nil {
		return err
	}
	w := &gatewayWatch{r: r, c: c, mgr: mgr}
	if err := w.look(context.Background()); err != nil {
		return err
	}
	if r.gateway.bits.Load() == allGatewayKinds {
		return nil
	}
	return mgr.Add(manager.RunnableFunc(w.poll))
}

type gatewayWatch struct {
	r   *MonitorTemplateReconciler
	c   controller.Controller
	mgr ctrl.Manager
}

// look adds the watch of each Gateway API kind the cluster now serves.
func (w *gatewayWatch) look(ctx context.Context) error {
	for _, k := range []struct {
		bit  uint32
		kind string
		obj  client.Object
		fn   handler.MapFunc
	}{
		{kindHTTPRoute, "HTTPRoute", &gatewayv1.HTTPRoute{}, w.r.templatesOfObject},
		{kindGRPCRoute, "GRPCRoute", &gatewayv1.GRPCRoute{}, w.r.templatesOfObject},
		{kindGateway, "Gateway", &gatewayv1.Gateway{}, w.r.allTemplates},
	} {
		if w.r.gateway.has(k.bit) {
			continue
		}
		_, err := w.mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: gatewayv1.GroupName, Kind: k.kind}, gatewayv1.GroupVersion.Version)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("look up the Gateway API kind %s: %w", k.kind, err)
		}
		if err := w.c.Watch(source.Kind(w.mgr.GetCache(), k.obj, handler.EnqueueRequestsFromMapFunc(k.fn), objectChanged())); err != nil {
			return fmt.Errorf("watch %s: %w", k.kind, err)
		}
		w.r.gateway.bits.Or(k.bit)
		ctrl.LoggerFrom(ctx).Info("watching a Gateway API kind for monitor discovery", "kind", k.kind)
	}
	return nil
}

// poll looks for the Gateway API kinds not served yet until all are.
func (w *gatewayWatch) poll(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("monitortemplate")
	wait := time.Second
	for w.r.gateway.bits.Load() != allGatewayKinds {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		if err := w.look(ctx); err != nil {
			log.Error(err, "unable to look for the Gateway API")
		}
		wait = min(2*wait, gatewayPollMax)
	}
	return nil
}

// allTemplates maps a Gateway to every template: routes of any namespace
// may attach to it, and its listeners decide their scheme.
func (r *MonitorTemplateReconciler) allTemplates(ctx context.Context, _ client.Object) []reconcile.Request {
	var templates monv1.MonitorTemplateList
	if err := r.List(ctx, &templates); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "unable to list monitor templates")
		return nil
	}
	out := make([]reconcile.Request, 0, len(templates.Items))
	for _, t := range templates.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&t)})
	}
	return out
}
