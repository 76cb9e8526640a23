// Package confirmlink serves the pages behind emailed confirmation links
// (alert recipients, status-page subscribers). Mail scanners and link
// previewers fetch every link in a message, so a fetch must not confirm
// anything on the recipient's behalf: a GET (or HEAD) only shows a page with
// one button, and the POST that the button sends confirms.
package confirmlink

import (
	"html/template"
	"net/http"
)

var page = template.Must(template.New("confirm").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>{{.Title}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color:#1f2328}
button{font:inherit;padding:.5rem 1.2rem;border:0;border-radius:6px;background:#1f6feb;color:#fff;cursor:pointer}</style>
</head><body><main><h1>{{.Title}}</h1><p>{{.Text}}</p>
{{if .Button}}<form method="post"><button type="submit">{{.Button}}</button></form>{{end}}
</main></body></html>
`))

// Page is one page of a confirmation flow.
type Page struct {
	Title, Text string
	// Button, when set, is the label of the button that POSTs the form back
	// to the same URL (query string included).
	Button string
}

// Render writes p with status. The page is not cached and sends no
// referrer, since its URL holds the token.
func Render(w http.ResponseWriter, status int, p Page) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_ = page.Execute(w, p)
}

// Serve answers a confirmation link: GET and HEAD render prompt (which
// should have a Button), POST calls confirm, and other methods get 405. It
// reports whether confirm ran.
func Serve(w http.ResponseWriter, r *http.Request, prompt Page, confirm func()) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		Render(w, http.StatusOK, prompt)
		return false
	case http.MethodPost:
		confirm()
		return true
	}
	w.Header().Set("Allow", "GET, HEAD, POST")
	http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
	return false
}
