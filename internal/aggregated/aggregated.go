// Package aggregated is the second front door of the REST API: requests
// that kube-apiserver proxies to the APIService v1.api.uptime-operator.io.
//
// kube-apiserver authenticates the user, strips Authorization and forwards
// the identity in X-Remote-User / X-Remote-Uid / X-Remote-Group /
// X-Remote-Extra-* over mTLS with its front-proxy client certificate. This
// package does what sample-apiserver and metrics-server do, with the same
// k8s.io/apiserver parts: the request-header authenticator checks that
// certificate against the requestheader CA and allowed names published in
// kube-system/extension-apiserver-authentication (reloaded when the
// ConfigMap changes) and reads the identity from the headers the ConfigMap
// names; the delegating authorizer asks kube-apiserver a
// SubjectAccessReview per access level, with user, UID, groups and extra,
// and caches the answers for a short time. The request, with the workspace
// prefix stripped, then goes to the REST handler.
//
// Some paths are Kubernetes resources rather than REST paths, authorized
// per resource rather than by access level: incidents (incidents.go),
// listed, read and watched as Incident objects and Tables for kubectl,
// acknowledged, resolved and annotated through subresources; and the
// monitors' live state with their explanations, checks run now and the
// probe regions (resources.go), and the rollout gates (rolloutgate.go), so
// that the built-in view and edit roles are enough for the people on call
// and for the rollout controllers that ask whether to go on.
package aggregated

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/client-go/kubernetes"
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

// DecisionTTL is how long an allow or deny answer of a SubjectAccessReview
// is reused for the same user, UID, groups, extra, namespace and level: the
// default of k8s.io/apiserver's delegating authorization (metrics-server
// and sample-apiserver use it too). A revoked binding takes effect within it.
const DecisionTTL = 10 * time.Second

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
	// Kube watches the requestheader ConfigMap and creates
	// SubjectAccessReviews.
	Kube kubernetes.Interface
	// AuthenticationConfigMap is where the requestheader configuration is
	// read; empty is AuthenticationConfigMap (kube-system/
	// extension-apiserver-authentication). Tests point it elsewhere.
	AuthenticationConfigMap types.NamespacedName
	// AllowTTL and DenyTTL override DecisionTTL for allow and deny answers.
	AllowTTL, DenyTTL time.Duration
	// API is the REST handler, served under the workspace prefix.
	API http.Handler
	// Inject attaches the identity to the request before API sees it.
	Inject func(r *http.Request, id Identity) *http.Request
	// WatchInterval is how often a watch of incidents polls; zero is
	// DefaultWatchInterval.
	WatchInterval time.Duration
}

// Server serves the aggregated API.
type Server struct {
	opts  Options
	front *frontProxy
	authz authorizer.Authorizer
}

// New returns the aggregated API server. Call Start before serving.
func New(opts Options) (*Server, error) {
	key := opts.AuthenticationConfigMap
	if key.Name == "" {
		key = AuthenticationConfigMap
	}
	ttl := func(d time.Duration) time.Duration {
		if d == 0 {
			return DecisionTTL
		}
		return d
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: opts.Kube.AuthorizationV1(),
		AllowCacheTTL:             ttl(opts.AllowTTL),
		DenyCacheTTL:              ttl(opts.DenyTTL),
		// The default of DelegatingAuthorizationOptions: a failed review is
		// retried for about 5 s before the request fails.
		WebhookRetryBackoff: &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5},
	}.New()
	if err != nil {
		return nil, fmt.Errorf("delegating authorizer: %w", err)
	}
	return &Server{opts: opts, front: newFrontProxy(opts.Kube, key), authz: authz}, nil
}

// Start watches the requestheader ConfigMap until ctx ends; it returns once
// the first read is done. Until a usable configuration is read, every
// request is refused.
func (s *Server) Start(ctx context.Context) error { return s.front.start(ctx) }

const prefix = "/apis/" + Group + "/" + Version

