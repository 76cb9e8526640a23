package integrations

import (
	"context"
	"errors"
	"net/http"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Alert recipients, test notifications and the read-only notification
// settings. Recipients are not people with accounts here: they are the
// addresses the workspace's custom resources name (a monitor's and its
// group's notificationEmails, email alert channels, escalation steps).

// monitorRecipients lists the addresses m's alert emails go to: the
// monitor's own, then its group's, then those of the email channels that
// route m, each address once (case-insensitively), in that order.
func (h *Handlers) monitorRecipients(ctx context.Context, m *monv1.Monitor) ([]restapi.Recipient, error) {
	out := []restapi.Recipient{}
	seen := map[string]bool{}
	add := func(email, source string) {
		if k := strings.ToLower(email); !seen[k] {
			seen[k] = true
			out = append(out, restapi.Recipient{Email: email, Source: source})
		}
	}
	for _, e := range m.Spec.NotificationEmails {
		add(e, "monitor")
	}
	if ref := m.Spec.GroupRef; ref != nil {
		var g monv1.MonitorGroup
		err := h.d.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}, &g)
		if client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		for _, e := range g.Spec.NotificationEmails {
			add(e, "group")
		}
	}
	var channels monv1.AlertChannelList
	if err := h.d.List(ctx, &channels, m.Namespace); err != nil {
		return nil, err
	}
	for _, ch := range channels.Items {
		if ch.Spec.Type == monv1.ChannelEmail && !ch.Spec.Disabled && routesTo(&ch, m) {
			for _, e := range ch.Spec.Emails {
				add(e, "alert_channel")
			}
		}
	}
	return out, nil
}

func (h *Handlers) notificationRecipients(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	out, err := h.monitorRecipients(r.Context(), m)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"recipients": out})
}

// validEmail reports whether v is a bare email address.
func validEmail(v string) bool {
	a, err := mail.ParseAddress(v)
	return err == nil && a.Address == v && len(v) <= 254
}

// testNotification sends a test alert email for the monitor to {email} (one
// of its recipients) or, without a body, to its first recipient. Limited to
// 10 per 15 minutes per workspace.
func (h *Handlers) testNotification(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	var b restapi.TestEmail
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	email := strings.TrimSpace(b.Email.Value())
	if email != "" && !validEmail(email) {
		core.WriteValidation(w, core.FieldErr("email", "must be an email address"))
		return
	}
	recipients, err := h.monitorRecipients(ctx, m)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	switch i := slices.IndexFunc(recipients, func(x restapi.Recipient) bool { return strings.EqualFold(x.Email, email) }); {
	case email == "" && len(recipients) == 0:
		core.WriteValidation(w, core.FieldErr("email", "the monitor has no alert email recipients (notification_emails, its group's, or an email alert channel)"))
		return
	case email == "":
		email = recipients[0].Email
	case i < 0:
		core.WriteValidation(w, core.FieldErr("email", "must be a recipient of this monitor's alerts (see GET /monitors/:id/notification-recipients)"))
		return
	default:
		email = recipients[i].Email
	}
	if h.notifier == nil {
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeChannelUnavailable, "email delivery is not configured")
		return
	}
	if err := h.notifier.SendTestEmail(ctx, email, m.Spec.Name); err != nil {
		core.Log(r).Error(err, "unable to send a test notification", "monitor", m.Name)
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeChannelUnavailable, "the test email could not be sent; try again later")
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.TestEmailSent{Success: true, Email: email, Message: "Test notification sent to " + email})
}

func recipientState(st recipients.State) restapi.RecipientState {
	return restapi.RecipientState{
		Email: st.Email, Source: st.Sources[0], Sources: st.Sources, Status: st.Status(),
		Confirmed: st.Record.Confirmed(), ConfirmationSentAt: st.Record.ConfirmationSentAt,
		ConfirmationsSent: st.Record.ConfirmationsSent, ConfirmedAt: st.Record.ConfirmedAt,
	}
}

// decodeEmail reads the body {email} of the recipient endpoints (strict
// refuses unknown fields) and answers the error itself when it is not an
// address.
func (h *Handlers) decodeEmail(w http.ResponseWriter, r *http.Request, strict bool) (string, bool) {
	// Two types, as the document tells the strict body of POST
	// /alert-recipients from the lenient one of the resend.
	var add restapi.RecipientBody
	var resend restapi.ResendBody
	var err error
	if strict {
		err = core.DecodeJSON(r, &add, true)
	} else {
		err = core.DecodeJSON(r, &resend, false)
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return "", false
	}
	email := strings.TrimSpace(add.Email + resend.Email)
	switch {
	case email == "":
		core.WriteValidation(w, core.FieldErr("email", "is required"))
		return "", false
	case !validEmail(email):
		core.WriteValidation(w, core.FieldErr("email", "must be an email address"))
		return "", false
	}
	return email, true
}

