package restapi

import (
	"encoding/json"
)

// The three bodies that write a monitor: POST /monitors (and /monitors/test),
// PUT /monitors/{id}, and the spec of monitoring as code. They share the
// fields of MonitorFields; what differs is declared on each: create
// requires name, update pauses with is_active and accepts type and regions
// only unchanged, a spec carries key and paused and may not place the
// monitor in a group or an escalation policy. The handlers decode these
// types and apply them through one function (apiserver/monitors), so a
// field is declared here once for the document and the server.

// MonitorFields are the fields every monitor body carries. Config is
// described by its component (MonitorConfig, by monitor type).
type MonitorFields struct {
	Name Nullable[string] `json:"name" openapi:"nonnull,min=1,max=255"` // Display name.
	// URL is the target URL: http:// or https:// for http and api, https://
	// for mcp; must resolve to a public address.
	URL Nullable[string] `json:"url" openapi:"nonnull,format=uri"`
	// IntervalSeconds is the time between checks in seconds; not below the
	// plan's minimum; default 120 or the plan minimum.
	IntervalSeconds Nullable[int32] `json:"interval_seconds" openapi:"nonnull,min=15,max=900"`
	// Tags are up to 20 tags of 1-32 characters; lower-cased and
	// de-duplicated.
	Tags   Nullable[[]string]                   `json:"tags" openapi:"nonnull,max=20,itemmin=1,itemmax=32"`
	Config Nullable[map[string]json.RawMessage] `json:"config" openapi:"nonnull,ref=MonitorConfig"`
}

// MonitorPlacement is where a monitor belongs: create and update set it, a
// spec of monitoring as code may not.
type MonitorPlacement struct {
	GroupID            Nullable[string] `json:"group_id" openapi:"format=uuid"`             // Monitor group.
	EscalationPolicyID Nullable[string] `json:"escalation_policy_id" openapi:"format=uuid"` // Escalation policy.
}

// MonitorCreate is the body of POST /monitors and POST /monitors/test.
// Unknown top-level fields are ignored.
type MonitorCreate struct {
	_ struct{} `openapi:"requires=name"`
	MonitorFields
	MonitorPlacement
	// Type is the monitor type (default http); it cannot change after
	// creation.
	Type Nullable[string] `json:"type" openapi:"nonnull,enum=@monitorTypes"`
	// Regions are probe region codes; default is the plan's locations.
	Regions Nullable[[]string] `json:"regions" openapi:"nonnull,min=1,max=50"`
	// IsActive false creates the monitor paused. Not part of the
	// documented body (the spec lists it for update only), but honoured.
	IsActive Nullable[bool] `json:"is_active" openapi:"-"`
}

// MonitorUpdate is the body of PUT /monitors/{id}: only sent fields change;
// config keys are merged (null removes one).
type MonitorUpdate struct {
	MonitorFields
	MonitorPlacement
	IsActive Nullable[bool] `json:"is_active" openapi:"nonnull"` // false pauses the monitor.
	// Type is accepted only when equal to the current type.
	Type Nullable[string] `json:"type" openapi:"nonnull,enum=@monitorTypes"`
	// Regions are accepted only when equal to the current regions; change
	// regions with PUT /monitors/{id}/regions.
	Regions Nullable[[]string] `json:"regions" openapi:"nonnull,min=1,max=50"`
}

// MonitorSpec is a keyed monitor spec for monitoring as code: the create
// fields plus key and paused; group_id, escalation_policy_id and is_active
// are refused (VALIDATION_ERROR). Omitted fields are not managed.
type MonitorSpec struct {
	MonitorFields
	Key    Nullable[string] `json:"key" openapi:"nonnull,ref=MonitorKey"`
	Paused Nullable[bool]   `json:"paused" openapi:"nonnull"` // Whether the monitor is paused.
	// Type is the monitor type (default http); changing it replaces the
	// monitor.
	Type Nullable[string] `json:"type" openapi:"nonnull,enum=@monitorTypes"`
	// Regions are probe region codes; null sets the plan's locations.
	Regions Nullable[[]string] `json:"regions" openapi:"min=1,max=50"`

	// Refused: decoded only to answer a field error naming them.
	GroupID            Nullable[string] `json:"group_id" openapi:"-"`
	EscalationPolicyID Nullable[string] `json:"escalation_policy_id" openapi:"-"`
	IsActive           Nullable[bool]   `json:"is_active" openapi:"-"`
}

// The config object's keys are the fields of the Monitor's config struct
// of its type (api/v1alpha1), under the snake_case keys internal/
// monitorconfig derives, plus notification_emails, a field of the
// Monitor's spec that REST shows under config. Its schema (component
// MonitorConfig) is derived from the Monitor CRD
// (internal/monitorconfig/schema).

// NotificationEmailsKey is the one config key every type has.
const NotificationEmailsKey = "notification_emails"

// NotificationEmailsSchema is the schema of config.notification_emails.
func NotificationEmailsSchema() map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string", "format": "email"},
		"description": "Per-monitor alert recipients; ignored when sent with an API key on POST/PUT /monitors; needs an Automation key through monitoring as code."}
}
