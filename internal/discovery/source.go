package discovery

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// Source is an object reduced to what discovery reads of it.
type Source struct {
	Kind        monv1.DiscoveredKind
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	// Endpoints are what the object serves, in the object's order.
	Endpoints []Endpoint
	// Skipped are the parts of the object that name no checkable endpoint.
	Skipped []monv1.SkippedEndpoint
	// Warnings are fall-backs taken while reading the object.
	Warnings []string
}

// Endpoint is one checkable host and path of an object.
type Endpoint struct {
	// Host is the DNS name (or address) checked.
	Host string
	// Port is the port when it is not the scheme's default (0 otherwise).
	Port int32
	// Path is the URL path (http endpoints).
	Path string
	// TLS says the endpoint is served over TLS (https, or a gRPC
	// connection with TLS).
	TLS bool
	// GRPC marks a gRPC endpoint (GRPCRoute): checked as host:port.
	GRPC bool
}

// hostPort is the endpoint's host with its port when the port is not the
// scheme's default.
func (e Endpoint) hostPort() string {
	def := int32(80)
	if e.TLS {
		def = 443
	}
	if e.GRPC || (e.Port != 0 && e.Port != def) {
		p := e.Port
		if p == 0 {
			p = def
		}
		return net.JoinHostPort(e.Host, strconv.Itoa(int(p)))
	}
	return e.Host
}

// URL is the checked URL of an http endpoint.
func (e Endpoint) URL() string {
	scheme := "http"
	if e.TLS {
		scheme = "https"
	}
	return scheme + "://" + e.hostPort() + e.Path
}

// String is the endpoint as status and Events show it.
func (e Endpoint) String() string {
	if e.GRPC {
		return e.hostPort()
	}
	return e.Host + e.Path
}

// plainPath matches the paths a check can request as written: no regular
// expressions, query or fragment.
var plainPath = regexp.MustCompile(`^/[A-Za-z0-9._~!$&'*+,;=:@%/-]*$`)

// dnsName matches a host name discovery checks: no wildcard, no port.
var dnsName = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// hostSkip says why host cannot be checked, "" when it can.
func hostSkip(host string) string {
	switch {
	case host == "":
		return "the rule has no host"
	case strings.HasPrefix(host, "*"):
		return "a wildcard host names no single site"
	case !dnsName.MatchString(host):
		return "not a DNS name"
	}
	return ""
}

// hostMatches reports whether pattern (a TLS or listener host, possibly a
// wildcard "*.example.com" matching one label) covers host; an empty
// pattern covers every host.
func hostMatches(pattern, host string) bool {
	if pattern == "" || pattern == host {
		return true
	}
	if suffix, ok := strings.CutPrefix(pattern, "*"); ok {
		rest, found := strings.CutSuffix(host, suffix)
		return found && rest != "" && !strings.Contains(rest, ".")
	}
	return false
}

// FromIngress reads an Ingress: one endpoint per rule host and path, https
// when a TLS entry lists the host (wildcards included).
func FromIngress(ing *networkingv1.Ingress) Source {
	src := Source{Kind: monv1.KindIngress, Name: ing.Name, Labels: ing.Labels, Annotations: ing.Annotations}
	tls := func(host string) bool {
		for _, t := range ing.Spec.TLS {
			for _, h := range t.Hosts {
				if hostMatches(h, host) {
					return true
				}
			}
		}
		return false
	}
	if len(ing.Spec.Rules) == 0 {
		src.Skipped = append(src.Skipped, monv1.SkippedEndpoint{Endpoint: "defaultBackend", Reason: "the Ingress has no rules with a host"})
	}
	for i, r := range ing.Spec.Rules {
		if why := hostSkip(r.Host); why != "" {
			src.Skipped = append(src.Skipped, monv1.SkippedEndpoint{Endpoint: fmt.Sprintf("rule %d (%s)", i+1, r.Host), Reason: why})
			continue
		}
		var paths []string
		if r.HTTP != nil {
			for _, p := range r.HTTP.Paths {
				paths = append(paths, p.Path)
			}
		}
		src.addPaths(r.Host, 0, tls(r.Host), paths)
	}
	return src
}

