package restapi

import "encoding/json"

// Monitor is the monitor object of GET /monitors, GET /monitors/:id and of
// every write that answers with a monitor. Times are ISO 8601 in UTC.
// Config is the type's config object as the REST API shows it (stored
// credentials as [REDACTED]).
type Monitor struct {
	ID                 string          `json:"id"`
	Name               string          `json:"name"`
	Type               string          `json:"type"`
	URL                *string         `json:"url"`
	IntervalSeconds    int32           `json:"interval_seconds"`
	IsActive           bool            `json:"is_active"`
	GroupID            *string         `json:"group_id"`
	EscalationPolicyID *string         `json:"escalation_policy_id"`
	Tags               []string        `json:"tags"`
	Regions            []string        `json:"regions"`
	Config             json.RawMessage `json:"config"`
	Key                *string         `json:"key"`
	CreatedAt          string          `json:"created_at"`
	CurrentStatus      string          `json:"current_status"`
	LastStatus         *string         `json:"last_status"`
	LastCheckedAt      *string         `json:"last_checked_at"`
	LastResponseTimeMs *int64          `json:"last_response_time_ms"`
	LastError          *string         `json:"last_error"`
	OpenIncident       *OpenIncident   `json:"open_incident"`
	UnderMaintenance   bool            `json:"under_maintenance"`
	Uptime24h          *float64        `json:"uptime_24h"`
	Uptime30d          *float64        `json:"uptime_30d"`
	HeartbeatURL       *string         `json:"heartbeat_url"`
	EffectiveTimeoutMs int32           `json:"effective_timeout_ms"`
	EffectiveRegions   []string        `json:"effective_regions"`
	// Warnings, only in the answer of an update, name what the update
	// dropped: stored credentials (header values) that were not sent again
	// although the target moved to another origin. Absent when none.
	Warnings []string `json:"warnings,omitempty"`
}

// OpenIncident is the open incident a monitor object names.
type OpenIncident struct {
	ID        string `json:"id"`
	StartedAt string `json:"started_at"`
}

// MonitorSummary is GET /monitors/summary: monitors counted by live status
// (every status is a key, zero included), open incidents and the mean 24 h
// uptime of the monitors that have one.
type MonitorSummary struct {
	Total         int            `json:"total"`
	Counts        map[string]int `json:"counts"`
	OpenIncidents int            `json:"open_incidents"`
	Uptime24h     *float64       `json:"uptime_24h"`
}
