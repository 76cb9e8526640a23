package restapi

import "time"

// Channel is an alert channel (a connection of /integrations).
type Channel struct {
	ID   string `json:"id" openapi:"format=uuid"`
	Type string `json:"type"`
	// Name is the channel's name, or its type when it has none.
	Name string `json:"name"`
	// Status is active, disabled, or failing (three failed deliveries in a
	// row).
	Status              string         `json:"status" openapi:"enum=active|disabled|failing"`
	Routing             ChannelRouting `json:"routing"`
	ConsecutiveFailures int32          `json:"consecutive_failures"`
	LastDeliveryAt      *string        `json:"last_delivery_at" openapi:"format=date-time"`
	LastDeliveryStatus  *string        `json:"last_delivery_status"`
	CreatedAt           string         `json:"created_at" openapi:"format=date-time"`
}

// ChannelRouting is which alerts a channel receives, with its defaults
// filled in.
type ChannelRouting struct {
	Scope       string   `json:"scope" openapi:"enum=all|groups|monitors"`
	GroupIDs    []string `json:"group_ids" openapi:"itemformat=uuid"`
	MonitorIDs  []string `json:"monitor_ids" openapi:"itemformat=uuid"`
	MinSeverity string   `json:"min_severity" openapi:"enum=down|degraded"`
}

// Integrations is GET /integrations: the channel types and the
// workspace's connections, oldest first.
type Integrations struct {
	Types       []ChannelType `json:"types"`
	Connections []Channel     `json:"connections"`
}

// ChannelType is a channel type with the fields of its connections and its
// availability on the plan.
type ChannelType struct {
	Type           string   `json:"type"`
	Fields         []string `json:"fields"` // The connection body's fields of this type.
	Connections    int      `json:"connections"`
	MaxConnections int      `json:"max_connections"`
	Available      bool     `json:"available"` // Whether the plan has the type.
}

// ConnectionCreated is the answer of POST /integrations/{type}/connections.
type ConnectionCreated struct {
	Success         bool   `json:"success"`
	Message         string `json:"message"`
	ConnectionID    string `json:"connection_id" openapi:"format=uuid"`
	Name            string `json:"name"`
	IntegrationType string `json:"integration_type"`
	AutoTest        bool   `json:"auto_test"`
	// SigningSecret is set for webhook connections only; it is shown once.
	SigningSecret string `json:"signing_secret,omitempty"`
}

// SigningSecret is a webhook connection's new signing secret: the answer of
// POST /integrations/connections/{connectionId}/rotate-secret.
type SigningSecret struct {
	ConnectionID  string `json:"connection_id" openapi:"format=uuid"`
	SigningSecret string `json:"signing_secret"` // Shown once.
	RotatedAt     string `json:"rotated_at" openapi:"format=date-time"`
}

// Recipient is an alert email recipient and the first kind of resource
// naming it.
type Recipient struct {
	Email  string `json:"email" openapi:"format=email"`
	Source string `json:"source"`
}

// MonitorRecipients is GET /monitors/{id}/notification-recipients: the
// monitor's own addresses, then its group's, then those of the email
// channels that route it, each once.
type MonitorRecipients struct {
	Recipients []Recipient `json:"recipients"`
}

// TestEmailSent is the answer of POST /monitors/{id}/test-notification.
type TestEmailSent struct {
	Success bool   `json:"success"`
	Email   string `json:"email" openapi:"format=email"`
	Message string `json:"message"`
}

// RecipientState is an alert recipient with its confirmation state.
type RecipientState struct {
	Email string `json:"email" openapi:"format=email"`
	// Source is the first kind of resource naming the address: monitor,
	// group, alert_channel, escalation_policy or on_call_schedule.
	Source  string   `json:"source"`
	Sources []string `json:"sources"` // Every kind of resource naming the address.
	// Status is confirmed, pending (a confirmation was sent) or unconfirmed.
	Status             string     `json:"status" openapi:"enum=confirmed|pending|unconfirmed"`
	Confirmed          bool       `json:"confirmed"`
	ConfirmationSentAt *time.Time `json:"confirmation_sent_at"`
	ConfirmationsSent  int        `json:"confirmations_sent"`
	ConfirmedAt        *time.Time `json:"confirmed_at"`
}

