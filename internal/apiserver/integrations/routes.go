package integrations

import (
	"context"
	"net/http"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Routes registers the alert channels (/integrations), alert recipients, the alerting settings and a monitor's notification endpoints; the recipient confirmation link is public.
func (h *Handlers) Routes(rt *core.Router) {
	// The confirmation link of a recipient email is public.
	rt.Public(http.MethodGet, recipients.ConfirmPath+"{token}", h.confirmRecipient, apidoc.Op{
		Tag:      "Public",
		Summary:  "Alert recipient confirmation page",
		Desc:     "The link of a confirmation email. Shows a button that POSTs to the same URL; fetching the link confirms nothing.",
		Resp:     apidoc.Str("HTML page."),
		RespType: "text/html",
	})
	rt.Public(http.MethodPost, recipients.ConfirmPath+"{token}", h.confirmRecipient, apidoc.Op{
		Tag:        "Public",
		Summary:    "Confirm an alert recipient",
		Desc:       "Confirms the address the link was sent to. A used, replaced or expired (7 days) link answers 404. Browsers get HTML pages (the 404 and 503 included); a request that accepts application/json (or sends a JSON body) gets {\"status\":\"confirmed\",\"email\"} and the JSON error shape.",
		Resp:       apidoc.Str("HTML page."),
		RespType:   "text/html",
		JSONResp:   restapi.RecipientConfirmed{},
		Extra:      []int{404, 503},
		HTMLErrors: true,
	}, rt.Limits.RecipientConfirm)
	h.confirmLimit = rt.Limits.RecipientConfirm
	l := rt.Limits
	automation := core.WithAccess(core.AutomationKey)
	owner := core.WithAccess(core.OwnerOnly)
	rt.Handle(http.MethodGet, "/settings/suppression-windows", emptyList, core.Doc(apidoc.Op{
		Tag:     "Alert recipients and settings",
		Summary: "Quiet hours and deployment windows",
		// No suppression windows are modelled yet: the list is always
		// empty, so its items have no type to declare.
		Resp: apidoc.ListOf(apidoc.Freeform("")),
	}))
	rt.Handle(http.MethodGet, "/monitors/{id}/notification-recipients", h.notificationRecipients, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "Recipients of the monitor's alert emails",
		Resp:    restapi.MonitorRecipients{},
	}))
	rt.Handle(http.MethodPost, "/monitors/{id}/test-notification", h.testNotification, core.WithLimit(l.TestNotify), core.Doc(apidoc.Op{
		Tag:          "Monitors",
		Summary:      "Send a test alert email",
		Desc:         "The email must be a recipient of the monitor or a workspace member; default is the first recipient.",
		Body:         restapi.TestEmail{},
		BodyOptional: true,
		Resp:         restapi.TestEmailSent{},
		Extra:        []int{503},
	}))
	rt.Handle(http.MethodGet, "/integrations", h.listIntegrations, core.Doc(apidoc.Op{
		Tag:     "Alert channels",
		Summary: "Channel types with fields, connections and status",
		Resp:    restapi.Integrations{},
	}))
	rt.Handle(http.MethodGet, "/integrations/alert-contacts", h.alertRecipients, core.Doc(apidoc.Op{
		Tag:     "Alert channels",
		Summary: "Workspace email alert contacts",
		Resp:    restapi.AlertRecipients{},
	}))
	rt.Handle(http.MethodPost, "/integrations/{type}/connections", h.createConnection, automation, core.Doc(apidoc.Op{
		Tag:     "Alert channels",
		Summary: "Create a connection",
		Desc:    "Channel availability depends on the plan (403 FEATURE_NOT_AVAILABLE). An eleventh connection of a type is 409 CONNECTION_LIMIT_REACHED.",
		Body:    apidoc.Ref("Connection"), // the fields depend on {type}: see apidoc's Connection
		Status:  201,
		Resp:    restapi.ConnectionCreated{},
		Extra:   []int{409},
	}))
	rt.Handle(http.MethodPut, "/integrations/connections/{connectionId}", h.updateConnection, automation, core.Doc(apidoc.Op{
		Tag:     "Alert channels",
		Summary: "Edit a connection",
		Body:    apidoc.Ref("Connection"), // the fields depend on the connection's type
		Resp:    restapi.Channel{},
	}))
	rt.Handle(http.MethodDelete, "/integrations/connections/{connectionId}", h.deleteConnection, automation, core.Doc(apidoc.Op{Tag: "Alert channels", Summary: "Delete a connection", Status: 204}))
	rt.Handle(http.MethodPut, "/integrations/connections/{connectionId}/routing", h.putRouting, automation, core.Doc(apidoc.Op{
		Tag:     "Alert channels",
		Summary: "Set a connection's routing",
		Body:    restapi.Routing{},
		Resp:    restapi.Channel{},
	}))
	rt.Handle(http.MethodPost, "/integrations/connections/{connectionId}/test", h.testConnection, core.WithLimit(l.ChannelTestWS, l.ChannelTestIP), core.Doc(apidoc.Op{
		Tag:     "Alert channels",
		Summary: "Send a test alert",
		Resp:    restapi.Success{},
		Extra:   []int{503},
	}))
	rt.Handle(http.MethodPost, "/integrations/connections/{connectionId}/rotate-secret", h.rotateSigningSecret, owner, core.Doc(apidoc.Op{
		Tag:     "Alert channels",
		Summary: "Rotate a webhook's signing secret",
		Resp:    restapi.SigningSecret{},
		Extra:   []int{409},
	}))
	rt.Handle(http.MethodGet, "/alert-recipients", h.alertRecipients, core.Doc(apidoc.Op{
		Tag:     "Alert recipients and settings",
		Summary: "Recipients and confirmation state",
		Desc:    "Every address the workspace's resources send alert emails to (monitors' and groups' notificationEmails, email channels, escalation steps, on-call schedules), each once. New addresses are sent a confirmation email; with confirmation_required, alert emails go to confirmed addresses only.",
		Resp:    restapi.AlertRecipients{},
	}))
	rt.Handle(http.MethodPost, "/alert-recipients", h.addRecipient, owner, core.Doc(apidoc.Op{
		Tag:     "Alert recipients and settings",
		Summary: "Add a recipient",
		Desc:    "Adds the address to the workspace's email AlertChannel alert-recipients (created when absent, routed to every monitor); it is sent a confirmation link. 409 CONFLICT when it is already there.",
		Body:    restapi.RecipientBody{},
		Status:  201,
		Resp:    restapi.RecipientAdded{},
		Extra:   []int{409},
	}))
	rt.Handle(http.MethodPost, "/alert-recipients/resend", h.resendConfirmation, core.Doc(apidoc.Op{
		Tag:        "Alert recipients and settings",
		Summary:    "Resend a recipient's confirmation email",
		Desc:       "Sends a new confirmation link (the previous one stops working), at most once a minute per address (429 with Retry-After). A confirmed address is answered with sent false.",
		Body:       restapi.ResendBody{},
		Resp:       restapi.ConfirmationResent{},
		NoNotFound: true,
		Extra:      []int{404, 429, 503},
	}))
	rt.Handle(http.MethodDelete, "/alert-recipients/{email}", h.removeRecipient, owner, core.Doc(apidoc.Op{
		Tag:     "Alert recipients and settings",
		Summary: "Remove a recipient",
		Desc:    "Removes an address added with POST; one named by a monitor, group, channel, escalation policy or on-call schedule is 409 (edit that resource).",
		Status:  204,
		Extra:   []int{409},
	}))
	rt.Handle(http.MethodGet, "/settings/escalation-policies", h.listEscalationPolicies, core.Doc(apidoc.Op{
		Tag:     "Alert recipients and settings",
		Summary: "Escalation policies",
		Resp:    []restapi.EscalationPolicy{},
	}))
	rt.Handle(http.MethodGet, "/settings/on-call-schedules", h.listOnCallSchedules, core.Doc(apidoc.Op{
		Tag:     "Alert recipients and settings",
		Summary: "On-call schedules with who is on call now",
		Resp:    []restapi.OnCallSchedule{},
	}))
	rt.Handle(http.MethodGet, "/settings/on-call-schedules/current", h.currentOnCall, core.Doc(apidoc.Op{
		Tag:     "Alert recipients and settings",
		Summary: "Who is on call now, per schedule",
		Resp:    []restapi.OnCallNow{},
	}))
	rt.Handle(http.MethodGet, "/settings/notifications", h.notificationSettings, core.Doc(apidoc.Op{
		Tag:     "Alert recipients and settings",
		Summary: "Notification preferences",
		Resp:    restapi.NotificationSettings{},
	}))
	rt.Handle(http.MethodGet, "/settings/notification-attempts", h.notificationAttempts, core.Doc(apidoc.Op{
		Tag:     "Alert recipients and settings",
		Summary: "Alert delivery statistics",
		Resp:    restapi.DeliveryStats{},
	}))
}