// alertRecipients answers GET /alert-recipients: every address the
// workspace's resources send alert emails to, with its confirmation state.
func (h *Handlers) alertRecipients(w http.ResponseWriter, r *http.Request) {
	states, err := h.recipients.States(r.Context(), core.CallerFrom(r.Context()).Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out := make([]restapi.RecipientState, 0, len(states))
	for _, st := range states {
		out = append(out, recipientState(st))
	}
	httpjson.Write(w, http.StatusOK, restapi.AlertRecipients{Contacts: out, ConfirmationRequired: h.recipients.Required})
}

// resendConfirmation answers POST /alert-recipients/resend: a new
// confirmation link to an unconfirmed recipient of the workspace (the old
// link stops working), at most one a minute per address. A confirmed
// address is answered without sending; an address the workspace does not
// use is 404.
func (h *Handlers) resendConfirmation(w http.ResponseWriter, r *http.Request) {
	email, ok := h.decodeEmail(w, r, false)
	if !ok {
		return
	}
	st, sent, err := h.recipients.Resend(r.Context(), core.CallerFrom(r.Context()).Namespace, email)
	var tooSoon *recipients.TooSoonError
	switch {
	case errors.Is(err, recipients.ErrNotRecipient):
		core.WriteNotFound(w, "Alert recipient")
		return
	case errors.Is(err, recipients.ErrNoMailer):
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeChannelUnavailable, "email delivery is not configured")
		return
	case errors.As(err, &tooSoon):
		w.Header().Set("Retry-After", strconv.Itoa(ratelimit.Seconds(tooSoon.RetryAfter)))
		core.WriteError(w, http.StatusTooManyRequests, core.CodeRateLimited, "A confirmation was sent to this address less than a minute ago")
		return
	case err != nil && st.Email != "":
		core.Log(r).Error(err, "unable to send a recipient confirmation")
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeChannelUnavailable, "the confirmation email could not be sent; try again later")
		return
	case err != nil:
		core.WriteErr(w, r, err)
		return
	}
	msg := "Confirmation email sent to " + st.Email
	if !sent {
		msg = st.Email + " is already confirmed; no email was sent"
	}
	httpjson.Write(w, http.StatusOK, restapi.ConfirmationResent{Email: st.Email, Confirmed: st.Record.Confirmed(), Sent: sent,
		Status: st.Status(), Message: msg})
}

// notificationSettings answers GET /settings/notifications: how the
// workspace is alerted, read from its custom resources.
func (h *Handlers) notificationSettings(w http.ResponseWriter, r *http.Request) {
	ctx, ns := r.Context(), core.CallerFrom(r.Context()).Namespace
	var channels monv1.AlertChannelList
	var policies monv1.EscalationPolicyList
	for _, l := range []client.ObjectList{&channels, &policies} {
		if err := h.d.List(ctx, l, ns); err != nil {
			core.WriteErr(w, r, err)
			return
		}
	}
	groups, err := h.d.UIDIndex(ctx, &monv1.MonitorGroupList{}, ns)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	monitors, err := h.d.UIDIndex(ctx, &monv1.MonitorList{}, ns)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	all, err := recipients.List(ctx, h.d.Client, ns)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	emails := make([]restapi.Recipient, 0, len(all))
	for _, rc := range all {
		emails = append(emails, restapi.Recipient{Email: rc.Email, Source: rc.Sources[0]})
	}
	chs := []restapi.Channel{}
	degraded := false
	for i := range channels.Items {
		ch := &channels.Items[i]
		if ch.DeletionTimestamp != nil {
			continue
		}
		chs = append(chs, h.channelObject(ch, groups, monitors))
		degraded = degraded || (!ch.Spec.Disabled && ch.Spec.Routing != nil && ch.Spec.Routing.MinSeverity == "degraded")
	}
	slices.SortFunc(chs, func(a, b restapi.Channel) int { return strings.Compare(a.Name+"/"+a.ID, b.Name+"/"+b.ID) })
	httpjson.Write(w, http.StatusOK, restapi.NotificationSettings{
		Channels:   chs,
		Recipients: emails,
		// Alerts go out when an incident opens and when it resolves;
		// degraded checks alert only channels whose min_severity is degraded.
		NotifyOn:                    restapi.NotifyOn{Down: true, Degraded: degraded, Recovery: true},
		EscalationPolicies:          len(policies.Items),
		MaintenanceSuppressesAlerts: true,
		TestEmailsAvailable:         h.notifier != nil,
	})
}

