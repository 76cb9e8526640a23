package integrations

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Owners add and remove workspace alert recipients with POST and DELETE
// /alert-recipients. Recipients live in custom resources, so these
// addresses are kept in one email AlertChannel of the workspace,
// RecipientsChannel, routed to every monitor: kubectl shows and edits the
// same list, and the address is confirmed like any other recipient.

// RecipientsChannel is the name of the email AlertChannel holding the
// recipients added through the API.
const RecipientsChannel = "alert-recipients"

// maxChannelEmails is the CRD's bound on an email channel's addresses.
const maxChannelEmails = 20

// addRecipient answers POST /alert-recipients (owner only).
func (h *Handlers) addRecipient(w http.ResponseWriter, r *http.Request) {
	email, ok := h.decodeEmail(w, r, true)
	if !ok {
		return
	}
	ctx, ns := r.Context(), core.CallerFrom(r.Context()).Namespace
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var ch monv1.AlertChannel
		err := h.d.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: RecipientsChannel}, &ch)
		switch {
		case apierrors.IsNotFound(err):
			ch = monv1.AlertChannel{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: RecipientsChannel},
				Spec:       monv1.AlertChannelSpec{Type: monv1.ChannelEmail, Name: "Alert recipients", Emails: []string{email}},
			}
			if err := h.d.Client.Create(ctx, &ch); err != nil {
				return err
			}
		case err != nil:
			return err
		case ch.Spec.Type != monv1.ChannelEmail:
			return core.NewError(http.StatusConflict, core.CodeConflict,
				"the alert channel "+RecipientsChannel+" exists and is not an email channel; rename it to add recipients")
		case slices.ContainsFunc(ch.Spec.Emails, func(e string) bool { return strings.EqualFold(e, email) }):
			return core.NewError(http.StatusConflict, core.CodeConflict, email+" is already an alert recipient")
		case len(ch.Spec.Emails) >= maxChannelEmails:
			return core.NewError(http.StatusConflict, core.CodeConflict, "the workspace already has 20 recipients added this way")
		default:
			ch.Spec.Emails = append(ch.Spec.Emails, email)
			if err := h.d.Client.Update(ctx, &ch); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, ns, err, channelFieldPath))
		return
	}
	httpjson.Write(w, http.StatusCreated, h.addedState(ctx, ns, email))
}

// addedState is the response of an added recipient: its confirmation state
// from the store (an address confirmed before stays confirmed).
func (h *Handlers) addedState(ctx context.Context, ns, email string) restapi.RecipientAdded {
	st := recipients.State{Recipient: recipients.Recipient{Namespace: ns, Email: email, Sources: []string{recipients.SourceChannel}}}
	if h.st != nil {
		if known, err := h.st.ListAlertRecipients(ctx, ns); err == nil {
			if i := slices.IndexFunc(known, func(k store.AlertRecipient) bool { return k.Email == recipients.Key(email) }); i >= 0 {
				st.Record = known[i]
			}
		}
	}
	out := restapi.RecipientAdded{Email: email, Status: st.Status(), Confirmed: st.Record.Confirmed(), AlertChannel: RecipientsChannel}
	switch {
	case st.Record.Confirmed():
		out.Message = email + " was added; it confirmed alert emails before"
	case h.recipients.Mailer == nil:
		out.Message = email + " was added; email delivery is not configured, so no confirmation is sent"
	default:
		out.Message = email + " was added; a confirmation email is sent to it within a minute"
	}
	return out
}

// removeRecipient answers DELETE /alert-recipients/:email (owner only). Only addresses added through the API can be removed
// here: one named by a monitor, group, channel, policy or schedule is
// removed by editing that resource (409 names them).
func (h *Handlers) removeRecipient(w http.ResponseWriter, r *http.Request) {
	email, err := url.PathUnescape(chi.URLParam(r, "email"))
	if err != nil || !validEmail(email) {
		core.WriteNotFound(w, "Alert recipient")
		return
	}
	ctx, ns := r.Context(), core.CallerFrom(r.Context()).Namespace
	removed := false
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var ch monv1.AlertChannel
		if err := h.d.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: RecipientsChannel}, &ch); err != nil {
			return client.IgnoreNotFound(err)
		}
		i := slices.IndexFunc(ch.Spec.Emails, func(e string) bool { return strings.EqualFold(e, email) })
		if ch.Spec.Type != monv1.ChannelEmail || i < 0 {
			return nil
		}
		removed = true
		if len(ch.Spec.Emails) == 1 {
			if err := h.d.DeleteObject(ctx, &ch); err != nil && !errors.Is(err, core.ErrNotFound) {
				return err
			}
			return nil
		}
		ch.Spec.Emails = slices.Delete(ch.Spec.Emails, i, i+1)
		if err := h.d.Client.Update(ctx, &ch); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if removed {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	all, err := recipients.List(ctx, h.d.Client, ns)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if i := slices.IndexFunc(all, func(rc recipients.Recipient) bool { return recipients.Key(rc.Email) == recipients.Key(email) }); i >= 0 {
		core.WriteError(w, http.StatusConflict, core.CodeConflict, all[i].Email+" is named by the workspace's resources ("+
			strings.ReplaceAll(strings.Join(all[i].Sources, ", "), "_", " ")+"); remove it there")
		return
	}
	core.WriteNotFound(w, "Alert recipient")
}