// TLSConfig returns a server TLS config with cert as the serving
// certificate that asks for client certificates without verifying them in
// the handshake: the authenticator verifies them per request against the CA
// of the moment, so a rotated front-proxy CA is picked up without restart.
func (s *Server) TLSConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequestClientCert,
	}
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
		httpjson.Write(w, http.StatusOK, map[string]any{"swagger": "2.0", "info": map[string]string{"title": "uptime-operator", "version": Version}, "paths": map[string]any{}})
		return
	case r.URL.Path == "/openapi/v3":
		httpjson.Write(w, http.StatusOK, map[string]any{"paths": map[string]any{}})
		return
	}
	caller, err := s.authenticate(r)
	if err != nil {
		writeStatus(w, http.StatusUnauthorized, "Unauthorized", err.Error())
		return
	}
	switch r.URL.Path {
	case "/apis":
		httpjson.Write(w, http.StatusOK, s.groupList())
		return
	case "/apis/" + Group:
		httpjson.Write(w, http.StatusOK, s.group())
		return
	case prefix:
		httpjson.Write(w, http.StatusOK, s.resourceList())
		return
	}
	if req, ok := parseIncidentRequest(r.Method, r.URL.Path, r.URL.Query()); ok {
		s.serveIncidents(w, r, caller, req)
		return
	}
	if req, ok := parseResourceRequest(r.Method, r.URL.Path, r.URL.Query()); ok {
		s.serveResource(w, r, caller, req)
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
	level, err := s.authorize(r.Context(), ns, caller)
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	if level == "" {
		writeStatus(w, http.StatusForbidden, "Forbidden", fmt.Sprintf(
			"user %q has no access level in namespace %q: bind a ClusterRole uptime-operator-viewer, -editor, -automation or -owner", caller.GetName(), ns))
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + tail
	r2.URL.RawPath = ""
	r2.RequestURI = r2.URL.RequestURI()
	r2.Header.Del("Authorization")
	if s.opts.Inject != nil {
		r2 = s.opts.Inject(r2, Identity{Namespace: ns, User: caller.GetName(), Groups: caller.GetGroups(), Level: level})
	}
	s.opts.API.ServeHTTP(w, r2)
}

// authenticate returns the user the front proxy vouches for. The
// authenticator also removes the identity headers from r, so the REST
// handler never sees them.
func (s *Server) authenticate(r *http.Request) (user.Info, error) {
	if err := s.front.usable(); err != nil {
		return nil, err
	}
	resp, ok, err := s.front.authn.AuthenticateRequest(r)
	switch {
	case err != nil:
		return nil, fmt.Errorf("front-proxy certificate not accepted: %w", err)
	case !ok && (r.TLS == nil || len(r.TLS.PeerCertificates) == 0):
		return nil, fmt.Errorf("no front-proxy client certificate")
	case !ok:
		return nil, fmt.Errorf("no user in the request headers")
	}
	return resp.User, nil
}

// authorize returns the highest access level RBAC grants the caller in ns,
// or "" when none. Each level is one SubjectAccessReview, answered from the
// decision cache when the same caller asked within the TTL.
func (s *Server) authorize(ctx context.Context, ns string, caller user.Info) (string, error) {
	for i := len(Levels) - 1; i >= 0; i-- {
		d, _, err := s.authz.Authorize(ctx, authorizer.AttributesRecord{
			User: caller, Verb: "use", Namespace: ns, APIGroup: Group, Resource: LevelsResource, Name: Levels[i], ResourceRequest: true,
		})
		if err != nil {
			return "", fmt.Errorf("subject access review: %w", err)
		}
		if d == authorizer.DecisionAllow {
			return Levels[i], nil
		}
	}
	return "", nil
}

func (s *Server) group() *metav1.APIGroup {
	gv := metav1.GroupVersionForDiscovery{GroupVersion: Group + "/" + Version, Version: Version}
	return &metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}
}

func (s *Server) groupList() *metav1.APIGroupList {
	return &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{*s.group()}}
}

// writeStatus writes a Kubernetes Status, which kubectl renders well.
func writeStatus(w http.ResponseWriter, code int, reason, msg string) {
	httpjson.Write(w, code, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: int32(code), Reason: metav1.StatusReason(reason), Message: msg,
	})
}