// countDelivery counts d into c.
func countDelivery(c *restapi.DeliveryCounts, d store.Delivery) {
	c.Total++
	c.Attempts += d.Attempts
	switch d.Status {
	case store.DeliveryDelivered:
		c.Delivered++
	case store.DeliveryFailed:
		c.Failed++
	default:
		c.Pending++
	}
}

// maxDeliveriesPerTarget is the most deliveries read per channel (the
// store's page limit); a busier channel makes the answer "truncated".
const maxDeliveriesPerTarget = 1000

// notificationAttempts answers GET /settings/notification-attempts: alert
// deliveries of the last 24 hours and 7 days by outcome and by channel. The
// deliveries of each of the workspace's channels (and escalation email
// targets) are read from the store, newest first.
func (h *Handlers) notificationAttempts(w http.ResponseWriter, r *http.Request) {
	ctx, ns := r.Context(), core.CallerFrom(r.Context()).Namespace
	var channels monv1.AlertChannelList
	var policies monv1.EscalationPolicyList
	for _, l := range []client.ObjectList{&channels, &policies} {
		if err := h.d.List(ctx, l, ns); err != nil {
			core.WriteErr(w, r, err)
			return
		}
	}
	type target struct{ id, name, typ string }
	var targets []target
	for i := range channels.Items {
		c := h.channelObject(&channels.Items[i], nil, nil)
		targets = append(targets, target{c.ID, c.Name, c.Type})
	}
	emails := map[string]bool{}
	for _, p := range policies.Items {
		for _, st := range p.Spec.Steps {
			for _, e := range st.Emails {
				if !emails[e] {
					emails[e] = true
					targets = append(targets, target{alerting.EmailTargetPrefix + e, e, "email"})
				}
			}
		}
	}
	now := h.d.Clock.Now()
	windows := []restapi.DeliveryWindow{
		{Window: "24h", Since: core.ISOTime(now.Add(-24 * time.Hour)), ByChannel: []restapi.ChannelDeliveries{}},
		{Window: "7d", Since: core.ISOTime(now.Add(-7 * 24 * time.Hour)), ByChannel: []restapi.ChannelDeliveries{}},
	}
	spans := []time.Duration{24 * time.Hour, 7 * 24 * time.Hour}
	truncated := false
	for _, t := range targets {
		ds, err := h.st.ListDeliveries(ctx, store.DeliveryQuery{ChannelID: t.id, Limit: maxDeliveriesPerTarget})
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		if len(ds) == maxDeliveriesPerTarget && now.Sub(ds[len(ds)-1].CreatedAt) < spans[1] {
			truncated = true
		}
		for i, span := range spans {
			row := restapi.ChannelDeliveries{ChannelID: t.id, Name: t.name, Type: t.typ}
			for _, d := range ds {
				if d.Namespace == ns && now.Sub(d.CreatedAt) <= span {
					countDelivery(&row.DeliveryCounts, d)
					countDelivery(&windows[i].ByOutcome, d)
				}
			}
			if row.Total > 0 {
				windows[i].ByChannel = append(windows[i].ByChannel, row)
			}
		}
	}
	for i := range windows {
		slices.SortFunc(windows[i].ByChannel, func(a, b restapi.ChannelDeliveries) int {
			if a.Total != b.Total {
				return b.Total - a.Total
			}
			return strings.Compare(a.ChannelID, b.ChannelID)
		})
	}
	httpjson.Write(w, http.StatusOK, restapi.DeliveryStats{GeneratedAt: core.ISOTime(now), Windows: windows, Truncated: truncated})
}

// routesTo reports whether ch's routing selects m.
func routesTo(ch *monv1.AlertChannel, m *monv1.Monitor) bool {
	rt := ch.Spec.Routing
	if rt == nil {
		return true
	}
	switch rt.Scope {
	case "groups":
		return m.Spec.GroupRef != nil && slices.ContainsFunc(rt.Groups, func(g monv1.LocalObjectReference) bool { return g.Name == m.Spec.GroupRef.Name })
	case "monitors":
		return slices.ContainsFunc(rt.Monitors, func(x monv1.LocalObjectReference) bool { return x.Name == m.Name })
	}
	return true
}
