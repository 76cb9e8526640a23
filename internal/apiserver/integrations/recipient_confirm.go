package integrations

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/confirmlink"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// confirmRecipient serves the link of a recipient confirmation email: GET
// shows a button (confirmlink), the POST confirms. Browsers get HTML pages;
// a request that wants JSON (httpjson.Wanted) gets {"status": "confirmed"}
// or the API's error shape, as docs/openapi.json says.
func (h *Handlers) confirmRecipient(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	prompt := confirmlink.Page{Title: "Confirm alert emails",
		Text: "Confirm that this address may receive alert emails from uptime-operator.", Button: "Confirm alert emails"}
	confirmlink.Serve(w, r, prompt, func() {
		if d := h.confirmLimit.Take(core.ClientKey(r), h.d.Clock.Now()); !d.Allowed {
			h.confirmLimit.Refuse(w, d)
			return
		}
		asJSON := httpjson.Wanted(r)
		rec, err := h.recipients.Confirm(r.Context(), token)
		switch {
		case errors.Is(err, store.ErrNotFound) && asJSON:
			core.WriteError(w, http.StatusNotFound, core.CodeNotFound, "Confirmation link not valid: used, replaced by a newer one, or expired")
		case errors.Is(err, store.ErrNotFound):
			confirmlink.Render(w, http.StatusNotFound, confirmlink.Page{Title: "Link not valid",
				Text: "This confirmation link was already used, was replaced by a newer one, or has expired. Ask the workspace for a new confirmation email."})
		case err != nil:
			core.Log(r).Error(err, "unable to confirm an alert recipient")
			if asJSON {
				core.WriteError(w, http.StatusServiceUnavailable, core.CodeInternal, "the confirmation could not be saved; try again in a minute")
				return
			}
			confirmlink.Render(w, http.StatusServiceUnavailable, confirmlink.Page{Title: "Try again later",
				Text: "The confirmation could not be saved. Please try again in a minute."})
		case asJSON:
			httpjson.Write(w, http.StatusOK, restapi.RecipientConfirmed{Status: "confirmed", Email: rec.Email})
		default:
			confirmlink.Render(w, http.StatusOK, confirmlink.Page{Title: "Alert emails confirmed",
				Text: rec.Email + " will receive the alert emails of workspace " + rec.Namespace + "."})
		}
	})
}
