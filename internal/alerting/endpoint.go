package alerting

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	monitormodel "github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
)

// EndpointCheckTimeout bounds the connection-time check of a webhook
// endpoint (name resolution and the redirect probe together).
const EndpointCheckTimeout = 5 * time.Second

// maxEndpointRedirects is how many redirects the check follows to name the
// final URL.
const maxEndpointRedirects = 5

// EndpointError is a connection-time rejection of a webhook endpoint, with
// the message the API shows for the webhook_url field.
type EndpointError struct{ Message string }

func (e *EndpointError) Error() string { return e.Message }

// CheckWebhookEndpoint applies the connection-time rules of spec/webhooks.md
// that need the network to an https URL without credentials (the syntax
// rules and the private-address rule are admission's): its host must
// resolve, and the endpoint must not redirect, since deliveries do not
// follow redirects. A redirecting endpoint is refused with the URL the
// redirects end at, which is the one to use. The probe is a HEAD request
// through guard (dev mode's guard allows private addresses, and only
// there); an endpoint that cannot be reached at all is accepted, as it may
// simply be down for now, and its deliveries will report it.
func CheckWebhookEndpoint(ctx context.Context, raw string, guard netguard.Guard) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return nil // admission's syntax rules answer these
	}
	ctx, cancel := context.WithTimeout(ctx, EndpointCheckTimeout)
	defer cancel()
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err != nil {
		if _, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
			return &EndpointError{Message: monitormodel.UnresolvableHostMessage}
		}
	}
	hc := &http.Client{
		Transport: NewTransport(guard),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxEndpointRedirects {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u.String(), nil)
	if err != nil {
		return nil
	}
	req.Header.Set("User-Agent", alertevent.UserAgent)
	resp, err := hc.Do(req)
	final := ""
	switch {
	case err == nil:
		resp.Body.Close()
		if resp.Request.URL.String() != u.String() {
			final = resp.Request.URL.String()
		}
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			// Still redirecting after the hops followed (or without a
			// Location to follow): name the last hop.
			if loc, lerr := resp.Location(); lerr == nil {
				final = loc.String()
			} else if final == "" {
				return &EndpointError{Message: fmt.Sprintf("This endpoint redirects (HTTP %d); use the final URL", resp.StatusCode)}
			}
		}
	default:
		var uerr *url.Error
		if errors.As(err, &uerr) && uerr.URL != u.String() {
			// A later hop failed (refused by the guard, unreachable): the
			// endpoint itself still redirects there.
			final = uerr.URL
		}
	}
	if final == "" {
		return nil
	}
	return &EndpointError{Message: "This endpoint redirects to " + final + "; use the final URL"}
}
