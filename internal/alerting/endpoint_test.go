package alerting

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// TestCheckWebhookEndpoint: spec/webhooks.md refuses, at connection time,
// an unresolvable host and an endpoint that redirects (naming the final
// URL), against real loopback HTTPS servers and the reserved .invalid TLD.
func TestCheckWebhookEndpoint(t *testing.T) {
	final := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer final.Close()
	redirecting := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hop":
			http.Redirect(w, r, "/last", http.StatusTemporaryRedirect)
		case "/last":
			http.Redirect(w, r, final.URL+"/hook", http.StatusPermanentRedirect)
		case "/always":
			http.Redirect(w, r, "/always", http.StatusTemporaryRedirect)
		default:
			w.WriteHeader(http.StatusTemporaryRedirect) // a 307 without Location
		}
	}))
	defer redirecting.Close()
	pool := x509.NewCertPool()
	pool.AddCert(final.Certificate())
	pool.AddCert(redirecting.Certificate())
	defer trust.Use(pool)()

	dev := netguard.Guard{AllowPrivate: true}
	ctx := context.Background()
	cases := []struct {
		name, url string
		guard     netguard.Guard
		want      string // substring of the rejection; "" = accepted
	}{
		{"unresolvable host", "https://no-such-host-29.invalid/hook", dev, "could not be resolved"},
		{"unresolvable host without dev mode", "https://no-such-host-29.invalid/hook", netguard.Guard{}, "could not be resolved"},
		{"307 with a Location", redirecting.URL + "/hop", dev, "redirects to " + final.URL + "/hook"},
		{"307 that never ends", redirecting.URL + "/always", dev, "redirects to " + redirecting.URL + "/always"},
		{"307 without a Location", redirecting.URL + "/bare", dev, "redirects (HTTP 307)"},
		{"an endpoint that answers", final.URL + "/hook", dev, ""},
		// Outside dev mode the guard refuses the loopback dial: admission
		// answers such a URL with the private-address message.
		{"private address outside dev mode", redirecting.URL + "/hop", netguard.Guard{}, ""},
		{"plain http is admission's", "http://no-such-host-29.invalid/hook", dev, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckWebhookEndpoint(ctx, tc.url, tc.guard)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ee *EndpointError
			if !errors.As(err, &ee) || !strings.Contains(ee.Message, tc.want) {
				t.Fatalf("got %v, want a rejection containing %q", err, tc.want)
			}
		})
	}
}
