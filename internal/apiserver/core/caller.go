package core

import (
	"context"
	"net/http"

	"github.com/uptime-operator/uptime-operator/internal/aggregated"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
)

// Caller is the authenticated identity of a request.
type Caller struct {
	// Namespace is the workspace the caller acts on.
	Namespace string
	// Level is the access level.
	Level apikeys.Level
	// Key is the API key used, when the caller used one.
	Key *apikeys.Key
	// User is the Kubernetes user of the aggregated front door.
	User string
	// Owner is true for a Kubernetes user whom RBAC grants the owner level
	// through the aggregated front door. Owners may call the owner-only
	// endpoints; API keys are never owners.
	Owner bool
}

// Name is how the caller is shown in incident timelines.
func (c *Caller) Name() string {
	if c.Key != nil {
		return "API key " + c.Key.Name
	}
	return c.User
}

// RateKey identifies the caller for the per-key limit.
func (c *Caller) RateKey() string {
	if c.Key != nil {
		return c.Key.ID
	}
	return "user:" + c.User
}

type callerKey struct{}

// CallerFrom returns the request's caller.
func CallerFrom(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
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
	return WithCaller(r, &Caller{Namespace: id.Namespace, Level: level, User: id.User, Owner: id.Level == "owner"})
}

// WithCaller returns r carrying caller c, for in-process requests made on
// behalf of an already authenticated caller (the MCP tools of the
// aggregated API) and for tests.
func WithCaller(r *http.Request, c *Caller) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
}
