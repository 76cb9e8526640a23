package credentials

import (
	"strconv"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
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
	oa, okA := probeapi.Origin(a)
	ob, okB := probeapi.Origin(b)
	if !okA || !okB {
		return strings.TrimSpace(a) == strings.TrimSpace(b)
	}
	return oa == ob
}

// Moved says which header lists of a config a write moves to another
// origin: the top-level headers (the monitor's url) and, by position, the
// headers of multi-step steps (each step's url).
type Moved struct {
	// Headers is true when the monitor's url changes origin.
	Headers bool
	// Steps holds the positions of the steps whose url changes origin.
	Steps map[int]bool
}

// StepsMoved returns m with the steps of sent whose url has another origin
// than the stored step at the same position in cur.
func (m Moved) StepsMoved(sent, cur *probeapi.Config) Moved {
	if cur == nil {
		return m
	}
	for i := range sent.Steps {
		if i < len(cur.Steps) && !SameOrigin(sent.Steps[i].URL, cur.Steps[i].URL) {
			if m.Steps == nil {
				m.Steps = map[int]bool{}
			}
			m.Steps[i] = true
		}
	}
	return m
}

// DropHeaders empties hs, a stored header list a write keeps although its
// origin moved (the write did not send the list), and returns the paths of
// the dropped credentials. path is the list's REST path (config.headers).
func DropHeaders(hs probeapi.Headers, path string) (probeapi.Headers, []string) {
	var dropped []string
	for name, v := range hs {
		if v.SecretRef != nil || v.Value != "" {
			dropped = append(dropped, path+"."+name)
		}
	}
	return nil, dropped
}

// StepPath is the REST path of the headers of step i.
func StepPath(i int) string { return "config.steps[" + strconv.Itoa(i) + "].headers" }
