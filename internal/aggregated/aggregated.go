// Package aggregated is the second front door of the REST API: requests
// that kube-apiserver proxies to the APIService v1.api.uptime-operator.io.
//
// kube-apiserver authenticates the user, strips Authorization and forwards
// the identity in X-Remote-User / X-Remote-Group / X-Remote-Extra-* over
// mTLS with its front-proxy client certificate. This package verifies that
// certificate against the requestheader CA published in
// kube-system/extension-apiserver-authentication (and its allowed names), then
// authorizes the user with a SubjectAccessReview per access level and hands
// the request, with the workspace prefix stripped, to the REST handler.
package aggregated

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Group and version of the aggregated API.
const (
	Group   = "api.uptime-operator.io"
	Version = "v1"
	// LevelsResource is the RBAC resource whose `use` verb, on resource
	// names read-only, standard, automation and owner, grants the access
	// levels; the chart's ClusterRoles uptime-operator-viewer, -editor,
	// -automation and -owner grant them.
	LevelsResource = "levels"
)

// Levels from the least to the most privileged.
var Levels = []string{"read-only", "standard", "automation", "owner"}

// Identity is an authenticated, authorized caller of the aggregated API.
type Identity struct {
	Namespace string
	User      string
	Groups    []string
	// Level is the highest level RBAC grants the user in Namespace.
	Level string
}

// Options configure the handler.
type Options struct {
	// Client creates SubjectAccessReviews.
	Client client.Client
	// Reader reads the extension-apiserver-authentication ConfigMap.
	Reader client.Reader
	// API is the REST handler, served under the workspace prefix.
	API http.Handler
	// Inject attaches the identity to the request before API sees it.
	Inject func(r *http.Request, id Identity) *http.Request
	// Resources are advertised in discovery. Leave it empty: the REST paths
	// are not Kubernetes resources, and a name such as "monitors" would
	// shadow the Monitor CRD for `kubectl get monitors`. The APIService only
	// needs the (empty) resource list to become Available; `kubectl get
	// --raw` reaches every path.
	Resources []string
}

// Server serves the aggregated API.
type Server struct {
	opts Options

	mu      sync.Mutex
	cfg     *frontProxy
	fetched time.Time
}

// frontProxy is the requestheader configuration of kube-apiserver.
type frontProxy struct {
	pool          *x509.CertPool
	allowedNames  []string
	userHeaders   []string
	groupHeaders  []string
	extraPrefixes []string
}

// New returns the aggregated API server.
func New(opts Options) *Server { return &Server{opts: opts} }

const prefix = "/apis/" + Group + "/" + Version

// TLSConfig returns a server TLS config with cert as the serving
// certificate that asks for (and verifies, when given) client certificates
// signed by the front-proxy CA.
func (s *Server) TLSConfig(ctx context.Context, cert tls.Certificate) (*tls.Config, error) {
	if _, err := s.frontProxy(ctx); err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequestClientCert,
		// Verification happens per request (ServeHTTP) against the CA of the
		// moment, so a rotated front-proxy CA is picked up without restart.
	}, nil
}

// frontProxy reads (and caches for a minute) kube-apiserver's requestheader
// configuration.
func (s *Server) frontProxy(ctx context.Context) (*frontProxy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg != nil && time.Since(s.fetched) < time.Minute {
		return s.cfg, nil
	}
	var cm corev1.ConfigMap
	if err := s.opts.Reader.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "extension-apiserver-authentication"}, &cm); err != nil {
		return nil, fmt.Errorf("read extension-apiserver-authentication: %w", err)
	}
	pem := cm.Data["requestheader-client-ca-file"]
	if pem == "" {
		return nil, errors.New("kube-apiserver publishes no requestheader client CA: start it with --requestheader-client-ca-file")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(pem)) {
		return nil, errors.New("requestheader client CA is not valid PEM")
	}
	list := func(key string) []string {
		var out []string
		_ = json.Unmarshal([]byte(cm.Data[key]), &out)
		return out
	}
	cfg := &frontProxy{
		pool: pool, allowedNames: list("requestheader-allowed-names"),
		userHeaders: list("requestheader-username-headers"), groupHeaders: list("requestheader-group-headers"),
		extraPrefixes: list("requestheader-extra-headers-prefix"),
	}
	if len(cfg.userHeaders) == 0 {
		cfg.userHeaders = []string{"X-Remote-User"}
	}
	if len(cfg.groupHeaders) == 0 {
		cfg.groupHeaders = []string{"X-Remote-Group"}
	}
	s.cfg, s.fetched = cfg, time.Now()
	return cfg, nil
}

