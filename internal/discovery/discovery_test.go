package discovery

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func endpoints(s Source) []string {
	var out []string
	for _, e := range s.Endpoints {
		if e.GRPC {
			out = append(out, "grpc:"+e.hostPort()+tlsMark(e))
			continue
		}
		out = append(out, e.URL())
	}
	return out
}

func tlsMark(e Endpoint) string {
	if e.TLS {
		return "+tls"
	}
	return ""
}

func ingressPaths(paths ...string) *networkingv1.HTTPIngressRuleValue {
	v := &networkingv1.HTTPIngressRuleValue{}
	for _, p := range paths {
		v.Paths = append(v.Paths, networkingv1.HTTPIngressPath{Path: p})
	}
	return v
}

func TestFromIngress(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    networkingv1.IngressSpec
		want    []string
		skipped int
	}{
		{"hosts and paths, TLS for one host", networkingv1.IngressSpec{
			TLS: []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com"}}},
			Rules: []networkingv1.IngressRule{
				{Host: "shop.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: ingressPaths("/", "/api")}},
				{Host: "admin.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: ingressPaths("/admin")}},
			}},
			[]string{"https://shop.example.com/", "https://shop.example.com/api", "http://admin.example.com/admin"}, 0},
		{"wildcard TLS covers one label", networkingv1.IngressSpec{
			TLS: []networkingv1.IngressTLS{{Hosts: []string{"*.example.com"}}},
			Rules: []networkingv1.IngressRule{
				{Host: "a.example.com"}, {Host: "b.c.example.com"},
			}},
			[]string{"https://a.example.com/", "http://b.c.example.com/"}, 0},
		{"no host, wildcard host, regex path skipped", networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{
				{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: ingressPaths("/")}},
				{Host: "*.example.com"},
				{Host: "x.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: ingressPaths("/api(/|$)(.*)", "/ok")}},
			}},
			[]string{"http://x.example.com/ok"}, 3},
		{"default backend only", networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{}}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := FromIngress(&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: tc.spec})
			if got := endpoints(src); !slices.Equal(got, tc.want) {
				t.Errorf("endpoints %v, want %v", got, tc.want)
			}
			if len(src.Skipped) != tc.skipped {
				t.Errorf("skipped %v, want %d", src.Skipped, tc.skipped)
			}
		})
	}
}

func gateway(ns, name string, listeners ...gatewayv1.Listener) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: gatewayv1.GatewaySpec{Listeners: listeners}}
}

func gateways(gws ...*gatewayv1.Gateway) Gateways {
	return func(ns, name string) *gatewayv1.Gateway {
		for _, g := range gws {
			if g.Namespace == ns && g.Name == name {
				return g
			}
		}
		return nil
	}
}

func TestFromHTTPRoute(t *testing.T) {
	https := gatewayv1.Listener{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: ptr.To(gatewayv1.Hostname("*.example.com"))}
	http := gatewayv1.Listener{Name: "http", Port: 8080, Protocol: gatewayv1.HTTPProtocolType}
	pathMatch := func(typ gatewayv1.PathMatchType, v string) gatewayv1.HTTPRouteMatch {
		return gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: &typ, Value: &v}}
	}
	rules := []gatewayv1.HTTPRouteRule{
		{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/api"), pathMatch(gatewayv1.PathMatchExact, "/login")}},
		{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchRegularExpression, "/v[0-9]+")}},
	}
	for _, tc := range []struct {
		name     string
		spec     gatewayv1.HTTPRouteSpec
		gws      Gateways
		want     []string
		warnings int
		skipped  int
	}{
		{"https listener", gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{"a.example.com", "b.example.com"}, Rules: rules},
			gateways(gateway("apps", "gw", https)),
			[]string{"https://a.example.com/api", "https://a.example.com/login", "https://b.example.com/api", "https://b.example.com/login"}, 0, 1},
		{"section name picks the http listener, its port kept", gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra")), SectionName: ptr.To(gatewayv1.SectionName("http"))}}},
			Hostnames:       []gatewayv1.Hostname{"a.example.com"}},
			gateways(gateway("infra", "gw", https, http)),
			[]string{"http://a.example.com:8080/"}, 0, 0},
		{"gateway missing: http with a warning", gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gone"}}},
			Hostnames:       []gatewayv1.Hostname{"a.example.com"}},
			nil, []string{"http://a.example.com/"}, 1, 0},
		{"hostnames from the listener", gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}}},
			gateways(gateway("apps", "gw", gatewayv1.Listener{Name: "x", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: ptr.To(gatewayv1.Hostname("x.example.com"))})),
			[]string{"https://x.example.com/"}, 0, 0},
		{"no host anywhere", gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}}},
			gateways(gateway("apps", "gw", https)), nil, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "r"}, Spec: tc.spec}
			src := FromHTTPRoute(route, tc.gws)
			if got := endpoints(src); !slices.Equal(got, tc.want) {
				t.Errorf("endpoints %v, want %v", got, tc.want)
			}
			if len(src.Warnings) != tc.warnings || len(src.Skipped) != tc.skipped {
				t.Errorf("warnings %v skipped %v, want %d and %d", src.Warnings, src.Skipped, tc.warnings, tc.skipped)
			}
		})
	}
}

