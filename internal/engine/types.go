package engine

import (
	"errors"
	"time"

	"github.com/uptime-operator/uptime-operator/controllers"
)

// ErrUnknownToken is returned for a heartbeat token no monitor owns.
var ErrUnknownToken = errors.New("unknown heartbeat token")

// HeartbeatAnnotation on a cron Monitor holds its heartbeat token: the path
// /heartbeat/<token> is the credential a job pings. The Monitor controller
// creates it; rotation replaces it, and the old URL stops working as soon as
// the cache sees the change.
const HeartbeatAnnotation = controllers.HeartbeatAnnotation

// HeartbeatTokenIndex is the cache field index of Monitors by heartbeat token.
const HeartbeatTokenIndex = "heartbeatToken"

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

// Fault says whose fault a failure most likely is.
type Fault string

// Fault verdicts of an explanation.
const (
	FaultYours    Fault = "yours"
	FaultExternal Fault = "external"
	FaultChecker  Fault = "checker"
	FaultUnknown  Fault = "unknown"
)

// RegionVote is one region's latest verdict as the quorum saw it.
type RegionVote struct {
	Region    string    `json:"region"`
	Status    string    `json:"status"`
	Vote      string    `json:"vote"` // "fail", "pass" or "abstain"
	ErrorType string    `json:"error_type,omitempty"`
	Error     string    `json:"error,omitempty"`
	CheckedAt time.Time `json:"checked_at"`
	ISP       string    `json:"isp,omitempty"`
}

// Explanation is why a monitor is (or is not) in an incident: the region
// votes against the quorum rule, the failure class, the alert decision and a
// fault verdict. It backs /monitors/:id/explanation and
// /incidents/:id/explanation.
type Explanation struct {
	MonitorID       string       `json:"monitor_id"`
	IncidentID      *string      `json:"incident_id"`
	State           string       `json:"state"`
	QuorumRule      string       `json:"quorum_rule"`
	RequiredFailing int          `json:"required_failing"`
	Failing         int          `json:"failing"`
	Voting          int          `json:"voting"`
	Abstaining      []string     `json:"abstaining_regions"`
	Votes           []RegionVote `json:"region_votes"`
	FailureClass    string       `json:"failure_class"`
	AlertDecision   string       `json:"alert_decision"`
	Fault           Fault        `json:"fault_verdict"`
	Summary         string       `json:"summary"`
	Findings        []string     `json:"contributing_findings"`
}
