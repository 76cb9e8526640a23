package restapi

import "encoding/json"

// Request bodies. The handlers decode into these types, and the OpenAPI
// document derives the request schemas from them as it does the answers':
// a field without omitempty is required, a pointer may be null unless its
// `openapi` tag says nonnull (a pointer that tells "absent" apart), and a
// blank field tagged strict refuses unknown properties, as the handler that
// decodes the body strictly does.

// NoteBody is the body of POST /incidents/{id}/notes.
type NoteBody struct {
	Body *string `json:"body" openapi:"nonnull,min=1,max=5000"`
	// Public marks a public update (status page subscribers are told).
	Public bool `json:"public,omitempty"`
}

// ResolveBody is the optional body of POST /incidents/{id}/resolve.
type ResolveBody struct {
	Note string `json:"note,omitempty" openapi:"max=5000"`
}

// Postmortem is the body of PUT /incidents/{id}/postmortem.
type Postmortem struct {
	Postmortem *string `json:"postmortem" openapi:"nonnull,max=50000"`
}

// DependencyBody is the body of POST /reliability/dependencies.
type DependencyBody struct {
	_               struct{} `openapi:"strict"`
	ParentMonitorID string   `json:"parent_monitor_id" openapi:"format=uuid"`
	ChildMonitorID  string   `json:"child_monitor_id" openapi:"format=uuid"`
	SuppressionMode *string  `json:"suppression_mode,omitempty" openapi:"nonnull,enum=suppress_child_if_parent_down"`
}

// Overwrite is the optional body of POST
// /incident-comms/incidents/{id}/postmortem/generate.
type Overwrite struct {
	_         struct{} `openapi:"strict"`
	Overwrite bool     `json:"overwrite,omitempty"`
}

// DraftRequest is the optional body of POST
// /incident-comms/incidents/{id}/status-updates.
type DraftRequest struct {
	_        struct{} `openapi:"strict"`
	Phase    string   `json:"phase,omitempty" openapi:"enum=@draftPhases"`
	Guidance string   `json:"guidance,omitempty" openapi:"max=1000"`
}

// DraftEdit is the body of PATCH /incident-comms/status-updates/{draftId}:
// body, phase or both.
type DraftEdit struct {
	_     struct{} `openapi:"strict"`
	Body  *string  `json:"body,omitempty" openapi:"nonnull,max=5000"`
	Phase *string  `json:"phase,omitempty" openapi:"nonnull,enum=@draftPhases"`
}

// SLOTargetBody is the body of POST /reliability/slo-targets and PUT
// /reliability/slo-targets/{id}: monitor_id and target_percentage are
// required on create; monitor_id is not accepted on PUT.
type SLOTargetBody struct {
	MonitorID             Nullable[string]  `json:"monitor_id" openapi:"nonnull,format=uuid"`
	TargetPercentage      Nullable[float64] `json:"target_percentage" openapi:"nonnull,min=90,max=99.999"`
	SLIType               Nullable[string]  `json:"sli_type" openapi:"nonnull,enum=availability|latency"`
	WindowMinutes         Nullable[int32]   `json:"window_minutes" openapi:"nonnull,min=60,max=43200"`
	BurnRateFastThreshold Nullable[float64] `json:"burn_rate_fast_threshold" openapi:"nonnull,min=0.1,max=100"`
	BurnRateSlowThreshold Nullable[float64] `json:"burn_rate_slow_threshold" openapi:"nonnull,min=0.1,max=100"`
	IsEnabled             Nullable[bool]    `json:"is_enabled" openapi:"nonnull"`
}

// SnoozeBody is the body of POST /incidents/{id}/snooze: either until or
// minutes.
type SnoozeBody struct {
	// Until is future, at most 30 days ahead.
	Until   Nullable[string] `json:"until" openapi:"nonnull,format=date-time"`
	Minutes Nullable[int]    `json:"minutes" openapi:"nonnull,min=1,max=43200"`
}

// MonitorGroupBody is the body of a group create (name required) or rename.
type MonitorGroupBody struct {
	Name        Nullable[string] `json:"name" openapi:"nonnull,min=1,max=255"`
	Description Nullable[string] `json:"description"`
	// NotificationEmails is owner only: changing it with an API key is 403
	// WORKSPACE_OWNER_REQUIRED.
	NotificationEmails Nullable[[]string] `json:"notification_emails" openapi:"nonnull,itemformat=email,max=20"`
}