func TestFromGRPCRoute(t *testing.T) {
	route := &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "g"}, Spec: gatewayv1.GRPCRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
		Hostnames:       []gatewayv1.Hostname{"rpc.example.com", "plain.internal.example"},
	}}
	gw := gateway("apps", "gw",
		gatewayv1.Listener{Name: "tls", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: ptr.To(gatewayv1.Hostname("rpc.example.com"))},
		gatewayv1.Listener{Name: "h2c", Port: 9000, Protocol: gatewayv1.HTTPProtocolType})
	got := endpoints(FromGRPCRoute(route, gateways(gw)))
	want := []string{"grpc:rpc.example.com:443+tls", "grpc:plain.internal.example:9000"}
	if !slices.Equal(got, want) {
		t.Errorf("endpoints %v, want %v", got, want)
	}
	spec := MonitorSpec(&monv1.DiscoveredMonitorSpec{}, FromGRPCRoute(route, gateways(gw)).Endpoints[1], 0)
	if spec.Type != monv1.MonitorGRPC || spec.GRPC == nil || spec.GRPC.Target != "plain.internal.example:9000" || !spec.GRPC.Plaintext || spec.URL != "" {
		t.Errorf("grpc spec %+v %+v", spec, spec.GRPC)
	}
}

func TestFromService(t *testing.T) {
	svc := func(ann map[string]string, typ corev1.ServiceType, ports ...corev1.ServicePort) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "api", Annotations: ann},
			Spec: corev1.ServiceSpec{Type: typ, Ports: ports, ExternalName: "api.example.com"}}
	}
	for _, tc := range []struct {
		name     string
		svc      *corev1.Service
		want     []string
		warnings int
	}{
		{"http port by name", svc(nil, "", corev1.ServicePort{Name: "metrics", Port: 9090}, corev1.ServicePort{Name: "http", Port: 8080}),
			[]string{"http://api.apps.svc:8080/"}, 0},
		{"https by port 443", svc(nil, "", corev1.ServicePort{Name: "web", Port: 443}, corev1.ServicePort{Name: "x", Port: 1}),
			[]string{"https://api.apps.svc/"}, 0},
		{"annotation names the port", svc(map[string]string{monv1.MonitorPortAnnotation: "admin"}, "", corev1.ServicePort{Name: "http", Port: 80}, corev1.ServicePort{Name: "admin", Port: 9000}),
			[]string{"http://api.apps.svc:9000/"}, 0},
		{"bad annotation falls back with a warning", svc(map[string]string{monv1.MonitorPortAnnotation: "nope"}, "", corev1.ServicePort{Name: "http", Port: 80}),
			[]string{"http://api.apps.svc/"}, 1},
		{"no port to pick", svc(nil, "", corev1.ServicePort{Name: "a", Port: 1}, corev1.ServicePort{Name: "b", Port: 2}), nil, 0},
		{"external name", svc(nil, corev1.ServiceTypeExternalName), []string{"http://api.example.com/"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := FromService(tc.svc)
			if got := endpoints(src); !slices.Equal(got, tc.want) {
				t.Errorf("endpoints %v, want %v", got, tc.want)
			}
			if len(src.Warnings) != tc.warnings {
				t.Errorf("warnings %v, want %d", src.Warnings, tc.warnings)
			}
		})
	}
}

