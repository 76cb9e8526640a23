package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AlertChannelType is the kind of destination alerts are sent to. The
// `:type` path value of the REST API is the same string.
// +kubebuilder:validation:Enum=webhook;slack;discord;teams;googlechat;mattermost;zapier;pagerduty;opsgenie;telegram;github;sms;voice;whatsapp;email
type AlertChannelType string

// Alert channel types, by the field group they need.
const (
	// Channels that take a webhook_url.
	ChannelWebhook    AlertChannelType = "webhook"
	ChannelSlack      AlertChannelType = "slack"
	ChannelDiscord    AlertChannelType = "discord"
	ChannelTeams      AlertChannelType = "teams"
	ChannelGoogleChat AlertChannelType = "googlechat"
	ChannelMattermost AlertChannelType = "mattermost"
	ChannelZapier     AlertChannelType = "zapier"
	// An incident-management channel with an integration key.
	ChannelPagerDuty AlertChannelType = "pagerduty"
	// An incident-management channel with an API key and region.
	ChannelOpsgenie AlertChannelType = "opsgenie"
	// A messaging channel with a chat id.
	ChannelTelegram AlertChannelType = "telegram"
	// A code-hosting channel with a repository and token.
	ChannelGitHub AlertChannelType = "github"
	// Phone channels with an E.164 number.
	ChannelSMS      AlertChannelType = "sms"
	ChannelVoice    AlertChannelType = "voice"
	ChannelWhatsApp AlertChannelType = "whatsapp"
	// Email to a list of addresses.
	ChannelEmail AlertChannelType = "email"
)

// AlertChannelTypes are the alert channel types in the specification's
// order. The Enum marker on AlertChannelType must stay a literal for
// controller-gen; TestEnumMarkersMatchLists keeps the two equal, and
// internal/alerting has a sender for each.
var AlertChannelTypes = []AlertChannelType{ChannelWebhook, ChannelSlack, ChannelDiscord, ChannelTeams,
	ChannelGoogleChat, ChannelMattermost, ChannelZapier, ChannelPagerDuty, ChannelOpsgenie, ChannelTelegram,
	ChannelGitHub, ChannelSMS, ChannelVoice, ChannelWhatsApp, ChannelEmail}

// RoutingScope says which monitors' alerts a channel receives.
// +kubebuilder:validation:Enum=all;groups;monitors
type RoutingScope string

// Severity is the least severe monitor state that is alerted.
// +kubebuilder:validation:Enum=down;degraded
type Severity string

// AlertChannelSpec is the desired configuration of one alert connection.
// Secret values (URLs with tokens, keys) live in Secrets; the controller
// creates the webhook signing secret when signingSecretRef is absent.
type AlertChannelSpec struct {
	// type is the channel type; it cannot change after creation.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="type cannot change after creation"
	Type AlertChannelType `json:"type"`
	// name is the connection's label (up to 60 characters). Defaults to the
	// channel type's name.
	// +optional
	// +kubebuilder:validation:MaxLength=60
	Name string `json:"name,omitempty"`
	// webhookURL is the endpoint of webhook, chat and automation channels.
	// Webhook endpoints must be https, without credentials, at a public address.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	WebhookURL string `json:"webhookURL,omitempty"`
	// webhookURLFrom reads webhookURL from a Secret (for URLs that embed tokens).
	// +optional
	WebhookURLFrom *SecretKeySelector `json:"webhookURLFrom,omitempty"`
	// integrationKeyFrom is the incident-management integration key.
	// +optional
	IntegrationKeyFrom *SecretKeySelector `json:"integrationKeyFrom,omitempty"`
	// apiKeyFrom is the incident-management API key.
	// +optional
	APIKeyFrom *SecretKeySelector `json:"apiKeyFrom,omitempty"`
	// region of the incident-management service: us or eu.
	// +optional
	// +kubebuilder:validation:Enum=us;eu
	Region string `json:"region,omitempty"`
	// chatID is the messaging chat id.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	ChatID string `json:"chatID,omitempty"`
	// botTokenFrom is the messaging bot token.
	// +optional
	BotTokenFrom *SecretKeySelector `json:"botTokenFrom,omitempty"`
	// repository is the code-hosting repository as owner/repo.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`
	Repository string `json:"repository,omitempty"`
	// tokenFrom is the code-hosting token.
	// +optional
	TokenFrom *SecretKeySelector `json:"tokenFrom,omitempty"`
	// to is the E.164 phone number of sms, voice and whatsapp channels.
	// +optional
	// +kubebuilder:validation:Pattern=`^\+[1-9][0-9]{6,14}$`
	To string `json:"to,omitempty"`
	// emails are the recipients of email channels (up to 20).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=254
	// +listType=set
	Emails []string `json:"emails,omitempty"`
	// signingSecretRef holds the webhook signing secret. When absent the
	// controller generates one into a Secret named after the channel.
	// +optional
	SigningSecretRef *SecretKeySelector `json:"signingSecretRef,omitempty"`
	// routing says which monitors' alerts this channel receives.
	// +optional
	Routing *AlertRouting `json:"routing,omitempty"`
	// disabled stops deliveries without deleting the connection.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
}

