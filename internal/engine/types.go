package engine

import (
	"errors"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// ErrUnknownToken is returned for a heartbeat token no monitor owns.
var ErrUnknownToken = errors.New("unknown heartbeat token")

// HeartbeatTokenIndex is the cache field index of Monitors by heartbeat
// token hash (monv1.HeartbeatTokenIndex).
const HeartbeatTokenIndex = monv1.HeartbeatTokenIndex

// MonitorTypeIndex is the cache field index of Monitors by spec.type: the
// heartbeat pass every 5 s reads the cron monitors only. Listing every
// Monitor built a slice of all of them each time (300 MB at 100,000, even
// without copies), which was the manager's largest garbage.
const MonitorTypeIndex = "monitorType"

// Ping is one heartbeat of a cron monitor.
type Ping struct {
	// OK is false when the job reported failure.
	OK bool
	// DurationMs is the job's run time, when reported.
	DurationMs *int64
	// StatusCode and ExecutionCount are optional extras of the API variant.
	StatusCode     *int
	ExecutionCount *int64
	// At is when the ping arrived.
	At time.Time
}

// Explanation, RegionVote and Fault are the explanation's wire shape,
// defined once in package restapi: the REST API serves what the engine
// builds, and the MCP server decodes the same type.
type (
	Explanation = restapi.Explanation
	RegionVote  = restapi.RegionVote
	Fault       = restapi.Fault
)

// Fault verdicts of an explanation.
const (
	FaultYours    = restapi.FaultYours
	FaultExternal = restapi.FaultExternal
	FaultChecker  = restapi.FaultChecker
	FaultUnknown  = restapi.FaultUnknown
)