func template(name string, created time.Time, sel map[string]string, kinds ...monv1.DiscoveredKind) monv1.MonitorTemplate {
	t := monv1.MonitorTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec: monv1.MonitorTemplateSpec{Kinds: kinds}}
	if sel != nil {
		t.Spec.Selector = &metav1.LabelSelector{MatchLabels: sel}
	}
	return t
}

func TestClaimOf(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tpls := []monv1.MonitorTemplate{
		template("newer", t0.Add(time.Hour), map[string]string{"team": "shop"}),
		template("older", t0, map[string]string{"team": "shop"}),
		template("services", t0, map[string]string{"team": "shop"}, monv1.KindService),
		template("named-only", t0, nil),
	}
	for _, tc := range []struct {
		name     string
		kind     monv1.DiscoveredKind
		labels   map[string]string
		ann      map[string]string
		want     string
		warnings int
	}{
		{"unselected and not opted in: nothing", monv1.KindIngress, map[string]string{"team": "other"}, nil, "", 0},
		{"the oldest selecting template", monv1.KindIngress, map[string]string{"team": "shop"}, nil, "older", 0},
		{"kinds narrow the selector", monv1.KindService, map[string]string{"team": "shop"}, nil, "older", 0},
		{"opted out", monv1.KindIngress, map[string]string{"team": "shop"}, map[string]string{monv1.MonitorAnnotation: "false"}, "", 0},
		{"annotation alone: the implicit template", monv1.KindIngress, nil, map[string]string{monv1.MonitorAnnotation: "true"}, monv1.ImplicitTemplateName, 0},
		{"annotation names a template", monv1.KindIngress, map[string]string{"team": "shop"}, map[string]string{monv1.MonitorTemplateAnnotation: "named-only"}, "named-only", 0},
		{"unknown template named: warning, selector still applies", monv1.KindIngress, map[string]string{"team": "shop"}, map[string]string{monv1.MonitorTemplateAnnotation: "gone"}, "older", 1},
		{"bad opt-in value: warning, not opted in", monv1.KindIngress, nil, map[string]string{monv1.MonitorAnnotation: "yes"}, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ClaimOf(tpls, &Source{Kind: tc.kind, Labels: tc.labels, Annotations: tc.ann})
			if c.Template != tc.want || len(c.Warnings) != tc.warnings {
				t.Errorf("claim %+v, want %q with %d warnings", c, tc.want, tc.warnings)
			}
		})
	}
}

