package public

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
)

// Public endpoints: the token in a heartbeat URL is its credential, and
// status pages need none. They are not subject to the CORS rule of the
// authenticated API (status pages are read by browsers).

// heartbeatFailure lists the status values that report a failed run.
var heartbeatFailure = map[string]bool{"fail": true, "failure": true, "failed": true, "down": true, "error": true, "err": true}

// heartbeatSuccess lists the status values that report a successful run.
var heartbeatSuccess = map[string]bool{"": true, "ok": true, "success": true, "succeeded": true, "successful": true,
	"up": true, "pass": true, "passed": true, "done": true, "complete": true, "completed": true}

// heartbeat answers GET, POST and HEAD /heartbeat/{token}: 200 `OK` (also for
// paused monitors, whose pings are ignored), 404 for an unknown token, 400
// for a bad parameter. Request bodies are ignored.
func (h *Handlers) heartbeat(w http.ResponseWriter, r *http.Request) {
	now := h.clock.Now()
	ip := core.ClientKey(r)
	if d := h.limits.HeartbeatFail.Peek(ip, now); !d.Allowed {
		h.limits.HeartbeatFail.Refuse(w, d)
		return
	}
	if d := h.limits.HeartbeatToken.Take(r.URL.Path, now); !d.Allowed {
		h.limits.HeartbeatToken.Refuse(w, d)
		return
	}
	fail := func(status int, code, msg string) {
		h.limits.HeartbeatFail.Take(ip, now)
		core.WriteError(w, status, code, msg)
	}
	// A bad parameter answers the specification's validation shape
	// (errors: [{field, message}]) like every other VALIDATION_ERROR.
	failField := func(field, msg string) {
		h.limits.HeartbeatFail.Take(ip, now)
		core.WriteValidation(w, core.FieldErr(field, "%s", msg))
	}
	q := r.URL.Query()
	p := engine.Ping{OK: true, At: now}
	status := strings.ToLower(strings.TrimSpace(q.Get("status")))
	switch {
	case heartbeatFailure[status]:
		p.OK = false
	case !heartbeatSuccess[status]:
		failField("status", "status must be ok or one of fail, failure, failed, down, error, err")
		return
	}
	if v := q.Get("duration_ms"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > core.MaxJobDurationMs {
			failField("duration_ms", "duration_ms must be a number of milliseconds between 0 and 604800000 (7 days)")
			return
		}
		ms := int64(math.Round(f))
		p.DurationMs = &ms
	}
	if h.engine == nil {
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeInternal, "heartbeats cannot be recorded right now")
		return
	}
	err := h.engine.HeartbeatByToken(r.Context(), chi.URLParam(r, "token"), p)
	switch {
	case errors.Is(err, engine.ErrUnknownToken):
		fail(http.StatusNotFound, core.CodeNotFound, "unknown heartbeat URL")
		return
	case err != nil:
		core.WriteErr(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte("OK"))
	}
}

// publicStatus serves /status/{slug} and /status/{slug}/{rest}.
func (h *Handlers) publicStatus(w http.ResponseWriter, r *http.Request) {
	slug, rest := chi.URLParam(r, "slug"), chi.URLParam(r, "rest")
	switch rest {
	case "", "history", "badge.svg", "feed.xml":
	default:
		core.WriteNotFound(w, "Page")
		return
	}
	if slug == "pages" || h.public == nil || !h.publicAllowed(w, r) {
		if slug == "pages" || h.public == nil {
			core.WriteNotFound(w, "Status page")
		}
		return
	}
	h.public.ServeStatus(w, r, slug, rest)
}

// publicHTML serves /s/{slug}.
func (h *Handlers) publicHTML(w http.ResponseWriter, r *http.Request) {
	if h.public == nil {
		core.WriteNotFound(w, "Status page")
		return
	}
	if h.publicAllowed(w, r) {
		h.public.ServeHTML(w, r, chi.URLParam(r, "slug"))
	}
}

// ssoCallback serves the single sign-on redirect URI.
func (h *Handlers) ssoCallback(w http.ResponseWriter, r *http.Request) {
	if h.public == nil {
		core.WriteNotFound(w, "Status page")
		return
	}
	if h.publicAllowed(w, r) {
		h.public.ServeSSOCallback(w, r)
	}
}

// publicAllowed counts a public status request against its address's 60 per
// minute; it writes the 429 and returns false when over.
func (h *Handlers) publicAllowed(w http.ResponseWriter, r *http.Request) bool {
	d := h.limits.Public.Take(core.ClientKey(r), h.clock.Now())
	if !d.Allowed {
		h.limits.Public.Refuse(w, d)
		return false
	}
	ratelimit.SetHeaders(w, d)
	return true
}

// publicForm serves one of a status page's forms (sign-in, subscriptions)
// under the public rate limit.
func (h *Handlers) publicForm(serve func(Status, http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.public == nil {
			core.WriteNotFound(w, "Status page")
			return
		}
		if h.publicAllowed(w, r) {
			serve(h.public, w, r, chi.URLParam(r, "slug"))
		}
	}
}