// AlertRecipients is GET /alert-recipients.
type AlertRecipients struct {
	Contacts []RecipientState `json:"contacts"`
	// ConfirmationRequired says alert emails are held back from addresses
	// that have not confirmed.
	ConfirmationRequired bool `json:"confirmation_required"`
}

// RecipientAdded is the answer of POST /alert-recipients.
type RecipientAdded struct {
	Email     string `json:"email" openapi:"format=email"`
	Status    string `json:"status" openapi:"enum=confirmed|pending|unconfirmed"`
	Confirmed bool   `json:"confirmed"`
	// AlertChannel is the name of the AlertChannel holding the address.
	AlertChannel string `json:"alert_channel"`
	Message      string `json:"message"`
}

// ConfirmationResent is the answer of POST /alert-recipients/resend.
type ConfirmationResent struct {
	Email     string `json:"email" openapi:"format=email"`
	Confirmed bool   `json:"confirmed"`
	Sent      bool   `json:"sent"` // False for an address that is already confirmed.
	Status    string `json:"status" openapi:"enum=confirmed|pending|unconfirmed"`
	Message   string `json:"message"`
}

// RecipientConfirmed is the JSON answer of the confirmation link of an
// alert recipient.
type RecipientConfirmed struct {
	Status string `json:"status" openapi:"enum=confirmed"`
	Email  string `json:"email" openapi:"format=email"`
}

// NotificationSettings is GET /settings/notifications: how the workspace
// is alerted, read from its custom resources.
type NotificationSettings struct {
	Channels   []Channel   `json:"channels"`
	Recipients []Recipient `json:"recipients"`
	NotifyOn   NotifyOn    `json:"notify_on"`
	// EscalationPolicies is the number of escalation policies.
	EscalationPolicies          int  `json:"escalation_policies"`
	MaintenanceSuppressesAlerts bool `json:"maintenance_suppresses_alerts"`
	TestEmailsAvailable         bool `json:"test_emails_available"`
}

// NotifyOn says which changes alert: an incident opening (down) and
// resolving (recovery); degraded checks alert only channels whose
// min_severity is degraded.
type NotifyOn struct {
	Down     bool `json:"down"`
	Degraded bool `json:"degraded"`
	Recovery bool `json:"recovery"`
}

// DeliveryStats is GET /settings/notification-attempts: alert deliveries
// of the last 24 hours and 7 days by outcome and by channel.
type DeliveryStats struct {
	GeneratedAt string           `json:"generated_at" openapi:"format=date-time"`
	Windows     []DeliveryWindow `json:"windows"`
	// Truncated says a channel had more deliveries than were read.
	Truncated bool `json:"truncated"`
}

// DeliveryWindow is the delivery statistics of one time window.
type DeliveryWindow struct {
	Window    string              `json:"window" openapi:"enum=24h|7d"`
	Since     string              `json:"since" openapi:"format=date-time"`
	ByOutcome DeliveryCounts      `json:"by_outcome"`
	ByChannel []ChannelDeliveries `json:"by_channel"` // Channels with deliveries, busiest first.
}

// DeliveryCounts counts deliveries by outcome.
type DeliveryCounts struct {
	Total     int `json:"total"`
	Delivered int `json:"delivered"`
	Failed    int `json:"failed"`
	Pending   int `json:"pending"`
	Attempts  int `json:"attempts"`
}

// ChannelDeliveries is one channel's row of the delivery statistics.
type ChannelDeliveries struct {
	ChannelID string `json:"channel_id"` // The channel's id, or email:<address> for an escalation step's address.
	Name      string `json:"name"`
	Type      string `json:"type"`
	DeliveryCounts
}