// addPaths adds an endpoint per path of host ("/" for none), skipping the
// paths a check cannot request.
func (s *Source) addPaths(host string, port int32, tls bool, paths []string) {
	if len(paths) == 0 {
		paths = []string{"/"}
	}
	for _, p := range paths {
		if p == "" {
			p = "/"
		}
		if !plainPath.MatchString(p) {
			s.Skipped = append(s.Skipped, monv1.SkippedEndpoint{Endpoint: host + p, Reason: "the path is not a plain URL path (a regular expression?)"})
			continue
		}
		s.Endpoints = append(s.Endpoints, Endpoint{Host: host, Port: port, Path: p, TLS: tls})
	}
}

// Gateways finds a route's parent Gateway by namespace and name; nil
// when it does not exist (or the Gateway API is not installed).
type Gateways func(namespace, name string) *gatewayv1.Gateway

// listenerView is what a route learns from the listeners it attaches to.
type listenerView struct {
	listeners []gatewayv1.Listener
	warnings  []string
}

// listenersOf returns the listeners the route's parentRefs attach to.
func listenersOf(namespace string, parents []gatewayv1.ParentReference, gateways Gateways) listenerView {
	var v listenerView
	for _, p := range parents {
		if (p.Group != nil && *p.Group != gatewayv1.GroupName) || (p.Kind != nil && *p.Kind != "Gateway") {
			continue
		}
		ns := namespace
		if p.Namespace != nil {
			ns = string(*p.Namespace)
		}
		var gw *gatewayv1.Gateway
		if gateways != nil {
			gw = gateways(ns, string(p.Name))
		}
		if gw == nil {
			v.warnings = append(v.warnings, fmt.Sprintf("Gateway %s/%s not found: http assumed", ns, p.Name))
			continue
		}
		for _, l := range gw.Spec.Listeners {
			if p.SectionName != nil && l.Name != *p.SectionName {
				continue
			}
			if p.Port != nil && l.Port != *p.Port {
				continue
			}
			v.listeners = append(v.listeners, l)
		}
	}
	return v
}

// tlsFor returns whether a listener serving host terminates TLS, and its
// port (0 when no listener names one).
func (v listenerView) tlsFor(host string) (bool, int32) {
	var port int32
	for _, l := range v.listeners {
		h := ""
		if l.Hostname != nil {
			h = string(*l.Hostname)
		}
		if !hostMatches(h, host) {
			continue
		}
		if l.Protocol == gatewayv1.HTTPSProtocolType || l.Protocol == gatewayv1.TLSProtocolType {
			return true, int32(l.Port)
		}
		if port == 0 {
			port = int32(l.Port)
		}
	}
	return false, port
}

// hostnames are the route's hostnames, or else its listeners' non-wildcard
// hostnames.
func (v listenerView) hostnames(route []gatewayv1.Hostname) []string {
	var out []string
	for _, h := range route {
		out = append(out, string(h))
	}
	if len(out) > 0 {
		return out
	}
	for _, l := range v.listeners {
		if l.Hostname != nil {
			out = append(out, string(*l.Hostname))
		}
	}
	return out
}

// FromHTTPRoute reads an HTTPRoute: one endpoint per hostname and path
// match (PathPrefix or Exact; a rule without matches is /), https when a
// parent Gateway listener for the host speaks HTTPS. A parent Gateway that
// cannot be read leaves http, with a warning.
func FromHTTPRoute(route *gatewayv1.HTTPRoute, gateways Gateways) Source {
	src := Source{Kind: monv1.KindHTTPRoute, Name: route.Name, Labels: route.Labels, Annotations: route.Annotations}
	lv := listenersOf(route.Namespace, route.Spec.ParentRefs, gateways)
	src.Warnings = lv.warnings
	var paths []string
	for _, r := range route.Spec.Rules {
		if len(r.Matches) == 0 {
			paths = append(paths, "/")
		}
		for _, m := range r.Matches {
			switch {
			case m.Path == nil || m.Path.Value == nil:
				paths = append(paths, "/")
			case m.Path.Type != nil && *m.Path.Type == gatewayv1.PathMatchRegularExpression:
				src.Skipped = append(src.Skipped, monv1.SkippedEndpoint{Endpoint: *m.Path.Value, Reason: "a RegularExpression path match names no single path"})
			default:
				paths = append(paths, *m.Path.Value)
			}
		}
	}
	if len(route.Spec.Rules) == 0 {
		paths = []string{"/"}
	}
	hosts := lv.hostnames(route.Spec.Hostnames)
	if len(hosts) == 0 {
		src.Skipped = append(src.Skipped, monv1.SkippedEndpoint{Endpoint: "hostnames", Reason: "neither the route nor its listeners name a host"})
	}
	for _, h := range hosts {
		if why := hostSkip(h); why != "" {
			src.Skipped = append(src.Skipped, monv1.SkippedEndpoint{Endpoint: h, Reason: why})
			continue
		}
		tls, port := lv.tlsFor(h)
		src.addPaths(h, port, tls, dedupe(paths))
	}
	return src
}

