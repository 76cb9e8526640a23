package apiserver

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
func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request) {
	now := s.clock.Now()
	ip := core.ClientKey(r)
	if d := s.rt.Limits.HeartbeatFail.Peek(ip, now); !d.Allowed {
		s.rt.Limits.HeartbeatFail.Refuse(w, d)
		return
	}
	if d := s.rt.Limits.HeartbeatToken.Take(r.URL.Path, now); !d.Allowed {
		s.rt.Limits.HeartbeatToken.Refuse(w, d)
		return
	}
	fail := func(status int, code, msg string) {
		s.rt.Limits.HeartbeatFail.Take(ip, now)
		core.WriteError(w, status, code, msg)
	}
	// A bad parameter answers the specification's validation shape
	// (errors: [{field, message}]) like every other VALIDATION_ERROR.
	failField := func(field, msg string) {
		s.rt.Limits.HeartbeatFail.Take(ip, now)
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
		if err != nil || math.IsNaN(f) || f < 0 || f > maxJobDurationMs {
			failField("duration_ms", "duration_ms must be a number of milliseconds between 0 and 604800000 (7 days)")
			return
		}
		ms := int64(math.Round(f))
		p.DurationMs = &ms
	}
	if s.opts.Engine == nil {
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeInternal, "heartbeats cannot be recorded right now")
		return
	}
	err := s.opts.Engine.HeartbeatByToken(r.Context(), chi.URLParam(r, "token"), p)
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
func (s *Server) publicStatus(w http.ResponseWriter, r *http.Request) {
	slug, rest := chi.URLParam(r, "slug"), chi.URLParam(r, "rest")
	switch rest {
	case "", "history", "badge.svg", "feed.xml":
	default:
		core.WriteNotFound(w, "Page")
		return
	}
	if slug == "pages" || s.opts.Public == nil || !s.publicAllowed(w, r) {
		if slug == "pages" || s.opts.Public == nil {
			core.WriteNotFound(w, "Status page")
		}
		return
	}
	s.opts.Public.ServeStatus(w, r, slug, rest)
}

// publicHTML serves /s/{slug}.
func (s *Server) publicHTML(w http.ResponseWriter, r *http.Request) {
	if s.opts.Public == nil {
		core.WriteNotFound(w, "Status page")
		return
	}
	if s.publicAllowed(w, r) {
		s.opts.Public.ServeHTML(w, r, chi.URLParam(r, "slug"))
	}
}

// publicAllowed counts a public status request against its address's 60 per
// minute; it writes the 429 and returns false when over.
func (s *Server) publicAllowed(w http.ResponseWriter, r *http.Request) bool {
	d := s.rt.Limits.Public.Take(core.ClientKey(r), s.clock.Now())
	if !d.Allowed {
		s.rt.Limits.Public.Refuse(w, d)
		return false
	}
	ratelimit.SetHeaders(w, d)
	return true
}

// publicForm serves one of a status page's forms (sign-in, subscriptions)
// under the public rate limit.
func (s *Server) publicForm(serve func(PublicStatus, http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Public == nil {
			core.WriteNotFound(w, "Status page")
			return
		}
		if s.publicAllowed(w, r) {
			serve(s.opts.Public, w, r, chi.URLParam(r, "slug"))
		}
	}
}
