package restapi

import "encoding/json"

// Plan is the answer of POST /automation/monitors/plan: what an apply of
// the same body would change.
type Plan struct {
	Changes  []PlanChange  `json:"changes"`
	Summary  PlanSummary   `json:"summary"`
	Warnings []PlanWarning `json:"warnings"`
	// PlanFingerprint is sha256:<hex> of the canonical changes.
	PlanFingerprint string `json:"plan_fingerprint"`
}

// PlanChange is one change of a plan.
type PlanChange struct {
	Action    string  `json:"action" openapi:"enum=create|update|replace|delete|noop"`
	Key       string  `json:"key" openapi:"ref=MonitorKey"`
	MonitorID *string `json:"monitor_id" openapi:"format=uuid"`
	Name      string  `json:"name"`
	Type      string  `json:"type"`
	// Adopted says an un-keyed monitor of the same name and type gets the
	// key.
	Adopted bool          `json:"adopted,omitempty"`
	Diff    []FieldChange `json:"diff,omitempty"` // Changed managed fields.
}

// FieldChange is one managed field that a change sets.
type FieldChange struct {
	Field string          `json:"field"` // Managed field, e.g. config.timeout.
	From  json.RawMessage `json:"from"`  // Value before the change; null when unset.
	To    json.RawMessage `json:"to"`    // Value after the change; null when removed.
}

// PlanWarning is a warning of a plan, about one spec (key) or the whole.
type PlanWarning struct {
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
}

// PlanSummary counts a plan's changes by action.
type PlanSummary struct {
	Create  int `json:"create"`
	Update  int `json:"update"`
	Replace int `json:"replace"`
	Delete  int `json:"delete"`
	Noop    int `json:"noop"`
	Total   int `json:"total"`
}

// ApplyResult is the answer of POST /automation/monitors/apply: 200, or
// 207 when some changes failed.
type ApplyResult struct {
	OK              bool          `json:"ok"`
	Summary         ApplySummary  `json:"summary"`
	Results         []ApplyChange `json:"results"`
	PlanFingerprint string        `json:"plan_fingerprint"`
	Warnings        []PlanWarning `json:"warnings"`
}

// ApplySummary counts an apply's changes by action and by outcome.
type ApplySummary struct {
	PlanSummary
	Applied   int `json:"applied"`
	Unchanged int `json:"unchanged"`
	Failed    int `json:"failed"`
	Skipped   int `json:"skipped"`
}

// ApplyChange is the outcome of one change of an apply.
type ApplyChange struct {
	Key       string     `json:"key"`
	Action    string     `json:"action" openapi:"enum=create|update|replace|delete|noop"`
	Status    string     `json:"status" openapi:"enum=applied|unchanged|failed|skipped"`
	MonitorID *string    `json:"monitor_id" openapi:"format=uuid"`
	Error     *ErrorBody `json:"error,omitempty" openapi:"nonnull"` // Why the change failed.
}
