package controllers_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/controllers"
	"github.com/uptime-operator/uptime-operator/internal/discovery"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

func TestMonitorTemplateReady(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reason  string
		trouble []string
		ready   bool
		want    string
	}{
		{"all written", "", nil, true, monv1.ReasonReconciled},
		{"a conflict", monv1.ReasonMonitorConflict, []string{"Monitor a exists"}, false, monv1.ReasonMonitorConflict},
		{"many refusals summed up", monv1.ReasonMonitorRefused, []string{"1", "2", "3", "4", "5", "6", "7"}, false, monv1.ReasonMonitorRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason, msg := controllers.MonitorTemplateReady(tc.reason, tc.trouble)
			if ok != tc.ready || reason != tc.want || msg == "" {
				t.Errorf("got %v %s %q", ok, reason, msg)
			}
			if len(tc.trouble) > 5 && !strings.Contains(msg, "and 2 more") {
				t.Errorf("message %q does not count the rest", msg)
			}
		})
	}
}

// TestMonitorTemplateDiscovery runs the real manager on a real API server:
// Ingresses and HTTPRoutes selected by a template or opted in by
// annotation become Monitors that follow them, and nothing else is
// touched. The Gateway API CRDs are installed after the manager started,
// as on a cluster that adds them later.
func TestMonitorTemplateDiscovery(t *testing.T) {
	env := testenv.Use(t, env)
	c := env.Client
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Create(ctx, &monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "discovery"}, Spec: monv1.PlanSpec{Features: plans.AllFeatures()}}))
	ns := env.Namespace(t, map[string]string{monv1.PlanLabel: "discovery"})

	rule := func(host string, paths ...string) networkingv1.IngressRule {
		r := networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{}}}
		for _, p := range paths {
			r.HTTP.Paths = append(r.HTTP.Paths, networkingv1.HTTPIngressPath{Path: p, PathType: ptr.To(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}})
		}
		return r
	}
	name := func(kind monv1.DiscoveredKind, obj, host, path string) string {
		return discovery.Name(kind, obj, discovery.Endpoint{Host: host, Path: path})
	}
	getMonitor := func(n string) (*monv1.Monitor, error) {
		var m monv1.Monitor
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, &m)
		return &m, err
	}
	gone := func(n string) error {
		if _, err := getMonitor(n); !apierrors.IsNotFound(err) {
			return fmt.Errorf("monitor %s still there (%v)", n, err)
		}
		return nil
	}
	wantURL := func(n, url string) error {
		m, err := getMonitor(n)
		if err != nil {
			return err
		}
		if m.Spec.URL != url {
			return fmt.Errorf("monitor %s checks %s, want %s", n, m.Spec.URL, url)
		}
		return nil
	}
	template := func(n string) *monv1.MonitorTemplate {
		var tpl monv1.MonitorTemplate
		must(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, &tpl))
		return &tpl
	}
	objectStatus := func(tpl *monv1.MonitorTemplate, kind monv1.DiscoveredKind, obj string) *monv1.DiscoveredObject {
		for i, o := range tpl.Status.Objects {
			if o.Kind == kind && o.Name == obj {
				return &tpl.Status.Objects[i]
			}
		}
		return nil
	}
	events := func(obj, reason string) ([]corev1.Event, error) {
		var list corev1.EventList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		var out []corev1.Event
		for _, e := range list.Items {
			if e.InvolvedObject.Name == obj && e.Reason == reason && e.Type == corev1.EventTypeWarning {
				out = append(out, e)
			}
		}
		return out, nil
	}

	// The app: Ingress web with two hosts and three paths, TLS for one
	// host; Ingress other, neither selected nor opted in; a hand-made
	// Monitor with the name discovery will want for b.example.com/.
	web := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: map[string]string{"team": "shop"}},
		Spec: networkingv1.IngressSpec{
			TLS:   []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}, SecretName: "a-tls"}},
			Rules: []networkingv1.IngressRule{rule("a.example.com", "/", "/api"), rule("b.example.com", "/")},
		}}
	must(c.Create(ctx, web))
	other := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other", Labels: map[string]string{"team": "else"}},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{rule("other.example.com", "/")}}}
	must(c.Create(ctx, other))
	handMade := name(monv1.KindIngress, "web", "b.example.com", "/")
	must(c.Create(ctx, &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: handMade},
		Spec: monv1.MonitorSpec{URL: "https://hand.example.com/", IntervalSeconds: 300}}))

	must(c.Create(ctx, &monv1.MonitorTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"},
		Spec: monv1.MonitorTemplateSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "shop"}},
			Monitor:  monv1.DiscoveredMonitorSpec{IntervalSeconds: 60, HTTP: &monv1.HTTPConfig{ExpectedStatusCodes: []int32{200}}},
		}}))
	aRoot, aAPI := name(monv1.KindIngress, "web", "a.example.com", "/"), name(monv1.KindIngress, "web", "a.example.com", "/api")

	t.Run("hosts and paths become Monitors, https where TLS is", func(t *testing.T) {
		settle(t, "the Monitors of web", time.Minute, func() error {
			for n, url := range map[string]string{aRoot: "https://a.example.com/", aAPI: "https://a.example.com/api"} {
				if err := wantURL(n, url); err != nil {
					return err
				}
			}
			return nil
		})
		m, _ := getMonitor(aAPI)
		tpl := template("shop")
		if !metav1.IsControlledBy(m, tpl) || m.Labels[monv1.DiscoveredFromLabel] != "shop" || m.Spec.IntervalSeconds != 60 ||
			m.Spec.HTTP == nil || !slices.Equal(m.Spec.HTTP.ExpectedStatusCodes, []int32{200}) || m.Spec.Name != "a.example.com/api" {
			t.Errorf("monitor %s: owners %v labels %v spec %+v", m.Name, m.OwnerReferences, m.Labels, m.Spec)
		}
	})

	t.Run("a template takes no Secret references", func(t *testing.T) {
		err := c.Create(ctx, &monv1.MonitorTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "secrets"},
			Spec: monv1.MonitorTemplateSpec{Monitor: monv1.DiscoveredMonitorSpec{HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{
				{Name: "Authorization", ValueFrom: &monv1.SecretKeySelector{Name: "token", Key: "token"}}}}}}})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "no Secret references") {
			t.Errorf("a template with a header from a Secret: %v", err)
		}
	})

	t.Run("a hand-made Monitor of a wanted name is left alone and reported", func(t *testing.T) {
		settle(t, "the conflict in status and as an Event", time.Minute, func() error {
			tpl := template("shop")
			ready := meta.FindStatusCondition(tpl.Status.Conditions, monv1.ConditionReady)
			if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != monv1.ReasonMonitorConflict || !strings.Contains(ready.Message, handMade) {
				return fmt.Errorf("ready %+v", ready)
			}
			o := objectStatus(tpl, monv1.KindIngress, "web")
			if o == nil || len(o.Monitors) != 2 || len(o.Skipped) != 1 || !strings.Contains(o.Skipped[0].Reason, "not made by this template") {
				return fmt.Errorf("status of web: %+v", o)
			}
			if ev, err := events("shop", monv1.ReasonMonitorConflict); err != nil || len(ev) == 0 {
				return fmt.Errorf("no MonitorConflict event on the template (%v)", err)
			}
			return nil
		})
		m, err := getMonitor(handMade)
		must(err)
		if m.Spec.URL != "https://hand.example.com/" || m.Spec.IntervalSeconds != 300 || len(m.OwnerReferences) != 0 || m.Labels[monv1.DiscoveredFromLabel] != "" {
			t.Errorf("the hand-made Monitor was written: %+v %v %v", m.Spec, m.OwnerReferences, m.Labels)
		}
	})

	// The status page the template's Monitors join: its own list names
	// the hand-made Monitor only, and is never written by discovery.
	must(c.Create(ctx, &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-status"}, Spec: monv1.StatusPageSpec{
		Title: "Shop", Monitors: []monv1.StatusPageMonitor{{MonitorRef: monv1.LocalObjectReference{Name: handMade}, Section: "Hand"}}}}))
	// onPage waits until the page shows exactly want (by Monitor name, in
	// order) and checks that its spec still holds the one hand entry.
	onPage := func(t *testing.T, what string, want ...string) {
		t.Helper()
		settle(t, what, time.Minute, func() error {
			var page monv1.StatusPage
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop-status"}, &page); err != nil {
				return err
			}
			if len(page.Spec.Monitors) != 1 || page.Generation != 1 {
				return fmt.Errorf("the page's spec was written: generation %d, %v", page.Generation, page.Spec.Monitors)
			}
			var got []string
			for _, m := range page.Status.Monitors {
				got = append(got, m.Name)
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("page shows %v, want %v", got, want)
			}
			return nil
		})
	}
	onPage(t, "the page with its hand entry", handMade)

	t.Run("the Monitors join the template's status page", func(t *testing.T) {
		tpl := template("shop")
		tpl.Spec.StatusPage = &monv1.DiscoveredStatusPage{Name: "shop-status", Section: "Web"}
		must(c.Update(ctx, tpl))
		onPage(t, "the discovered Monitors on the page", handMade, aRoot, aAPI)
		m, err := getMonitor(aAPI)
		must(err)
		if m.Labels[monv1.StatusPageLabel] != "shop-status" || m.Annotations[monv1.StatusPageSectionAnnotation] != "Web" {
			t.Errorf("monitor %s: labels %v annotations %v", m.Name, m.Labels, m.Annotations)
		}
		if hm, _ := getMonitor(handMade); hm.Labels[monv1.StatusPageLabel] != "" {
			t.Errorf("the hand-made Monitor was labelled: %v", hm.Labels)
		}

		// Without statusPage in the template they leave the page (and
		// keep their history: the Monitors stay).
		tpl = template("shop")
		tpl.Spec.StatusPage = nil
		must(c.Update(ctx, tpl))
		onPage(t, "the Monitors to leave the page", handMade)
		m, err = getMonitor(aAPI)
		must(err)
		if _, ok := m.Annotations[monv1.StatusPageSectionAnnotation]; ok || m.Labels[monv1.StatusPageLabel] != "" {
			t.Errorf("monitor %s off the page: labels %v annotations %v", m.Name, m.Labels, m.Annotations)
		}
		tpl = template("shop")
		tpl.Spec.StatusPage = &monv1.DiscoveredStatusPage{Name: "shop-status"}
		must(c.Update(ctx, tpl))
		onPage(t, "the discovered Monitors back on the page", handMade, aRoot, aAPI)
	})

	t.Run("an object neither selected nor opted in is left alone", func(t *testing.T) {
		var mons monv1.MonitorList
		must(c.List(ctx, &mons, client.InNamespace(ns)))
		for _, m := range mons.Items {
			if m.Annotations[monv1.DiscoveredSourceAnnotation] == "Ingress/other" || strings.Contains(m.Spec.URL, "other.example.com") {
				t.Errorf("monitor %s made of the unselected Ingress", m.Name)
			}
		}
		if o := objectStatus(template("shop"), monv1.KindIngress, "other"); o != nil {
			t.Errorf("the template lists the unselected Ingress: %+v", o)
		}
		var got networkingv1.Ingress
		must(c.Get(ctx, client.ObjectKeyFromObject(other), &got))
		for _, f := range got.ManagedFields {
			if strings.Contains(f.Manager, "uptime-operator") {
				t.Errorf("the operator wrote the Ingress: %+v", f)
			}
		}
	})

	t.Run("a changed path and TLS update the Monitors", func(t *testing.T) {
		var ing networkingv1.Ingress
		must(c.Get(ctx, client.ObjectKeyFromObject(web), &ing))
		ing.Spec.TLS = nil
		ing.Spec.Rules[0] = rule("a.example.com", "/", "/v2")
		must(c.Update(ctx, &ing))
		aV2 := name(monv1.KindIngress, "web", "a.example.com", "/v2")
		settle(t, "the Monitors to follow the Ingress", time.Minute, func() error {
			if err := gone(aAPI); err != nil {
				return err
			}
			if err := wantURL(aV2, "http://a.example.com/v2"); err != nil {
				return err
			}
			return wantURL(aRoot, "http://a.example.com/") // same Monitor, scheme updated
		})
		onPage(t, "the page to follow the paths", handMade, aRoot, aV2)
	})

	t.Run("a bad annotation is reported, never blocks the object", func(t *testing.T) {
		var ing networkingv1.Ingress
		must(c.Get(ctx, client.ObjectKeyFromObject(web), &ing))
		ing.Annotations = map[string]string{monv1.MonitorIntervalAnnotation: "often"}
		must(c.Update(ctx, &ing)) // accepted: no webhook stands between the app and its Ingress
		settle(t, "the warning in status and as an Event on the Ingress", time.Minute, func() error {
			o := objectStatus(template("shop"), monv1.KindIngress, "web")
			if o == nil || len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "often") {
				return fmt.Errorf("status of web: %+v", o)
			}
			ev, err := events("web", "MonitorDiscovery")
			if err != nil || len(ev) == 0 || !strings.Contains(ev[0].Message, monv1.MonitorIntervalAnnotation) {
				return fmt.Errorf("no warning Event on the Ingress: %v %v", ev, err)
			}
			return nil
		})
		m, err := getMonitor(aRoot)
		must(err)
		if m.Spec.IntervalSeconds != 60 {
			t.Errorf("the bad annotation changed the interval to %d", m.Spec.IntervalSeconds)
		}
		var after networkingv1.Ingress
		must(c.Get(ctx, client.ObjectKeyFromObject(web), &after))
		if after.ResourceVersion != ing.ResourceVersion {
			t.Errorf("the Ingress was written after the user's update (resourceVersion %s, then %s)", ing.ResourceVersion, after.ResourceVersion)
		}
	})

	t.Run("unselected by a label change, the Monitors go", func(t *testing.T) {
		var ing networkingv1.Ingress
		must(c.Get(ctx, client.ObjectKeyFromObject(web), &ing))
		ing.Labels = map[string]string{"team": "moved"}
		must(c.Update(ctx, &ing))
		settle(t, "the Monitors of web to go", time.Minute, func() error {
			var mons monv1.MonitorList
			if err := c.List(ctx, &mons, client.InNamespace(ns), client.MatchingLabels{monv1.DiscoveredFromLabel: "shop"}); err != nil {
				return err
			}
			if len(mons.Items) != 0 {
				return fmt.Errorf("%d discovered monitors left", len(mons.Items))
			}
			if tpl := template("shop"); tpl.Status.ObjectsTotal != 0 || tpl.Status.Monitors != 0 {
				return fmt.Errorf("template status %+v", tpl.Status)
			}
			return nil
		})
		if _, err := getMonitor(handMade); err != nil {
			t.Errorf("the hand-made Monitor went too: %v", err)
		}
		onPage(t, "the page to keep its hand entry alone", handMade)
	})

	t.Run("an annotation alone opts in; deleting the object deletes its Monitors", func(t *testing.T) {
		solo := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "solo",
			Annotations: map[string]string{monv1.MonitorAnnotation: "true", monv1.MonitorPathAnnotation: "/healthz",
				monv1.MonitorStatusPageAnnotation: "shop-status"}},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{rule("solo.example.com", "/", "/app")}}}
		must(c.Create(ctx, solo))
		n := name(monv1.KindIngress, "solo", "solo.example.com", "/healthz")
		settle(t, "the implicit template's Monitor", time.Minute, func() error {
			if err := wantURL(n, "http://solo.example.com/healthz"); err != nil {
				return err
			}
			m, _ := getMonitor(n)
			var tpl monv1.MonitorTemplate
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: monv1.ImplicitTemplateName}, &tpl); err != nil {
				return err
			}
			if !metav1.IsControlledBy(m, &tpl) || tpl.Labels[monv1.ManagedByLabel] != monv1.ManagedByValue {
				return fmt.Errorf("owners %v, template labels %v", m.OwnerReferences, tpl.Labels)
			}
			return nil
		})
		onPage(t, "the annotated Ingress's Monitor on the page it names", handMade, n)
		// Without the annotation the Monitor stays, off the page.
		var ing networkingv1.Ingress
		must(c.Get(ctx, client.ObjectKeyFromObject(solo), &ing))
		delete(ing.Annotations, monv1.MonitorStatusPageAnnotation)
		must(c.Update(ctx, &ing))
		onPage(t, "the Monitor to leave the page with the annotation", handMade)
		if _, err := getMonitor(n); err != nil {
			t.Errorf("the Monitor went with the page annotation: %v", err)
		}
		must(c.Get(ctx, client.ObjectKeyFromObject(solo), &ing))
		ing.Annotations[monv1.MonitorStatusPageAnnotation] = "shop-status"
		must(c.Update(ctx, &ing))
		onPage(t, "the Monitor back on the page", handMade, n)
		must(c.Delete(ctx, solo))
		onPage(t, "the deleted Ingress's Monitor to leave the page", handMade)
		settle(t, "the Monitor and the implicit template to go", time.Minute, func() error {
			if err := gone(n); err != nil {
				return err
			}
			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: monv1.ImplicitTemplateName}, &monv1.MonitorTemplate{})
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("implicit template still there (%v)", err)
			}
			return nil
		})
	})

	t.Run("HTTPRoutes once the Gateway API is installed", func(t *testing.T) {
		installGatewayAPI(t, env.Config)
		must(c.Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"}, Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "example",
			Listeners: []gatewayv1.Listener{{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
				Hostname: ptr.To(gatewayv1.Hostname("*.example.com")),
				TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModeTerminate),
					CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "wildcard-tls"}}}}},
		}}))
		prefix, exact := gatewayv1.PathMatchPathPrefix, gatewayv1.PathMatchExact
		route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api", Labels: map[string]string{"team": "shop"}},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
				Hostnames:       []gatewayv1.Hostname{"api.example.com"},
				Rules: []gatewayv1.HTTPRouteRule{{Matches: []gatewayv1.HTTPRouteMatch{
					{Path: &gatewayv1.HTTPPathMatch{Type: &prefix, Value: ptr.To("/v1")}},
					{Path: &gatewayv1.HTTPPathMatch{Type: &exact, Value: ptr.To("/status")}},
				}}},
			}}
		// The watch of HTTPRoutes starts when the controller notices the
		// CRD: until then the route is created but not seen.
		settle(t, "the HTTPRoute to be accepted", time.Minute, func() error { return c.Create(ctx, route.DeepCopy()) })
		v1, status := name(monv1.KindHTTPRoute, "api", "api.example.com", "/v1"), name(monv1.KindHTTPRoute, "api", "api.example.com", "/status")
		settle(t, "the Monitors of the HTTPRoute", 2*time.Minute, func() error {
			if err := wantURL(v1, "https://api.example.com/v1"); err != nil {
				return err
			}
			return wantURL(status, "https://api.example.com/status")
		})
		var r gatewayv1.HTTPRoute
		must(c.Get(ctx, client.ObjectKeyFromObject(route), &r))
		r.Spec.Rules[0].Matches = r.Spec.Rules[0].Matches[:1]
		must(c.Update(ctx, &r))
		settle(t, "the removed path match's Monitor to go", time.Minute, func() error { return gone(status) })
		must(c.Delete(ctx, &r))
		settle(t, "the deleted route's Monitors to go", time.Minute, func() error { return gone(v1) })
	})

	t.Run("GRPCRoutes become grpc Monitors that follow their listeners", func(t *testing.T) {
		// The Gateway API CRDs and Gateway gw (HTTPS on 443 for
		// *.example.com) are there from the HTTPRoute test; gw-h2c serves
		// plaintext HTTP/2 on 8080 for any host.
		must(c.Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw-h2c"}, Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "example",
			Listeners:        []gatewayv1.Listener{{Name: "h2c", Port: 8080, Protocol: gatewayv1.HTTPProtocolType}},
		}}))
		route := &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders", Labels: map[string]string{"team": "shop"}},
			Spec: gatewayv1.GRPCRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
				Hostnames:       []gatewayv1.Hostname{"grpc.example.com", "*.example.com"},
				Rules: []gatewayv1.GRPCRouteRule{{Matches: []gatewayv1.GRPCRouteMatch{
					{Method: &gatewayv1.GRPCMethodMatch{Service: ptr.To("shop.Orders")}}}}},
			}}
		settle(t, "the GRPCRoute to be accepted", time.Minute, func() error { return c.Create(ctx, route.DeepCopy()) })
		n := name(monv1.KindGRPCRoute, "orders", "grpc.example.com", "")
		wantGRPC := func(target string, plaintext bool) func() error {
			return func() error {
				m, err := getMonitor(n)
				if err != nil {
					return err
				}
				if m.Spec.Type != monv1.MonitorGRPC || m.Spec.GRPC == nil || m.Spec.GRPC.Target != target || m.Spec.GRPC.Plaintext != plaintext ||
					m.Spec.URL != "" || m.Spec.HTTP != nil {
					return fmt.Errorf("monitor %s: type %s url %q grpc %+v", n, m.Spec.Type, m.Spec.URL, m.Spec.GRPC)
				}
				return nil
			}
		}
		settle(t, "the grpc Monitor with TLS on 443", 2*time.Minute, wantGRPC("grpc.example.com:443", false))
		settle(t, "the wildcard hostname skipped in status", time.Minute, func() error {
			o := objectStatus(template("shop"), monv1.KindGRPCRoute, "orders")
			if o == nil || !slices.Equal(o.Monitors, []string{n}) || len(o.Skipped) != 1 || o.Skipped[0].Endpoint != "*.example.com" {
				return fmt.Errorf("status of orders: %+v", o)
			}
			return nil
		})

		// Moved to the plaintext listener: the same Monitor (its name is
		// the host's) follows, and keeps its history.
		m, err := getMonitor(n)
		must(err)
		uid := m.UID
		var r gatewayv1.GRPCRoute
		must(c.Get(ctx, client.ObjectKeyFromObject(route), &r))
		r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: "gw-h2c"}}
		must(c.Update(ctx, &r))
		settle(t, "the grpc Monitor to follow the listener", time.Minute, wantGRPC("grpc.example.com:8080", true))
		if m, _ := getMonitor(n); m.UID != uid {
			t.Errorf("the Monitor was replaced (uid %s, was %s)", m.UID, uid)
		}

		// A listener change alone (the Gateway, not the route) is followed too.
		var gw gatewayv1.Gateway
		must(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gw-h2c"}, &gw))
		gw.Spec.Listeners[0].Port = 9090
		must(c.Update(ctx, &gw))
		settle(t, "the grpc Monitor to follow the Gateway", time.Minute, wantGRPC("grpc.example.com:9090", true))

		must(c.Get(ctx, client.ObjectKeyFromObject(route), &r))
		r.Labels = nil
		must(c.Update(ctx, &r))
		settle(t, "the unselected GRPCRoute's Monitor to go", time.Minute, func() error { return gone(n) })
		must(c.Delete(ctx, &r))
	})

	t.Run("the samples work as documented", func(t *testing.T) {
		samples := env.Namespace(t, map[string]string{monv1.PlanLabel: "discovery"})
		for _, f := range []struct {
			file string
			obj  client.Object
		}{{"01_monitorgroup.yaml", &monv1.MonitorGroup{}}, {"13_monitortemplate.yaml", &monv1.MonitorTemplate{}}, {"14_ingress_discovered.yaml", &networkingv1.Ingress{}}} {
			raw, err := os.ReadFile(filepath.Join("..", "config", "samples", f.file))
			must(err)
			must(yaml.UnmarshalStrict(raw, f.obj))
			f.obj.SetNamespace(samples)
			must(c.Create(ctx, f.obj))
		}
		for host, url := range map[string]string{"shop.example.com": "https://shop.example.com/healthz", "api.shop.example.com": "http://api.shop.example.com/healthz"} {
			n := name(monv1.KindIngress, "storefront", host, "/healthz")
			settle(t, "the sample Ingress's Monitor "+n, time.Minute, func() error {
				var m monv1.Monitor
				if err := c.Get(ctx, client.ObjectKey{Namespace: samples, Name: n}, &m); err != nil {
					return err
				}
				if m.Spec.URL != url || m.Spec.IntervalSeconds != 120 || m.Spec.GroupRef == nil || m.Spec.GroupRef.Name != "storefront" ||
					m.Labels[monv1.StatusPageLabel] != "shop-status" || m.Annotations[monv1.StatusPageSectionAnnotation] != "Storefront" {
					return fmt.Errorf("monitor %s: %+v labels %v", n, m.Spec, m.Labels)
				}
				var slo monv1.SLO
				if err := c.Get(ctx, client.ObjectKey{Namespace: samples, Name: n}, &slo); err != nil {
					return err
				}
				if slo.Spec.MonitorRef.Name != n || slo.Spec.TargetPercentage != 99.5 || len(slo.OwnerReferences) != 1 || slo.OwnerReferences[0].Name != "storefront" {
					return fmt.Errorf("slo %s: %+v owners %v", n, slo.Spec, slo.OwnerReferences)
				}
				return nil
			})
		}
		// Without slo in the template, its SLOs go and its Monitors stay.
		var tpl monv1.MonitorTemplate
		must(c.Get(ctx, client.ObjectKey{Namespace: samples, Name: "storefront"}, &tpl))
		tpl.Spec.SLO = nil
		must(c.Update(ctx, &tpl))
		settle(t, "the template's SLOs to go", time.Minute, func() error {
			var slos monv1.SLOList
			if err := c.List(ctx, &slos, client.InNamespace(samples)); err != nil {
				return err
			}
			if len(slos.Items) != 0 {
				return fmt.Errorf("%d SLOs left", len(slos.Items))
			}
			var mons monv1.MonitorList
			if err := c.List(ctx, &mons, client.InNamespace(samples)); err != nil || len(mons.Items) != 2 {
				return fmt.Errorf("%d monitors (%v)", len(mons.Items), err)
			}
			return nil
		})
	})

	t.Run("deleting the template deletes its Monitors", func(t *testing.T) {
		var ing networkingv1.Ingress
		must(c.Get(ctx, client.ObjectKeyFromObject(other), &ing))
		ing.Labels = map[string]string{"team": "shop"}
		must(c.Update(ctx, &ing))
		n := name(monv1.KindIngress, "other", "other.example.com", "/")
		settle(t, "other's Monitor", time.Minute, func() error { return wantURL(n, "http://other.example.com/") })
		must(c.Delete(ctx, template("shop")))
		// envtest runs no garbage collector: check the ownerReference it
		// would follow, and that the Ingress itself is not an owner.
		m, err := getMonitor(n)
		must(err)
		if len(m.OwnerReferences) != 1 || m.OwnerReferences[0].Kind != "MonitorTemplate" || m.OwnerReferences[0].Name != "shop" {
			t.Errorf("owners %v", m.OwnerReferences)
		}
	})
}

// installGatewayAPI applies the Gateway API's standard CRDs that discovery
// reads, from the sigs.k8s.io/gateway-api module, and waits until they are
// served.
func installGatewayAPI(t *testing.T, cfg *rest.Config) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("find the gateway-api module: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	for _, f := range []string{"gateways", "httproutes", "grpcroutes"} {
		raw, err := os.ReadFile(filepath.Join(dir, "gateway.networking.k8s.io_"+f+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(context.Background(), &crd); err != nil {
			t.Fatalf("install %s: %v", crd.Name, err)
		}
	}
}
