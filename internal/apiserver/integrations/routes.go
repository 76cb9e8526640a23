package integrations

import (
	"context"
	"net/http"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Routes registers the alert channels (/integrations), alert recipients, the alerting settings and a monitor's notification endpoints; the recipient confirmation link is public.
func (h *Handlers) Routes(rt *core.Router) {
	// The confirmation link of a recipient email is public.
	rt.Mux.Get(recipients.ConfirmPath+"{token}", h.confirmRecipient)
	rt.Mux.Post(recipients.ConfirmPath+"{token}", h.confirmRecipient)
	h.confirmLimit = rt.Limits.RecipientConfirm
	l := rt.Limits
	automation := core.WithAccess(core.AutomationKey)
	owner := core.WithAccess(core.OwnerOnly)
	rt.Handle(http.MethodGet, "/settings/suppression-windows", emptyList)
	rt.Handle(http.MethodGet, "/monitors/{id}/notification-recipients", h.notificationRecipients)
	rt.Handle(http.MethodPost, "/monitors/{id}/test-notification", h.testNotification, core.WithLimit(l.TestNotify))
	rt.Handle(http.MethodGet, "/integrations", h.listIntegrations)
	rt.Handle(http.MethodGet, "/integrations/alert-contacts", h.alertRecipients)
	rt.Handle(http.MethodPost, "/integrations/{type}/connections", h.createConnection, automation)
	rt.Handle(http.MethodPut, "/integrations/connections/{connectionId}", h.updateConnection, automation)
	rt.Handle(http.MethodDelete, "/integrations/connections/{connectionId}", h.deleteConnection, automation)
	rt.Handle(http.MethodPut, "/integrations/connections/{connectionId}/routing", h.putRouting, automation)
	rt.Handle(http.MethodPost, "/integrations/connections/{connectionId}/test", h.testConnection, core.WithLimit(l.ChannelTestWS, l.ChannelTestIP))
	rt.Handle(http.MethodPost, "/integrations/connections/{connectionId}/rotate-secret", h.rotateSigningSecret, owner)
	rt.Handle(http.MethodGet, "/alert-recipients", h.alertRecipients)
	rt.Handle(http.MethodPost, "/alert-recipients", h.addRecipient, owner)
	rt.Handle(http.MethodPost, "/alert-recipients/resend", h.resendConfirmation)
	rt.Handle(http.MethodDelete, "/alert-recipients/{email}", h.removeRecipient, owner)
	rt.Handle(http.MethodGet, "/settings/escalation-policies", h.listEscalationPolicies)
	rt.Handle(http.MethodGet, "/settings/on-call-schedules", h.listOnCallSchedules)
	rt.Handle(http.MethodGet, "/settings/on-call-schedules/current", h.currentOnCall)
	rt.Handle(http.MethodGet, "/settings/notifications", h.notificationSettings)
	rt.Handle(http.MethodGet, "/settings/notification-attempts", h.notificationAttempts)
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
