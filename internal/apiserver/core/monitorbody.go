package core

import (
	"encoding/json"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// The monitor as the REST API writes and shows it, shared by /monitors and
// monitoring as code (/automation/monitors): the one form the three
// declared bodies are applied in, the config object both render, and the
// mapping of Monitor field paths to REST fields that both report
// admission refusals with.

// MonitorBody is what a monitor body asks to change, whichever declared
// body it was decoded from (restapi.MonitorCreate, MonitorUpdate,
// MonitorSpec): the handlers decode the declared type and apply this, so
// the rules of a field are written once for the three bodies. A field a
// body does not carry is absent (not Set).
type MonitorBody struct {
	restapi.MonitorFields
	restapi.MonitorPlacement
	Type     Nullable[string]
	Regions  Nullable[[]string]
	IsActive Nullable[bool]
	// Monitoring as code only.
	Key    Nullable[string]
	Paused Nullable[bool]
}

// CreateBody is the change a create body asks for.
func CreateBody(b *restapi.MonitorCreate) *MonitorBody {
	return &MonitorBody{MonitorFields: b.MonitorFields, MonitorPlacement: b.MonitorPlacement,
		Type: b.Type, Regions: b.Regions, IsActive: b.IsActive}
}

// UpdateBody is the change an update body asks for.
func UpdateBody(b *restapi.MonitorUpdate) *MonitorBody {
	return &MonitorBody{MonitorFields: b.MonitorFields, MonitorPlacement: b.MonitorPlacement,
		Type: b.Type, Regions: b.Regions, IsActive: b.IsActive}
}

// SpecBody is the change a monitoring-as-code spec asks for; the fields a
// spec refuses are carried so that the caller can name them.
func SpecBody(b *restapi.MonitorSpec) *MonitorBody {
	return &MonitorBody{MonitorFields: b.MonitorFields,
		MonitorPlacement: restapi.MonitorPlacement{GroupID: b.GroupID, EscalationPolicyID: b.EscalationPolicyID},
		Type:             b.Type, Regions: b.Regions, IsActive: b.IsActive, Key: b.Key, Paused: b.Paused}
}

// ConfigNotificationEmails is the one config key shared by every type.
const ConfigNotificationEmails = restapi.NotificationEmailsKey

// ConfigObject renders a spec's config object (monitorconfig.Encode),
// notification_emails included.
func ConfigObject(spec *monv1.MonitorSpec) map[string]json.RawMessage {
	s := *spec
	s.Type = TypeOrDefault(s.Type)
	out := monitorconfig.Encode(&s)
	if len(spec.NotificationEmails) > 0 {
		out[ConfigNotificationEmails], _ = json.Marshal(spec.NotificationEmails)
	}
	return out
}

// TypeOrDefault is t, or http (the default type) when t is empty.
func TypeOrDefault(t monv1.MonitorType) monv1.MonitorType {
	if t == "" {
		return monv1.MonitorHTTP
	}
	return t
}

// MonitorFieldPath maps a Monitor field path (spec.http.timeoutMs) to the
// REST field (config.timeout).
func MonitorFieldPath(p string) string {
	p = strings.TrimPrefix(p, "spec")
	p = strings.TrimPrefix(p, ".")
	head, rest, _ := strings.Cut(p, ".")
	base := head
	if i := strings.IndexByte(head, '['); i >= 0 {
		base = head[:i]
	}
	switch base {
	case "":
		return ""
	case "intervalSeconds":
		return "interval_seconds"
	case "groupRef":
		return "group_id"
	case "escalationPolicyRef":
		return "escalation_policy_id"
	case "paused":
		return "is_active"
	case "tags", "regions", "name", "url", "type", "key":
		return base
	case "notificationEmails":
		return "config.notification_emails"
	}
	if wire, ok := monitorconfig.WirePath(base, rest); ok {
		if rest == "" {
			return "config"
		}
		return "config." + wire
	}
	return SnakePath(p)
}