// ServeHTTP serves discovery and the REST API under the workspace prefix.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || r.URL.Path == "/livez":
		_, _ = w.Write([]byte("ok"))
		return
	case r.URL.Path == "/openapi/v2":
		// The REST paths are not Kubernetes resources; an empty document
		// keeps the aggregator's OpenAPI controller quiet.
		writeJSON(w, http.StatusOK, map[string]any{"swagger": "2.0", "info": map[string]string{"title": "uptime-operator", "version": Version}, "paths": map[string]any{}})
		return
	case r.URL.Path == "/openapi/v3":
		writeJSON(w, http.StatusOK, map[string]any{"paths": map[string]any{}})
		return
	}
	user, groups, err := s.authenticate(r)
	if err != nil {
		writeStatus(w, http.StatusUnauthorized, "Unauthorized", err.Error())
		return
	}
	switch r.URL.Path {
	case "/apis":
		writeJSON(w, http.StatusOK, s.groupList())
		return
	case "/apis/" + Group:
		writeJSON(w, http.StatusOK, s.group())
		return
	case prefix:
		writeJSON(w, http.StatusOK, s.resourceList())
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, prefix+"/namespaces/")
	if !ok {
		writeStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	ns, tail, _ := strings.Cut(rest, "/")
	if ns == "" {
		writeStatus(w, http.StatusNotFound, "NotFound", "a namespace is required")
		return
	}
	level, err := s.authorize(r.Context(), ns, user, groups)
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	if level == "" {
		writeStatus(w, http.StatusForbidden, "Forbidden", fmt.Sprintf(
			"user %q has no access level in namespace %q: bind a ClusterRole uptime-operator-viewer, -editor, -automation or -owner", user, ns))
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + tail
	r2.URL.RawPath = ""
	r2.RequestURI = r2.URL.RequestURI()
	r2.Header.Del("Authorization")
	if s.opts.Inject != nil {
		r2 = s.opts.Inject(r2, Identity{Namespace: ns, User: user, Groups: groups, Level: level})
	}
	s.opts.API.ServeHTTP(w, r2)
}

// authenticate verifies the front-proxy client certificate and returns the
// user and groups it vouches for.
func (s *Server) authenticate(r *http.Request) (string, []string, error) {
	cfg, err := s.frontProxy(r.Context())
	if err != nil {
		return "", nil, err
	}
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return "", nil, errors.New("no front-proxy client certificate")
	}
	leaf := r.TLS.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: cfg.pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return "", nil, fmt.Errorf("front-proxy certificate not trusted: %w", err)
	}
	if len(cfg.allowedNames) > 0 && !slices.Contains(cfg.allowedNames, leaf.Subject.CommonName) {
		return "", nil, fmt.Errorf("front-proxy certificate name %q is not allowed", leaf.Subject.CommonName)
	}
	var user string
	for _, h := range cfg.userHeaders {
		if user = r.Header.Get(h); user != "" {
			break
		}
	}
	if user == "" {
		return "", nil, errors.New("no user in the request headers")
	}
	var groups []string
	for _, h := range cfg.groupHeaders {
		groups = append(groups, r.Header.Values(h)...)
	}
	return user, groups, nil
}

// authorize returns the highest access level RBAC grants user in ns, or ""
// when none.
func (s *Server) authorize(ctx context.Context, ns, user string, groups []string) (string, error) {
	for i := len(Levels) - 1; i >= 0; i-- {
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: user, Groups: groups,
			ResourceAttributes: &authzv1.ResourceAttributes{
				Namespace: ns, Verb: "use", Group: Group, Resource: LevelsResource, Name: Levels[i],
			},
		}}
		if err := s.opts.Client.Create(ctx, sar); err != nil {
			return "", fmt.Errorf("subject access review: %w", err)
		}
		if sar.Status.Allowed {
			return Levels[i], nil
		}
	}
	return "", nil
}

func (s *Server) resourceList() *metav1.APIResourceList {
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: Group + "/" + Version,
		APIResources: []metav1.APIResource{}}
	for _, name := range s.opts.Resources {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: name, Namespaced: true, Kind: kindOf(name), Verbs: metav1.Verbs{"get", "list", "create", "update", "patch", "delete"},
		})
	}
	return list
}

func (s *Server) group() *metav1.APIGroup {
	gv := metav1.GroupVersionForDiscovery{GroupVersion: Group + "/" + Version, Version: Version}
	return &metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}
}

func (s *Server) groupList() *metav1.APIGroupList {
	return &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{*s.group()}}
}

// kindOf makes a discovery kind from a collection name (monitor-groups →
// MonitorGroups).
func kindOf(name string) string {
	parts := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '/' })
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, "")
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeStatus writes a Kubernetes Status, which kubectl renders well.
func writeStatus(w http.ResponseWriter, code int, reason, msg string) {
	writeJSON(w, code, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: int32(code), Reason: metav1.StatusReason(reason), Message: msg,
	})
}