// PageAccess is the body of PUT /status/pages/{id}/access.
type PageAccess struct {
	_        struct{}         `openapi:"strict"`
	Mode     string           `json:"mode" openapi:"enum=public|password|sso"`
	Password Nullable[string] `json:"password" openapi:"min=8,max=128"`
	IsPublic Nullable[bool]   `json:"is_public" openapi:"nonnull"`
	// SSO says who may view an sso page (an extension: the specification
	// names no fields); required with mode sso, refused with other modes.
	SSO *PageAccessSSO `json:"sso,omitempty"`
}

// PageAccessSSO is who may view an sso page: signed-in users with a listed
// verified e-mail address or e-mail domain, or in a listed group (the
// StatusPage's spec.access.sso). At least one entry is required.
type PageAccessSSO struct {
	AllowedEmailDomains []string `json:"allowed_email_domains,omitempty" openapi:"max=100"`
	AllowedEmails       []string `json:"allowed_emails,omitempty" openapi:"max=500"`
	AllowedGroups       []string `json:"allowed_groups,omitempty" openapi:"max=100"`
}

// PageDomain is the body of PUT /status/pages/{id}/domain (the answer is
// PageDomainState).
type PageDomain struct {
	_ struct{} `openapi:"strict"`
	// Domain is the custom domain; null or empty removes it.
	Domain Nullable[string] `json:"domain"`
}

// RunbookBody is the body of POST /incidents/runbooks and PUT
// /incidents/runbooks/{runbookId}.
type RunbookBody struct {
	Name        *string           `json:"name" openapi:"nonnull,min=1,max=255"`
	Steps       []RunbookStepBody `json:"steps" openapi:"min=1,max=100"`
	MonitorType *string           `json:"monitor_type,omitempty"`
	ServiceTag  *string           `json:"service_tag,omitempty"`
	IsActive    *bool             `json:"is_active,omitempty" openapi:"nonnull"`
}

// RunbookStepBody is one step of a runbook.
type RunbookStepBody struct {
	Title       string `json:"title" openapi:"min=1,max=255"`
	Description string `json:"description,omitempty" openapi:"max=5000"`
}

// IncidentBody is the body of POST /incidents: a manual incident.
type IncidentBody struct {
	MonitorID string `json:"monitor_id" openapi:"format=uuid"`
}

// RunbookAttach is the optional body of POST /incidents/{id}/runbook.
type RunbookAttach struct {
	// RunbookID names the runbook; without it, the first active runbook for
	// the monitor's type or one of its tags.
	RunbookID string `json:"runbook_id,omitempty" openapi:"format=uuid"`
}

// RunbookStepState is the body of PATCH
// /incidents/{id}/runbook-steps/{stepId}.
type RunbookStepState struct {
	IsCompleted *bool `json:"is_completed" openapi:"nonnull"`
}

// DeployEventBody is the body of POST /incidents/deploy-events.
type DeployEventBody struct {
	ServiceName *string `json:"service_name" openapi:"nonnull,min=1,max=255"`
	Environment string  `json:"environment,omitempty" openapi:"min=1,max=64"`
	Version     string  `json:"version,omitempty" openapi:"min=1,max=120"`
	DeployedAt  string  `json:"deployed_at,omitempty" openapi:"format=date-time"` // Default now.
	// Metadata is any object to keep with the deploy.
	Metadata json.RawMessage `json:"metadata,omitempty" openapi:"object"`
	// Source says where the deploy comes from; a code-hosting service name
	// here is 400 USE_SIGNED_DEPLOY_HOOK.
	Source string `json:"source,omitempty"`
}

// StatusPageUpdate is the body of PATCH /status/pages/{id}: only the sent
// fields change; unknown fields are rejected.
type StatusPageUpdate struct {
	_           struct{}         `openapi:"strict"`
	Title       Nullable[string] `json:"title" openapi:"nonnull,min=1,max=255"`
	Description Nullable[string] `json:"description" openapi:"max=1000"`
	Slug        Nullable[string] `json:"slug" openapi:"nonnull,min=3,max=64"`
	IsPublic    Nullable[bool]   `json:"is_public" openapi:"nonnull"`
	LogoURL     Nullable[string] `json:"logo_url"`     // https URL or empty.
	FaviconURL  Nullable[string] `json:"favicon_url"`  // https URL or empty; needs white-label.
	AccentColor Nullable[string] `json:"accent_color"` // Hex colour or empty.
	// HidePoweredBy needs white-label (403 WHITE_LABEL_NOT_ENTITLED).
	HidePoweredBy     Nullable[bool] `json:"hide_powered_by" openapi:"nonnull"`
	ShowResponseTimes Nullable[bool] `json:"show_response_times" openapi:"nonnull"`
}

