package restapi

import "encoding/json"

// Monitor is the monitor object of GET /monitors, GET /monitors/:id and of
// every write that answers with a monitor. Times are ISO 8601 in UTC.
// Config is the type's config object as the REST API shows it (stored
// credentials as [REDACTED]).
type Monitor struct {
	ID                 string          `json:"id" openapi:"format=uuid"`
	Name               string          `json:"name"`
	Type               string          `json:"type" openapi:"enum=@monitorTypes"`
	URL                *string         `json:"url"`
	IntervalSeconds    int32           `json:"interval_seconds"`
	IsActive           bool            `json:"is_active"`
	GroupID            *string         `json:"group_id" openapi:"format=uuid"`
	EscalationPolicyID *string         `json:"escalation_policy_id" openapi:"format=uuid"`
	Tags               []string        `json:"tags"`
	Regions            []string        `json:"regions"` // Regions set on the monitor (empty: the plan's default).
	Config             json.RawMessage `json:"config" openapi:"ref=MonitorConfig"`
	Key                *string         `json:"key" openapi:"ref=MonitorKey"`
	CreatedAt          string          `json:"created_at" openapi:"format=date-time"`
	CurrentStatus      string          `json:"current_status" openapi:"enum=@monitorStates"`
	LastStatus         *string         `json:"last_status" openapi:"enum=@checkStates"` // Status of the latest check.
	LastCheckedAt      *string         `json:"last_checked_at" openapi:"format=date-time"`
	LastResponseTimeMs *int64          `json:"last_response_time_ms"`
	LastError          *string         `json:"last_error"`
	OpenIncident       *OpenIncident   `json:"open_incident"`
	UnderMaintenance   bool            `json:"under_maintenance"`
	Uptime24h          *float64        `json:"uptime_24h"`                         // Percentage.
	Uptime30d          *float64        `json:"uptime_30d"`                         // Percentage.
	HeartbeatURL       *string         `json:"heartbeat_url" openapi:"format=uri"` // Ping URL of a cron monitor.
	EffectiveTimeoutMs int32           `json:"effective_timeout_ms"`
	EffectiveRegions   []string        `json:"effective_regions"` // Regions the monitor is checked from on the plan.
	// Warnings, only in the answer of an update, name what the update
	// dropped: stored credentials (header values) that were not sent again
	// although the target moved to another origin. Absent when none.
	Warnings []string `json:"warnings,omitempty"`
}

// OpenIncident is the open incident a monitor object names.
type OpenIncident struct {
	ID        string `json:"id" openapi:"format=uuid"`
	StartedAt string `json:"started_at" openapi:"format=date-time"`
}

// MonitorSummary is GET /monitors/summary: monitors counted by live status
// (every status is a key, zero included), open incidents and the mean 24 h
// uptime of the monitors that have one.
type MonitorSummary struct {
	Total         int            `json:"total"`
	Counts        map[string]int `json:"counts"` // Monitors per current_status.
	OpenIncidents int            `json:"open_incidents"`
	Uptime24h     *float64       `json:"uptime_24h"`
}

// Success is the answer of an action that reports only whether it worked
// (POST /monitors/:id/reset-stats; POST
// /integrations/connections/:connectionId/test, where a channel that
// refused the test alert is success false with its error as the message).
type Success struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

// BulkResult is POST /monitors/bulk: how many monitors the action changed,
// and why each of the others was not.
type BulkResult struct {
	Updated int           `json:"updated"`
	Failed  []BulkFailure `json:"failed"`
}

// BulkFailure is one monitor a bulk action did not change.
type BulkFailure struct {
	ID    string `json:"id"`
	Error string `json:"error"` // Why: not found, or the field the change was refused for.
}

// HeartbeatURL is POST /monitors/:id/heartbeat/rotate: the new ping URL of
// a cron monitor (the old one stops working at once).
type HeartbeatURL struct {
	HeartbeatURL *string `json:"heartbeat_url" openapi:"format=uri"`
}

// MonitorGroup is a monitor group of GET /monitor-groups and the group
// writes.
type MonitorGroup struct {
	ID                 string   `json:"id" openapi:"format=uuid"`
	Name               string   `json:"name"`
	Description        *string  `json:"description"`
	NotificationEmails []string `json:"notification_emails"` // Alert recipients of the group's monitors.
	MonitorCount       int      `json:"monitor_count"`
	CreatedAt          string   `json:"created_at" openapi:"format=date-time"`
}

// GroupSummary is GET /monitor-groups/:id/summary: the group and its
// monitors counted as GET /monitors/summary counts the workspace's.
type GroupSummary struct {
	Group         MonitorGroup   `json:"group"`
	Total         int            `json:"total"`
	Counts        map[string]int `json:"counts"` // Monitors per current_status.
	OpenIncidents int            `json:"open_incidents"`
	Uptime24h     *float64       `json:"uptime_24h"`
}

// HeartbeatRecorded is POST /monitors/:id/cron-heartbeat: the heartbeat was
// recorded, or ignored because the monitor is paused.
type HeartbeatRecorded struct {
	Success bool `json:"success"`
	Paused  bool `json:"paused"` // The monitor is paused: the heartbeat was ignored.
}

// Regions are the regions a monitor is checked from: the answer of GET and
// PUT /monitors/{id}/regions.
type Regions struct {
	// Regions are the monitor's own list, or the plan's default regions
	// when it has none.
	Regions          []string `json:"regions"`
	EffectiveRegions []string `json:"effective_regions"` // The same list, under the name of the monitor object's field.
	// IsDefault is true when the list is the plan's default (the monitor
	// sets no regions of its own).
	IsDefault bool `json:"is_default"`
}

// Subdomains is GET /monitors/discover-subdomains: the names under a
// domain that resolve to addresses a monitor may target.
type Subdomains struct {
	Domain       string      `json:"domain"`
	Subdomains   []Subdomain `json:"subdomains"`
	NamesChecked int         `json:"names_checked"`
	// WildcardDNS says the domain answers every name; names answering the
	// wildcard's addresses are left out.
	WildcardDNS             bool     `json:"wildcard_dns"`
	TimedOut                bool     `json:"timed_out"`
	Sources                 []string `json:"sources"`
	CertificateTransparency bool     `json:"certificate_transparency"` // Always false: the logs are not used.
	Note                    string   `json:"note"`
}

// Subdomain is one discovered name.
type Subdomain struct {
	Hostname     string   `json:"hostname"`
	Addresses    []string `json:"addresses"`
	SuggestedURL string   `json:"suggested_url" openapi:"format=uri"`
}

// StepRuns is GET /monitors/{id}/step-runs: a multi-step monitor's checks
// with their steps, newest first.
type StepRuns struct {
	MonitorID  string    `json:"monitor_id" openapi:"format=uuid"`
	Items      []StepRun `json:"items"`
	NextBefore *string   `json:"next_before"`
}

// StepRun is a check with its steps.
type StepRun struct {
	Check
	Steps     []StepResult `json:"steps"`
	Extracted []string     `json:"extracted"` // Names of extracted variables.
}

// StepResult is the result of one step of a multi-step check.
type StepResult struct {
	Index          int               `json:"index"`
	Name           string            `json:"name"`
	URL            string            `json:"url"`
	StatusCode     *int              `json:"status_code"`
	ResponseTimeMs int64             `json:"response_time_ms"`
	Passed         bool              `json:"passed"`
	Error          *string           `json:"error"`
	Assertions     []json.RawMessage `json:"assertions"` // The step's assertion results.
}
