package probeapi

import (
	"net"
	"net/url"
	"strings"
)

// A credential goes only to the origin it was stored for.
//
// The manager resolves header values from Secrets before it assigns a
// monitor, so agents hold credentials as text. Assignment.Credentials names
// those headers with the origin (scheme, host, port) each was stored for,
// and the agent attaches one only to a request whose origin, as sent (after
// {{variable}} templating, after each redirect), is that origin. A target
// that moves elsewhere (a redirect to a CDN or login host, a multistep URL
// built from an earlier response) never receives it.

// Credential is a header of an assignment whose value the manager read
// from a Secret, with the origin it is bound to.
type Credential struct {
	// Step is the position of the multistep step whose headers hold the
	// credential; absent for config.headers (http, api and mcp monitors).
	Step *int `json:"step,omitempty"`
	// Header is the header's name as in the config, or for an entry of a
	// multistep step's secrets its variable written as {{name}}
	// (SecretVariable), which no header name can be.
	Header string `json:"header"`
	// Origin is "scheme://host:port", the origin of the URL the credential
	// was stored with. Empty when that URL has no fixed origin (a
	// {{variable}} in its scheme, host or port): the credential is then
	// sent nowhere.
	Origin string `json:"origin"`
}

// SecretVariable is how a Credential names an entry of a multistep step's
// secrets: the reference the step writes for it, {{name}}.
func SecretVariable(name string) string { return "{{" + name + "}}" }

// Origin returns the origin of an absolute http or https URL as
// "scheme://host:port", lower case, with the default port written out; ok
// is false for text that is not such a URL (a URL whose host is a
// {{variable}}).
func Origin(raw string) (origin string, ok bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", false
	}
	return URLOrigin(u)
}

// URLOrigin is Origin of a parsed URL.
func URLOrigin(u *url.URL) (string, bool) {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	def := DefaultPort(scheme)
	if def == "" {
		return "", false
	}
	if port == "" {
		port = def
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", false
	}
	return scheme + "://" + net.JoinHostPort(host, port), true
}

// DefaultPort is the port of an http or https URL that names none; empty
// for other schemes.
func DefaultPort(scheme string) string {
	switch scheme {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// Bound returns the credential headers of one header list of a, by name,
// with their origins: step is the multistep step's position, or -1 for
// config.headers. The result is nil when the list holds none.
func (a *Assignment) Bound(step int) map[string]string {
	var out map[string]string
	for _, c := range a.Credentials {
		if (c.Step == nil) != (step < 0) || (c.Step != nil && *c.Step != step) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[c.Header] = c.Origin
	}
	return out
}