// StatusPageCreate is the body of POST /status/pages: title is required,
// the other settings are those of PATCH, and unknown fields are ignored.
type StatusPageCreate struct {
	// A type of its own, not StatusPageUpdate, only because the two differ
	// in what the document says (required title, no strictness); the
	// handler converts it to StatusPageUpdate, so the compiler keeps the
	// two field lists identical.
	_                 struct{}
	Title             Nullable[string] `json:"title" openapi:"required,nonnull,min=1,max=255"`
	Description       Nullable[string] `json:"description" openapi:"max=1000"`
	Slug              Nullable[string] `json:"slug" openapi:"nonnull,min=3,max=64"`
	IsPublic          Nullable[bool]   `json:"is_public" openapi:"nonnull"`
	LogoURL           Nullable[string] `json:"logo_url"`                          // https URL or empty.
	FaviconURL        Nullable[string] `json:"favicon_url"`                       // https URL or empty; needs white-label.
	AccentColor       Nullable[string] `json:"accent_color"`                      // Hex colour or empty.
	HidePoweredBy     Nullable[bool]   `json:"hide_powered_by" openapi:"nonnull"` // Needs white-label (403 WHITE_LABEL_NOT_ENTITLED).
	ShowResponseTimes Nullable[bool]   `json:"show_response_times" openapi:"nonnull"`
}

// PageMonitorEntry is one monitor of PUT /status/pages/{id}/monitors.
type PageMonitorEntry struct {
	// The server also accepts the spelling monitorId here, as it accepts
	// monitor_id in PageMonitorAdd: the document names one spelling per
	// body, so that a generated client has no two fields of one name.
	MonitorID string  `json:"monitor_id" openapi:"format=uuid"`
	Section   *string `json:"section,omitempty" openapi:"max=100"`
}

// PageMonitorAdd is the body of POST /status/pages/{id}/monitors; adding a
// monitor already on the page changes its section.
type PageMonitorAdd struct {
	MonitorID string  `json:"monitorId" openapi:"format=uuid"`
	Section   *string `json:"section,omitempty" openapi:"max=100"`
}

// PageMonitors is the body of PUT /status/pages/{id}/monitors.
type PageMonitors struct {
	Monitors []PageMonitorEntry `json:"monitors" openapi:"max=500"`
}

// LanguagesBody is the body of PUT /status/pages/{id}/languages: it
// replaces the page's languages.
type LanguagesBody struct {
	_            struct{}      `openapi:"strict"`
	Default      string        `json:"default,omitempty"`
	Enabled      []string      `json:"enabled,omitempty"`
	Translations []Translation `json:"translations,omitempty"`
}

// Routing is the body of PUT /integrations/connections/{connectionId}/routing
// and the routing of a connection body: which alerts the connection
// receives. Unknown fields are rejected.
type Routing struct {
	_           struct{} `openapi:"strict"`
	Scope       string   `json:"scope,omitempty" openapi:"enum=all|groups|monitors"`      // Default all.
	GroupIDs    []string `json:"group_ids,omitempty" openapi:"itemformat=uuid,max=500"`   // Required with scope groups.
	MonitorIDs  []string `json:"monitor_ids,omitempty" openapi:"itemformat=uuid,max=500"` // Required with scope monitors.
	MinSeverity string   `json:"min_severity,omitempty" openapi:"enum=down|degraded"`     // Default down.
}

// TestEmail is the optional body of POST /monitors/{id}/test-notification.
type TestEmail struct {
	// Email must be a recipient of the monitor's alerts; default is the
	// first recipient.
	Email Nullable[string] `json:"email" openapi:"format=email"`
}

// RecipientBody is the body of POST /alert-recipients; unknown fields are
// rejected.
type RecipientBody struct {
	_     struct{} `openapi:"strict"`
	Email string   `json:"email" openapi:"format=email"`
}

// ResendBody is the body of POST /alert-recipients/resend.
type ResendBody struct {
	Email string `json:"email" openapi:"format=email"`
}

// RegionsBody is the body of PUT /monitors/{id}/regions.
type RegionsBody struct {
	Regions []string `json:"regions" openapi:"min=1,max=50"`
}

// RunCheckBody is the optional body of POST /monitors/{id}/run-check.
type RunCheckBody struct {
	Region string `json:"region,omitempty"` // Probe region code; the query parameter region does the same.
}

// CronHeartbeat is the optional body of POST
// /monitors/{id}/cron-heartbeat.
type CronHeartbeat struct {
	Status          *string `json:"status,omitempty" openapi:"nonnull,enum=success|ok|up|fail|failure|down|error"`
	ExecutionTimeMs *int64  `json:"execution_time_ms,omitempty" openapi:"nonnull,min=0,max=604800000"`
	ExecutionCount  *int64  `json:"execution_count,omitempty" openapi:"nonnull"`
	StatusCode      *int    `json:"status_code,omitempty" openapi:"nonnull,min=0,max=999"`
}

