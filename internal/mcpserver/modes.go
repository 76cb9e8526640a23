package mcpserver

import (
	"net/http"
	"strings"
)

// Kind is what a tool may do, which decides in which modes it is offered.
type Kind int

const (
	// KindRead never changes anything; always offered.
	KindRead Kind = iota
	// KindWrite changes something; hidden in read-only mode.
	KindWrite
	// KindDestructive deletes or replaces; offered only in destructive mode.
	KindDestructive
)

func (k Kind) String() string {
	switch k {
	case KindRead:
		return "read"
	case KindWrite:
		return "write"
	default:
		return "destructive"
	}
}

// Mode is the tool mode of one session or request.
type Mode struct {
	// ReadOnly offers only read tools.
	ReadOnly bool
	// Destructive offers every tool and allows publishing.
	Destructive bool
}

// Offers reports whether a tool of kind k is offered in mode m.
func (m Mode) Offers(k Kind) bool {
	switch k {
	case KindRead:
		return true
	case KindWrite:
		return !m.ReadOnly
	default:
		return m.Destructive && !m.ReadOnly
	}
}

// normalize applies "read-only wins over destructive mode".
func (m Mode) normalize() Mode {
	if m.ReadOnly {
		m.Destructive = false
	}
	return m
}

// String names the mode.
func (m Mode) String() string {
	switch {
	case m.ReadOnly:
		return "read-only"
	case m.Destructive:
		return "destructive"
	default:
		return "default"
	}
}

// Truthy reports whether v switches a mode on: true, 1, yes or on (any
// case, surrounding spaces ignored).
func Truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true
	}
	return false
}

// falsy reports whether v explicitly switches a mode off.
func falsy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "0", "no", "off":
		return true
	}
	return false
}

// Request headers that choose the mode of one HTTP request.
const (
	HeaderReadOnly           = "X-Service-Read-Only"
	HeaderAllowDestructive   = "X-Service-Allow-Destructive"
	destructiveRefusalSuffix = "is disabled on this MCP server: it needs destructive mode (SERVICE_ALLOW_DESTRUCTIVE=true)"
)

// baseMode is the mode the environment (the operator) sets.
func (o *Options) baseMode() Mode {
	return Mode{ReadOnly: o.ReadOnly, Destructive: o.AllowDestructive && !o.hosted}.normalize()
}

// requestMode is the mode of one HTTP request: the environment's mode,
// narrowed by the request's headers. A header can always narrow (to
// read-only, or destructive off); it can widen to destructive mode only when
// the operator set SERVICE_HTTP_ALLOW_DESTRUCTIVE_HEADER, and never on the
// hosted endpoint or over a read-only environment.
func (o *Options) requestMode(h http.Header) Mode {
	m := o.baseMode()
	if Truthy(h.Get(HeaderReadOnly)) {
		m.ReadOnly = true
	}
	d := h.Get(HeaderAllowDestructive)
	switch {
	case falsy(d):
		m.Destructive = false
	case Truthy(d) && o.AllowDestructiveHeader && !o.hosted:
		m.Destructive = true
	}
	return m.normalize()
}