// FromGRPCRoute reads a GRPCRoute: one gRPC endpoint per hostname, on the
// port of its listener (443 with TLS, 80 without, when none says).
func FromGRPCRoute(route *gatewayv1.GRPCRoute, gateways Gateways) Source {
	src := Source{Kind: monv1.KindGRPCRoute, Name: route.Name, Labels: route.Labels, Annotations: route.Annotations}
	lv := listenersOf(route.Namespace, route.Spec.ParentRefs, gateways)
	src.Warnings = lv.warnings
	hosts := lv.hostnames(route.Spec.Hostnames)
	if len(hosts) == 0 {
		src.Skipped = append(src.Skipped, monv1.SkippedEndpoint{Endpoint: "hostnames", Reason: "neither the route nor its listeners name a host"})
	}
	for _, h := range hosts {
		if why := hostSkip(h); why != "" {
			src.Skipped = append(src.Skipped, monv1.SkippedEndpoint{Endpoint: h, Reason: why})
			continue
		}
		tls, port := lv.tlsFor(h)
		src.Endpoints = append(src.Endpoints, Endpoint{Host: h, Port: port, TLS: tls, GRPC: true})
	}
	return src
}

// FromService reads a Service: its cluster DNS name (or an ExternalName's
// name) on the port the annotation uptime-operator.io/monitor-port names,
// else the port named https or http, else 443 or 80, else its only port;
// https when the port is named https, has appProtocol https or is 443.
func FromService(svc *corev1.Service) Source {
	src := Source{Kind: monv1.KindService, Name: svc.Name, Labels: svc.Labels, Annotations: svc.Annotations}
	host := svc.Name + "." + svc.Namespace + ".svc"
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		host = svc.Spec.ExternalName
	}
	port, warn := servicePort(svc)
	if warn != "" {
		src.Warnings = append(src.Warnings, warn)
	}
	if port == nil {
		src.Skipped = append(src.Skipped, monv1.SkippedEndpoint{Endpoint: host, Reason: "no port to check: set " + monv1.MonitorPortAnnotation})
		return src
	}
	tls := port.Name == "https" || port.Port == 443 || (port.AppProtocol != nil && *port.AppProtocol == "https")
	if why := hostSkip(host); why != "" {
		src.Skipped = append(src.Skipped, monv1.SkippedEndpoint{Endpoint: host, Reason: why})
		return src
	}
	src.Endpoints = append(src.Endpoints, Endpoint{Host: host, Port: port.Port, Path: "/", TLS: tls})
	return src
}

// servicePort picks the checked port of svc (see FromService).
func servicePort(svc *corev1.Service) (*corev1.ServicePort, string) {
	ports := svc.Spec.Ports
	warn := ""
	if want, ok := svc.Annotations[monv1.MonitorPortAnnotation]; ok {
		for i, p := range ports {
			if p.Name == want || strconv.Itoa(int(p.Port)) == want {
				return &ports[i], ""
			}
		}
		n, err := strconv.Atoi(want)
		if err == nil && n >= 1 && n <= 65535 && svc.Spec.Type == corev1.ServiceTypeExternalName {
			return &corev1.ServicePort{Port: int32(n)}, ""
		}
		warn = fmt.Sprintf("annotation %s: %q is not a port of the Service; ignored", monv1.MonitorPortAnnotation, want)
	}
	for _, name := range []string{"https", "http"} {
		for i, p := range ports {
			if p.Name == name {
				return &ports[i], warn
			}
		}
	}
	for _, num := range []int32{443, 80} {
		for i, p := range ports {
			if p.Port == num {
				return &ports[i], warn
			}
		}
	}
	if len(ports) == 1 {
		return &ports[0], warn
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return &corev1.ServicePort{Port: 80}, warn
	}
	return nil, warn
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
