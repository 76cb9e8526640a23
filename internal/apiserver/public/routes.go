package public

import (
	"context"
	"net/http"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"k8s.io/utils/clock"
)

// Status serves the public status page endpoints. rest is "",
// "history", "badge.svg" or "feed.xml".
type Status interface {
	ServeStatus(w http.ResponseWriter, r *http.Request, slug, rest string)
	ServeHTML(w http.ResponseWriter, r *http.Request, slug string)
	// The page's forms: password sign-in and subscriptions.
	ServeLogin(w http.ResponseWriter, r *http.Request, slug string)
	ServeSubscribe(w http.ResponseWriter, r *http.Request, slug string)
	ServeConfirm(w http.ResponseWriter, r *http.Request, slug string)
	ServeUnsubscribe(w http.ResponseWriter, r *http.Request, slug string)
}

// HeartbeatRecorder records the ping of a cron monitor by its token
// (the engine).
type HeartbeatRecorder interface {
	// HeartbeatByToken records a ping for the cron monitor owning token;
	// engine.ErrUnknownToken when none does.
	HeartbeatByToken(ctx context.Context, token string, p engine.Ping) error
}

// Handlers serve the endpoints that need no API key: the token in a
// heartbeat URL is its credential, and status pages need none.
type Handlers struct {
	clock clock.PassiveClock
	// engine records pings; nil answers 503.
	engine HeartbeatRecorder
	// public serves the pages; nil answers 404.
	public Status
	// limits are the router's (heartbeat and public page rows); Routes
	// sets them.
	limits *core.Limits
}

// New returns the handlers; engine and pages may be nil.
func New(clk clock.PassiveClock, engine HeartbeatRecorder, pages Status) *Handlers {
	return &Handlers{clock: clk, engine: engine, public: pages}
}

// Routes registers /heartbeat/{token}, /status/{slug} and the HTML page
// /s/{slug} with its forms. They are not subject to the CORS rule of the
// authenticated API (status pages are read by browsers).
func (h *Handlers) Routes(rt *core.Router) {
	h.limits = rt.Limits
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodHead} {
		rt.Mux.Method(m, "/heartbeat/{token}", http.HandlerFunc(h.heartbeat))
	}
	rt.Mux.Get("/status/{slug}", h.publicStatus)
	rt.Mux.Get("/status/{slug}/{rest}", h.publicStatus)
	rt.Mux.Get("/s/{slug}", h.publicHTML)
	rt.Mux.Post("/s/{slug}/login", h.publicForm(Status.ServeLogin))
	rt.Mux.Post("/s/{slug}/subscribe", h.publicForm(Status.ServeSubscribe))
	rt.Mux.Get("/s/{slug}/confirm", h.publicForm(Status.ServeConfirm))
	rt.Mux.Post("/s/{slug}/confirm", h.publicForm(Status.ServeConfirm))
	rt.Mux.Get("/s/{slug}/unsubscribe", h.publicForm(Status.ServeUnsubscribe))
	rt.Mux.Post("/s/{slug}/unsubscribe", h.publicForm(Status.ServeUnsubscribe))
}
