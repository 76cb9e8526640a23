package apiserver

import (
	"context"
	"net/http"

	"github.com/uptime-operator/uptime-operator/internal/aggregated"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
)

// Collections are the top-level REST collections, advertised by the
// aggregated API's discovery document.
var Collections = []string{
	"monitors", "monitor-groups", "stats", "incidents", "maintenance", "status", "integrations",
	"alert-recipients", "settings", "reliability", "automation", "regions",
}

// InjectIdentity attaches the caller of the aggregated front door (a
// Kubernetes user whose access level RBAC decided) to r, so the REST
// handler serves it without an API key. The owner level acts as Automation
// for every level check and, in addition, may call the owner-only endpoints.
func InjectIdentity(r *http.Request, id aggregated.Identity) *http.Request {
	level := apikeys.ReadOnly
	switch id.Level {
	case "standard":
		level = apikeys.Standard
	case "automation", "owner":
		level = apikeys.Automation
	}
	c := &Caller{Namespace: id.Namespace, Level: level, User: id.User, Owner: id.Level == "owner"}
	return r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
}

// WithCaller returns r carrying caller c, for in-process requests made on
// behalf of an already authenticated caller (the MCP tools of the
// aggregated API).
func WithCaller(r *http.Request, c *Caller) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
}