// Store is what the alerting endpoints read from the history store.
type Store interface {
	// ListAlertRecipients is the confirmation state of email recipients.
	ListAlertRecipients(ctx context.Context, namespace string) ([]store.AlertRecipient, error)
	// ListDeliveries is the notification history.
	ListDeliveries(ctx context.Context, q store.DeliveryQuery) ([]store.Delivery, error)
}

// ChannelTester sends a test alert through one alert channel.
type ChannelTester interface {
	TestChannel(ctx context.Context, ch *monv1.AlertChannel) error
}

// Notifier sends a test alert email for a monitor to one address.
type Notifier interface {
	SendTestEmail(ctx context.Context, to, monitorName string) error
}

// Handlers serve the alerting side of a workspace: AlertChannel custom
// resources (/integrations), email recipients and their confirmation, the
// escalation, on-call and notification settings, and a monitor's
// notification recipients and test email.
type Handlers struct {
	d          *core.Deps
	st         Store
	recipients *recipients.Confirmer
	// channelTester and notifier send tests; nil answers 503.
	channelTester ChannelTester
	notifier      Notifier
	// allowPrivateTargets lets webhook channels target private addresses
	// (the setting admission uses).
	allowPrivateTargets bool
	// confirmLimit bounds confirmation attempts per address; Routes takes
	// it from the router's limits.
	confirmLimit *core.Limiter
}

// New returns the handlers; channelTester and notifier may be nil.
func New(d *core.Deps, st Store, rc *recipients.Confirmer, channelTester ChannelTester, notifier Notifier, allowPrivateTargets bool) *Handlers {
	return &Handlers{d: d, st: st, recipients: rc, channelTester: channelTester, notifier: notifier, allowPrivateTargets: allowPrivateTargets}
}