// BulkRequest is the body of POST /monitors/bulk.
type BulkRequest struct {
	Action string   `json:"action" openapi:"enum=pause|resume|delete|add_tags|remove_tags|move_group"`
	IDs    []string `json:"ids" openapi:"itemformat=uuid,min=1,max=500"`
	Tags   []string `json:"tags,omitempty"` // For add_tags and remove_tags.
	// GroupID is for move_group; null removes from the group.
	GroupID Nullable[string] `json:"group_id" openapi:"format=uuid"`
}

// PlanRequest is the body of plan and apply (up to 2 MB).
type PlanRequest struct {
	// Monitors are the specs; every spec needs a key. The items stay raw
	// JSON: each is decoded and checked on its own, so an error names its
	// index.
	Monitors    Nullable[[]json.RawMessage] `json:"monitors" openapi:"required,nonnull,itemref=MonitorSpec,max=500"`
	Prune       bool                        `json:"prune,omitempty"`         // Delete keyed monitors not in the list.
	AdoptByName bool                        `json:"adopt_by_name,omitempty"` // Give a key to an un-keyed monitor with the same name and type.
	// ContinueOnError is for apply only.
	ContinueOnError bool `json:"continue_on_error,omitempty"`
	// ExpectedFingerprint is for apply only: the plan_fingerprint of the
	// reviewed plan (409 PLAN_CHANGED when different).
	ExpectedFingerprint string `json:"expected_fingerprint,omitempty"`
	// AllowPruneWithoutFingerprint is for apply only.
	AllowPruneWithoutFingerprint bool `json:"allow_prune_without_fingerprint,omitempty"`
}

// MonitorKeyBody is the body of PUT /automation/monitors/by-id/{id}/key.
type MonitorKeyBody struct {
	_ struct{} `openapi:"strict"`
	// Key is the monitor's new key, or null to remove it.
	Key Nullable[string] `json:"key" openapi:"required,ref=MonitorKey"`
}

// ThirdPartySubscriptionBody is the body of POST
// /third-party-status/subscriptions (provider_id required) and PATCH
// /third-party-status/subscriptions/{id} (only sent fields change; the
// provider cannot change). Unknown fields are rejected.
type ThirdPartySubscriptionBody struct {
	_                 struct{}  `openapi:"strict"`
	ProviderID        *string   `json:"provider_id,omitempty" openapi:"max=60"` // A provider id of GET /third-party-status/providers.
	ComponentIDs      *[]string `json:"component_ids,omitempty" openapi:"max=200"`
	Keywords          *[]string `json:"keywords,omitempty" openapi:"max=20"`
	Notify            *bool     `json:"notify,omitempty"`
	NotifyMaintenance *bool     `json:"notify_maintenance,omitempty"`
	MinSeverity       *string   `json:"min_severity,omitempty" openapi:"enum=minor|major|critical"`
}

// SiteBody is the create and update body of a website-health site: absent
// fields keep their value (or the default on create); null is the same as
// absent. Unknown fields are rejected.
type SiteBody struct {
	_                  struct{} `openapi:"strict"`
	Name               *string  `json:"name,omitempty" openapi:"nonnull,min=1,max=255"`      // Required on create.
	URL                *string  `json:"url,omitempty" openapi:"nonnull,format=uri,max=2000"` // Required on create; http or https.
	MaxPages           *int     `json:"max_pages,omitempty" openapi:"nonnull,min=1,max=500"`
	MaxDepth           *int     `json:"max_depth,omitempty" openapi:"nonnull,min=0,max=10"`
	CheckExternalLinks *bool    `json:"check_external_links,omitempty" openapi:"nonnull"`
	PerfAuditEnabled   *bool    `json:"perf_audit_enabled,omitempty" openapi:"nonnull"`
	// PerfAuditURLs are the pages the browser audit measures.
	PerfAuditURLs       *[]string `json:"perf_audit_urls,omitempty" openapi:"nonnull,max=3,itemformat=uri"`
	PerfAuditFormFactor *string   `json:"perf_audit_form_factor,omitempty" openapi:"nonnull,enum=mobile|desktop"`
	Schedule            *string   `json:"schedule,omitempty" openapi:"nonnull,enum=daily|weekly|manual"`
	NotifyOnIssues      *bool     `json:"notify_on_issues,omitempty" openapi:"nonnull"`
	ScoreDropThresh     *int      `json:"score_drop_thresh,omitempty" openapi:"nonnull,min=1,max=100"`
	IsActive            *bool     `json:"is_active,omitempty" openapi:"nonnull"`
}
