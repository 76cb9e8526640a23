package apiserver

import (
	"errors"
	"html/template"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/uptime-operator/uptime-operator/internal/clientip"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// confirmPage is the public page of a recipient confirmation link. GET only
// shows a button: mail scanners fetch links, and a fetch must not confirm
// an address on the recipient's behalf. The POST confirms.
var confirmPage = template.Must(template.New("confirm").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>{{.Title}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color:#1f2328}
button{font:inherit;padding:.5rem 1.2rem;border:0;border-radius:6px;background:#1f6feb;color:#fff;cursor:pointer}</style>
</head><body><main><h1>{{.Title}}</h1><p>{{.Text}}</p>
{{if .Form}}<form method="post"><button type="submit">Confirm alert emails</button></form>{{end}}
</main></body></html>
`))

type confirmView struct {
	Title, Text string
	Form        bool
}

// confirmRecipient serves the link of a recipient confirmation email.
func (s *Server) confirmRecipient(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	render := func(status int, v confirmView) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_ = confirmPage.Execute(w, v)
	}
	if r.Method == http.MethodGet {
		render(http.StatusOK, confirmView{Title: "Confirm alert emails",
			Text: "Confirm that this address may receive alert emails from uptime-operator.", Form: true})
		return
	}
	if d := s.limits.recipientConfirm.take(clientip.From(r), s.clock.Now()); !d.allowed {
		writeTooMany(w, s.limits.recipientConfirm, d)
		return
	}
	rec, err := s.recipients.Confirm(r.Context(), token)
	switch {
	case errors.Is(err, store.ErrNotFound):
		render(http.StatusNotFound, confirmView{Title: "Link not valid",
			Text: "This confirmation link was already used, was replaced by a newer one, or has expired. Ask the workspace for a new confirmation email."})
	case err != nil:
		s.log(r).Error(err, "unable to confirm an alert recipient")
		render(http.StatusServiceUnavailable, confirmView{Title: "Try again later",
			Text: "The confirmation could not be saved. Please try again in a minute."})
	default:
		render(http.StatusOK, confirmView{Title: "Alert emails confirmed",
			Text: rec.Email + " will receive the alert emails of workspace " + rec.Namespace + "."})
	}
}
