package restapi

import "time"

// Incident is an incident as GET /incidents lists it (and the base of the
// incident detail). Times are ISO 8601 in UTC.
type Incident struct {
	ID                    string   `json:"id"`
	MonitorID             string   `json:"monitor_id"`
	MonitorName           string   `json:"monitor_name"`
	MonitorURL            string   `json:"monitor_url"`
	MonitorType           string   `json:"monitor_type"`
	StartedAt             string   `json:"started_at"`
	ResolvedAt            *string  `json:"resolved_at"`
	DurationSeconds       int64    `json:"duration_seconds"`
	AlertSuppressed       bool     `json:"alert_suppressed"`
	SuppressionReason     *string  `json:"suppression_reason"`
	IsFlapping            bool     `json:"is_flapping"`
	Confirmations         int      `json:"confirmations"`
	ConfirmingRegions     []string `json:"confirming_regions"`
	ConfirmingRegionNames []string `json:"confirming_region_names"`
	RegionsTotal          int      `json:"regions_total"`
	AcknowledgedAt        *string  `json:"acknowledged_at"`
	AcknowledgedByName    *string  `json:"acknowledged_by_name"`
	SnoozedUntil          *string  `json:"snoozed_until"`
	ResolvedManually      bool     `json:"resolved_manually"`
	CodeHostIssueURL      *string  `json:"code_host_issue_url"`
}

// IncidentPage is one page of GET /incidents.
type IncidentPage struct {
	Items    []Incident     `json:"items"`
	Total    int            `json:"total"`
	Page     int            `json:"page"`
	PageSize int            `json:"page_size"`
	Counts   IncidentCounts `json:"counts"`
}

// IncidentDetail is GET /incidents/:id.
type IncidentDetail struct {
	Incident
	Cause      *string          `json:"cause"`
	Postmortem *string          `json:"postmortem"`
	Runbook    *IncidentRunbook `json:"runbook"`
	Notes      []Note           `json:"notes"`
}

// IncidentCounts are the incident totals per state of a listing's filter.
type IncidentCounts struct {
	All        int `json:"all"`
	Ongoing    int `json:"ongoing"`
	Resolved   int `json:"resolved"`
	Suppressed int `json:"suppressed"`
}

// IncidentRunbook is the runbook attached to an incident, with its step
// state.
type IncidentRunbook struct {
	RunbookID string        `json:"runbook_id"`
	Name      string        `json:"name,omitempty"`
	Steps     []RunbookStep `json:"steps"`
}

// RunbookStep is one step of an attached runbook.
type RunbookStep struct {
	ID          string     `json:"id"`
	Title       string     `json:"title"`
	Description string     `json:"description,omitempty"`
	Completed   bool       `json:"is_completed"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
}

// Note is one timeline note of an incident.
type Note struct {
	ID        string  `json:"id"`
	Body      string  `json:"body"`
	Public    bool    `json:"public"`
	Author    *string `json:"author"`
	CreatedAt string  `json:"created_at"`
}
