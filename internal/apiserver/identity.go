package apiserver

import "github.com/uptime-operator/uptime-operator/internal/apiserver/core"

// Collections are the top-level REST collections, advertised by the
// aggregated API's discovery document.
var Collections = []string{
	"monitors", "monitor-groups", "stats", "incidents", "maintenance", "status", "integrations",
	"alert-recipients", "settings", "reliability", "automation", "regions",
}

// Caller is the authenticated identity of a request (core.Caller), named
// here for the manager, which assembles the front doors.
type Caller = core.Caller

// The caller helpers of the core, for the manager.
var (
	CallerFrom     = core.CallerFrom
	InjectIdentity = core.InjectIdentity
	WithCaller     = core.WithCaller
)