func TestParseOverrides(t *testing.T) {
	o, w := ParseOverrides(map[string]string{monv1.MonitorPathAnnotation: "/healthz", monv1.MonitorIntervalAnnotation: "60"})
	if o.Path != "/healthz" || o.IntervalSeconds != 60 || len(w) != 0 {
		t.Errorf("good overrides: %+v %v", o, w)
	}
	o, w = ParseOverrides(map[string]string{monv1.MonitorPathAnnotation: "healthz", monv1.MonitorIntervalAnnotation: "5"})
	if o != (Overrides{}) || len(w) != 2 {
		t.Errorf("bad overrides: %+v %v", o, w)
	}
	o, w = ParseOverrides(map[string]string{monv1.MonitorStatusPageAnnotation: "shop-status"})
	if o.StatusPage != "shop-status" || len(w) != 0 {
		t.Errorf("status page override: %+v %v", o, w)
	}
	for _, bad := range []string{"Shop", "shop.example", "-shop", "", strings.Repeat("a", 64)} {
		o, w = ParseOverrides(map[string]string{monv1.MonitorStatusPageAnnotation: bad})
		if o.StatusPage != "" || len(w) != 1 || !strings.Contains(w[0], monv1.MonitorStatusPageAnnotation) {
			t.Errorf("status page %q: %+v %v", bad, o, w)
		}
	}
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

func TestName(t *testing.T) {
	e := Endpoint{Host: "shop.example.com", Path: "/api"}
	n := Name(monv1.KindIngress, "web", e)
	if !strings.HasPrefix(n, "web-shop-example-com-") || !dnsLabel.MatchString(n) {
		t.Errorf("name %q", n)
	}
	if Name(monv1.KindIngress, "web", Endpoint{Host: e.Host, Path: e.Path, TLS: true, Port: 8443}) != n {
		t.Error("the name changed with the scheme or port: the Monitor would not follow its endpoint")
	}
	for _, other := range []string{Name(monv1.KindService, "web", e), Name(monv1.KindIngress, "web2", e),
		Name(monv1.KindIngress, "web", Endpoint{Host: e.Host, Path: "/"})} {
		if other == n {
			t.Errorf("%q: two endpoints share a name", other)
		}
	}
	long := Name(monv1.KindIngress, strings.Repeat("very-long-ingress-name-", 5), Endpoint{Host: strings.Repeat("sub.", 20) + "example.com", Path: "/"})
	if len(long) > 63 || !dnsLabel.MatchString(long) || !strings.HasPrefix(long, "very-long") || !strings.Contains(long, "-sub-") {
		t.Errorf("long name %q (%d)", long, len(long))
	}
}

func TestPlan(t *testing.T) {
	src := FromIngress(&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: networkingv1.IngressSpec{
		TLS: []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}}},
		Rules: []networkingv1.IngressRule{
			{Host: "a.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: ingressPaths("/", "/api", "/admin")}},
			{Host: "b.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: ingressPaths("/")}},
		}}})
	tpl := &monv1.MonitorTemplate{Spec: monv1.MonitorTemplateSpec{MaxMonitorsPerObject: 3, Monitor: monv1.DiscoveredMonitorSpec{
		IntervalSeconds: 60, Regions: []string{"eu"}, HTTP: &monv1.HTTPConfig{ExpectedStatusCodes: []int32{200}},
	}}}
	r := Plan(tpl, &src)
	if len(r.Monitors) != 3 || len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0].Reason, "bound of 3") {
		t.Fatalf("bounded plan: %d monitors, skipped %v", len(r.Monitors), r.Skipped)
	}
	m := r.Monitors[1]
	if m.Spec.URL != "https://a.example.com/api" || m.Spec.Type != monv1.MonitorHTTP || m.Spec.IntervalSeconds != 60 ||
		!slices.Equal(m.Spec.Regions, []string{"eu"}) || m.Spec.HTTP == nil || m.Spec.HTTP.ExpectedStatusCodes[0] != 200 || m.Spec.Name != "a.example.com/api" {
		t.Errorf("spec %+v", m.Spec)
	}
	m.Spec.Regions[0] = "changed"
	if tpl.Spec.Monitor.Regions[0] != "eu" {
		t.Error("the planned spec shares memory with the template")
	}

	// A path override makes one Monitor per host.
	src.Annotations = map[string]string{monv1.MonitorPathAnnotation: "/healthz", monv1.MonitorIntervalAnnotation: "abc"}
	r = Plan(tpl, &src)
	var urls []string
	for _, m := range r.Monitors {
		urls = append(urls, m.Spec.URL)
		if m.Spec.IntervalSeconds != 60 {
			t.Errorf("a bad interval annotation changed the interval: %d", m.Spec.IntervalSeconds)
		}
	}
	if !slices.Equal(urls, []string{"https://a.example.com/healthz", "http://b.example.com/healthz"}) || len(r.Warnings) != 1 {
		t.Errorf("override: %v warnings %v", urls, r.Warnings)
	}
	if r.Monitors[0].StatusPage != nil {
		t.Errorf("a Monitor joins status page %+v without template or annotation naming one", r.Monitors[0].StatusPage)
	}

	// The template's status page, its name overridden per object (the
	// section stays the template's).
	tpl.Spec.StatusPage = &monv1.DiscoveredStatusPage{Name: "shop", Section: "Storefront"}
	if p := Plan(tpl, &src).Monitors[0].StatusPage; p == nil || *p != *tpl.Spec.StatusPage {
		t.Errorf("the template's page: %+v", p)
	}
	src.Annotations = map[string]string{monv1.MonitorStatusPageAnnotation: "status"}
	r = Plan(tpl, &src)
	if p := r.Monitors[0].StatusPage; p == nil || p.Name != "status" || p.Section != "Storefront" || tpl.Spec.StatusPage.Name != "shop" {
		t.Errorf("the annotation's page: %+v (template %+v)", p, tpl.Spec.StatusPage)
	}
	tpl.Spec.StatusPage = nil
	if p := Plan(tpl, &src).Monitors[0].StatusPage; p == nil || p.Name != "status" || p.Section != "" {
		t.Errorf("the annotation's page without one in the template: %+v", p)
	}
}

