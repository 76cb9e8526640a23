package restapi

import (
	"encoding/json"
	"time"
)

// Incident is an incident as GET /incidents lists it (and the base of the
// incident detail). Times are ISO 8601 in UTC.
type Incident struct {
	ID                    string   `json:"id" openapi:"format=uuid"`
	MonitorID             string   `json:"monitor_id" openapi:"format=uuid"`
	MonitorName           string   `json:"monitor_name"`
	MonitorURL            string   `json:"monitor_url"`
	MonitorType           string   `json:"monitor_type"`
	StartedAt             string   `json:"started_at" openapi:"format=date-time"`
	ResolvedAt            *string  `json:"resolved_at" openapi:"format=date-time"`
	DurationSeconds       int64    `json:"duration_seconds"`
	AlertSuppressed       bool     `json:"alert_suppressed"`
	SuppressionReason     *string  `json:"suppression_reason"`
	IsFlapping            bool     `json:"is_flapping"`
	Confirmations         int      `json:"confirmations"`
	ConfirmingRegions     []string `json:"confirming_regions"`
	ConfirmingRegionNames []string `json:"confirming_region_names"`
	RegionsTotal          int      `json:"regions_total"`
	AcknowledgedAt        *string  `json:"acknowledged_at" openapi:"format=date-time"`
	AcknowledgedByName    *string  `json:"acknowledged_by_name"`
	SnoozedUntil          *string  `json:"snoozed_until" openapi:"format=date-time"`
	ResolvedManually      bool     `json:"resolved_manually"`
	CodeHostIssueURL      *string  `json:"code_host_issue_url" openapi:"format=uri"`
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
	Runbook    *IncidentRunbook `json:"runbook"` // Attached runbook with step states.
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
	CreatedAt string  `json:"created_at" openapi:"format=date-time"`
}

// AttachedRunbook is the answer of POST /incidents/:id/runbook and
// PATCH /incidents/:id/runbook-steps/:stepId: the incident's runbook with
// the state of each step.
type AttachedRunbook struct {
	IncidentID string           `json:"incident_id" openapi:"format=uuid"`
	Runbook    *IncidentRunbook `json:"runbook"`
}

// IncidentList is a list of incidents without paging: GET
// /stats/:id/incidents (newest first) and GET /incidents/export?format=json.
type IncidentList struct {
	Items []Incident `json:"items"`
}

// IncidentPostmortem is PUT /incidents/:id/postmortem: the postmortem as
// stored.
type IncidentPostmortem struct {
	IncidentID string `json:"incident_id" openapi:"format=uuid"`
	Postmortem string `json:"postmortem"`
}

// Escalation is GET /incidents/:id/escalation: the incident's escalation
// policy and every firing of its steps, as fired or as scheduled.
type Escalation struct {
	IncidentID     string               `json:"incident_id" openapi:"format=uuid"`
	Policy         *EscalationPolicyRef `json:"policy"` // Null when the monitor has no policy.
	Acknowledged   bool                 `json:"acknowledged"`
	AcknowledgedAt *time.Time           `json:"acknowledged_at"`
	Resolved       bool                 `json:"resolved"`
	// Every firing of every cycle of the policy's steps, in order.
	Steps []EscalationStep `json:"steps"`
	// When the next step fires; null when none will.
	NextStepAt *time.Time `json:"next_step_at"`
	// Why no further step fires, or that escalation waits for a snooze to
	// end (snoozed); absent while escalating.
	Stopped string `json:"stopped,omitempty" openapi:"enum=acknowledged|resolved|suppressed|snoozed|completed|no_policy|policy_not_found"`
}

// EscalationPolicyRef names the escalation policy of an incident.
type EscalationPolicyRef struct {
	ID     string `json:"id" openapi:"format=uuid"`
	Name   string `json:"name"`
	Repeat int32  `json:"repeat"` // Further cycles through the steps after the first.
}

// EscalationStep is one firing of an escalation step.
type EscalationStep struct {
	Step         int        `json:"step"`  // 1-based index of the step in the policy.
	Cycle        int        `json:"cycle"` // 1 for the first pass through the steps.
	DelayMinutes int32      `json:"delay_minutes"`
	FiresAt      time.Time  `json:"fires_at"`
	FiredAt      *time.Time `json:"fired_at"` // Null until it fired.
	// Fired, pending, or cancelled (escalation stopped first).
	State   string            `json:"state" openapi:"enum=fired|pending|cancelled"`
	Targets EscalationTargets `json:"targets"`
}

// EscalationTargets are whom a step notifies: alert channels by name and
// email addresses.
type EscalationTargets struct {
	Channels []string `json:"channels"`
	Emails   []string `json:"emails"`
}

// TimelinePage is one page of GET /incidents/:id/replay-timeline, oldest
// event first.
type TimelinePage struct {
	Items      []TimelineEvent `json:"items"`
	NextCursor *string         `json:"next_cursor"` // Pass as cursor for the next page; null: no more.
}

// TimelineEvent is one event of an incident's timeline: a check, an alert,
// a note, a state change.
type TimelineEvent struct {
	ID   int64           `json:"id"`
	Kind string          `json:"kind"`
	At   string          `json:"at" openapi:"format=date-time"`
	Data json.RawMessage `json:"data,omitempty"` // What happened; its fields depend on the kind.
}

// Runbook is a runbook: the steps to follow on an incident of a monitor
// type or a tagged service.
type Runbook struct {
	ID          string            `json:"id" openapi:"format=uuid"`
	Name        string            `json:"name"`
	Steps       []RunbookStepBody `json:"steps"`
	MonitorType *string           `json:"monitor_type"` // Monitor type the runbook is for, or null.
	ServiceTag  *string           `json:"service_tag"`  // Monitor tag the runbook is for, or null.
	IsActive    bool              `json:"is_active"`
	CreatedAt   string            `json:"created_at" openapi:"format=date-time"`
}

// DeployEvent is a recorded deployment.
type DeployEvent struct {
	ID          string          `json:"id" openapi:"format=uuid"`
	ServiceName string          `json:"service_name"`
	Environment *string         `json:"environment"`
	Version     *string         `json:"version"`
	Source      *string         `json:"source"`
	DeployedAt  string          `json:"deployed_at" openapi:"format=date-time"`
	Metadata    json.RawMessage `json:"metadata" openapi:"object"` // The metadata sent, {} when none.
	CreatedAt   string          `json:"created_at" openapi:"format=date-time"`
}

// DeployEvents is GET /incidents/deploy-events: the newest deploys first.
type DeployEvents struct {
	Events []DeployEvent `json:"events"`
}

// DeployHookConfig is GET /incidents/deploy-events/config: the settings of
// the signed deploy webhook of code-hosting services.
type DeployHookConfig struct {
	Enabled    bool    `json:"enabled"`
	WebhookURL *string `json:"webhook_url" openapi:"format=uri"` // Null while the hook is not enabled.
	Signature  string  `json:"signature"`                        // How deliveries are signed (HMAC-SHA256).
}
