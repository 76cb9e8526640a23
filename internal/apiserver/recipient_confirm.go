package apiserver

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/uptime-operator/uptime-operator/internal/clientip"
	"github.com/uptime-operator/uptime-operator/internal/confirmlink"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// confirmRecipient serves the link of a recipient confirmation email: GET
// shows a button (confirmlink), the POST confirms.
func (s *Server) confirmRecipient(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	prompt := confirmlink.Page{Title: "Confirm alert emails",
		Text: "Confirm that this address may receive alert emails from uptime-operator.", Button: "Confirm alert emails"}
	confirmlink.Serve(w, r, prompt, func() {
		if d := s.limits.recipientConfirm.take(clientip.From(r), s.clock.Now()); !d.allowed {
			writeTooMany(w, s.limits.recipientConfirm, d)
			return
		}
		rec, err := s.recipients.Confirm(r.Context(), token)
		switch {
		case errors.Is(err, store.ErrNotFound):
			confirmlink.Render(w, http.StatusNotFound, confirmlink.Page{Title: "Link not valid",
				Text: "This confirmation link was already used, was replaced by a newer one, or has expired. Ask the workspace for a new confirmation email."})
		case err != nil:
			s.log(r).Error(err, "unable to confirm an alert recipient")
			confirmlink.Render(w, http.StatusServiceUnavailable, confirmlink.Page{Title: "Try again later",
				Text: "The confirmation could not be saved. Please try again in a minute."})
		default:
			confirmlink.Render(w, http.StatusOK, confirmlink.Page{Title: "Alert emails confirmed",
				Text: rec.Email + " will receive the alert emails of workspace " + rec.Namespace + "."})
		}
	})
}