// AlertRouting selects the monitors whose alerts a channel receives.
type AlertRouting struct {
	// scope: all (default), groups or monitors.
	// +optional
	Scope RoutingScope `json:"scope,omitempty"`
	// groups are MonitorGroup names (scope groups; up to 500).
	// +optional
	// +kubebuilder:validation:MaxItems=500
	// +listType=atomic
	Groups []LocalObjectReference `json:"groups,omitempty"`
	// monitors are Monitor names (scope monitors; up to 500).
	// +optional
	// +kubebuilder:validation:MaxItems=500
	// +listType=atomic
	Monitors []LocalObjectReference `json:"monitors,omitempty"`
	// minSeverity: down (default) or degraded.
	// +optional
	MinSeverity Severity `json:"minSeverity,omitempty"`
}

// AlertChannel condition types and reasons.
const (
	// AlertChannelConditionFailing is True after 3 consecutive failed
	// deliveries; a success clears it. A failing channel is never disabled.
	AlertChannelConditionFailing = "Failing"
	// ReasonDeliveriesFailing means consecutive deliveries failed.
	ReasonDeliveriesFailing = "DeliveriesFailing"
	// ReasonDeliveriesSucceeding means the last delivery succeeded.
	ReasonDeliveriesSucceeding = "DeliveriesSucceeding"
)

// AlertChannelStatus is the observed state of an AlertChannel.
type AlertChannelStatus struct {
	// observedGeneration is the generation this status describes; -1 until
	// a controller first writes status, so kstatus reports InProgress.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// connectionID is the id the REST API uses (metadata.uid).
	// +optional
	ConnectionID string `json:"connectionID,omitempty"`
	// signingSecretName is the Secret holding the webhook signing secret.
	// +optional
	SigningSecretName string `json:"signingSecretName,omitempty"`
	// consecutiveFailures counts failed deliveries since the last success.
	// +optional
	ConsecutiveFailures int32 `json:"consecutiveFailures,omitempty"`
	// lastDeliveryAt is the time of the last delivery attempt.
	// +optional
	LastDeliveryAt *metav1.Time `json:"lastDeliveryAt,omitempty"`
	// lastDeliveryStatus is the HTTP status or error of that attempt.
	// +optional
	LastDeliveryStatus string `json:"lastDeliveryStatus,omitempty"`
	// conditions: Ready, Failing.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AlertChannel is one connection alerts are delivered to.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ac,categories=uptime
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Name",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Failing",type=string,JSONPath=`.status.conditions[?(@.type=="Failing")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AlertChannel struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired configuration.
	// +required
	Spec AlertChannelSpec `json:"spec"`
	// status is the observed state.
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status AlertChannelStatus `json:"status,omitempty"`
}

// AlertChannelList is a list of AlertChannels.
// +kubebuilder:object:root=true
type AlertChannelList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AlertChannel `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AlertChannel{}, &AlertChannelList{})
}
