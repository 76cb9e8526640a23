package credentials

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
)

// A credential stays with its origin.
//
// A stored credential (a header value shown as [REDACTED], or a header read
// from a Secret) was given for one target. A write that moves the target to
// another origin (scheme, host, port) and does not send the credential
// again drops it, so whoever may change a monitor's URL cannot have the
// stored credential sent to a server of their own; browsers drop
// Authorization on a cross-origin redirect for the same reason. The write
// answers which headers it dropped (REST: the monitor's "warnings").

// SameOrigin reports whether URLs a and b have the same scheme, host and
// port (a default port written out or not is the same). Text that does not
// parse as an absolute URL (a multistep URL made of {{variables}}) is
// compared as written.
func SameOrigin(a, b string) bool {
	oa, okA := origin(a)
	ob, okB := origin(b)
	if !okA || !okB {
		return strings.TrimSpace(a) == strings.TrimSpace(b)
	}
	return oa == ob
}

func origin(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}

// Moved says which header lists of a config a write moves to another
// origin: the lists of the config struct itself (sent to the monitor's url)
// and, by wire path, the lists of nested structs with their own url (each
// multi-step step's).
type Moved struct {
	// Headers is true when the monitor's url changes origin.
	Headers bool
	// Lists holds the wire paths (steps[1].headers) of the nested lists
	// whose url changes origin.
	Lists map[string]bool
}

func (m Moved) moved(l monitorconfig.HeaderList) bool {
	if l.URL == "" && !strings.Contains(l.Path, ".") {
		return m.Headers
	}
	return m.Lists[l.Path]
}

// StepsMoved returns m with the nested header lists of sent (those of
// multi-step steps) whose url has another origin than the stored list at
// the same place in cur.
func (m Moved) StepsMoved(sent, cur *monv1.MonitorSpec) Moved {
	if cur == nil {
		return m
	}
	was := map[string]string{}
	for _, l := range monitorconfig.HeaderLists(cur) {
		was[l.Path] = l.URL
	}
	for _, l := range monitorconfig.HeaderLists(sent) {
		if u, ok := was[l.Path]; ok && strings.Contains(l.Path, ".") && !SameOrigin(l.URL, u) {
			if m.Lists == nil {
				m.Lists = map[string]bool{}
			}
			m.Lists[l.Path] = true
		}
	}
	return m
}

// DropHeaders empties hs, a stored header list a write keeps although its
// origin moved (the write did not send the list), and returns the paths of
// the dropped credentials. path is the list's REST path (config.headers).
func DropHeaders(hs []monv1.HTTPHeader, path string) ([]monv1.HTTPHeader, []string) {
	var dropped []string
	for _, h := range hs {
		if h.ValueFrom != nil || (h.Value != nil && *h.Value != "") {
			dropped = append(dropped, path+"."+h.Name)
		}
	}
	return nil, dropped
}

// StepPath is the REST path of the headers of step i.
func StepPath(i int) string { return "config.steps[" + strconv.Itoa(i) + "].headers" }
