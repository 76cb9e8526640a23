package confirmlink

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestServe(t *testing.T) {
	prompt := Page{Title: "Confirm <it>", Text: "Sure?", Button: "Confirm"}
	for _, c := range []struct {
		method    string
		confirmed bool
		code      int
	}{{http.MethodGet, false, 200}, {http.MethodHead, false, 200}, {http.MethodPost, true, 204}, {http.MethodPut, false, 405}} {
		w := httptest.NewRecorder()
		ran := Serve(w, httptest.NewRequest(c.method, "/confirm?token=t", nil), prompt, func() { w.WriteHeader(http.StatusNoContent) })
		if ran != c.confirmed || w.Code != c.code {
			t.Errorf("%s: confirmed=%v code=%d, want %v %d", c.method, ran, w.Code, c.confirmed, c.code)
		}
		if c.method == http.MethodGet {
			body := w.Body.String()
			if !strings.Contains(body, `<form method="post"><button type="submit">Confirm</button>`) || !strings.Contains(body, "Confirm &lt;it&gt;") {
				t.Errorf("prompt page: %s", body)
			}
			if w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("headers: %v", w.Header())
			}
		}
	}
}
