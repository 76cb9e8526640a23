package restapi

import "time"

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
	// ScreenshotURL is the path of the screenshot of the region's latest
	// check, when that check is a failed browser check that took one
	// (GET /monitors/:id/checks/:checkId/screenshot, an extension).
	ScreenshotURL string `json:"screenshot_url,omitempty"`
}

// Explanation is why a monitor is (or is not) in an incident: the region
// votes against the quorum rule, the failure class, the alert decision and a
// fault verdict. It is the body of GET /monitors/:id/explanation and
// GET /incidents/:id/explanation; the engine builds it.
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
