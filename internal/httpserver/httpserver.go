package httpserver

import (
	"net/http"
	"time"
)

// Limits are the connection limits of a server. A zero field takes its
// value from Defaults.
type Limits struct {
	// ReadHeaderTimeout bounds reading the request line and headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading the whole request, body included.
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle for that long.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the size of the request line and headers.
	MaxHeaderBytes int
}

// Defaults are the limits of every server that does not set its own. A
// request body is at most 2 MB (monitoring-as-code plan and apply), which a
// slow client still sends well within ReadTimeout. IdleTimeout is longer
// than the 60 s idle timeout of common load balancers and ingress
// controllers, so that they, not the server, close an idle connection (a
// server closing first races the proxy's next request on it).
var Defaults = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	IdleTimeout:       90 * time.Second,
	MaxHeaderBytes:    128 << 10,
}

// withDefaults fills the zero fields of l from Defaults.
func (l Limits) withDefaults() Limits {
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = Defaults.ReadHeaderTimeout
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = Defaults.ReadTimeout
	}
	if l.ReadHeaderTimeout > l.ReadTimeout {
		l.ReadHeaderTimeout = l.ReadTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = Defaults.IdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = Defaults.MaxHeaderBytes
	}
	return l
}

// New returns a server of h with limits l (Defaults for its zero fields).
func New(h http.Handler, l Limits) *http.Server {
	l = l.withDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
}