// TestDiscoveredMonitorSpecIsMonitorSpec fails when a field of the
// template's monitor section is not the MonitorSpec field of the same
// JSON name and type: the section is a subset of MonitorSpec, one
// declaration per concept.
func TestDiscoveredMonitorSpecIsMonitorSpec(t *testing.T) {
	fields := func(typ reflect.Type) map[string]reflect.Type {
		out := map[string]reflect.Type{}
		for i := range typ.NumField() {
			f := typ.Field(i)
			out[strings.Split(f.Tag.Get("json"), ",")[0]] = f.Type
		}
		return out
	}
	mon := fields(reflect.TypeOf(monv1.MonitorSpec{}))
	for name, typ := range fields(reflect.TypeOf(monv1.DiscoveredMonitorSpec{})) {
		if mon[name] != typ {
			t.Errorf("monitor.%s is %v, MonitorSpec.%s is %v", name, typ, name, mon[name])
		}
	}
	slo := fields(reflect.TypeOf(monv1.SLOSpec{}))
	for name, typ := range fields(reflect.TypeOf(monv1.DiscoveredSLOSpec{})) {
		if slo[name] != typ {
			t.Errorf("slo.%s is %v, SLOSpec.%s is %v", name, typ, name, slo[name])
		}
	}
	ds := monv1.DiscoveredSLOSpec{TargetPercentage: 99.5, SLIType: monv1.SLILatency, LatencyThresholdMs: 300, WindowMinutes: 60}
	got := reflect.ValueOf(SLOSpec(&ds, "m"))
	dsv := reflect.ValueOf(ds)
	for i := range dsv.NumField() {
		name := dsv.Type().Field(i).Name
		if !reflect.DeepEqual(got.FieldByName(name).Interface(), dsv.Field(i).Interface()) {
			t.Errorf("SLOSpec does not copy %s", name)
		}
	}
	if got.Interface().(monv1.SLOSpec).MonitorRef.Name != "m" {
		t.Error("SLOSpec does not name the monitor")
	}
	// MonitorSpec copies every field across.
	d := monv1.DiscoveredMonitorSpec{Type: monv1.MonitorAPI, IntervalSeconds: 30, GroupRef: &monv1.LocalObjectReference{Name: "g"},
		EscalationPolicyRef: &monv1.LocalObjectReference{Name: "p"}, Tags: []string{"t"}, Regions: []string{"r"},
		NotificationEmails: []string{"a@example.com"}, Confirmation: &monv1.ConfirmationSpec{Regions: 2}, HTTP: &monv1.HTTPConfig{Keyword: "ok"}}
	spec := reflect.ValueOf(MonitorSpec(&d, Endpoint{Host: "h.example.com", Path: "/"}, 0))
	dv := reflect.ValueOf(d)
	for i := range dv.NumField() {
		name := dv.Type().Field(i).Name
		if !reflect.DeepEqual(spec.FieldByName(name).Interface(), dv.Field(i).Interface()) {
			t.Errorf("MonitorSpec does not copy %s", name)
		}
	}
}
