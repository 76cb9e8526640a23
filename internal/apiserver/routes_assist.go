package apiserver

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// CodeAIUnavailable answers a generation when no model is configured or the
// model endpoint failed (not a code of the specification).
const CodeAIUnavailable = "AI_UNAVAILABLE"

// registerAssistRoutes registers the AI incident assist endpoints. Every one
// needs the ai-assist plan feature; generations count 30 per 10 minutes per
// workspace and toward the monthly allowance. a may be nil or have no model:
// the status then reports the features unavailable and generations answer
// 503 AI_UNAVAILABLE, while saved content can still be read, edited,
// published and discarded.
func (s *Server) registerAssistRoutes(a *assist.Service) {
	feature := withFeature(monv1.FeatureAIAssist)
	drafts := withLimit(newLimiter("ai-drafts", 30, 10*time.Minute, perWorkspace, ratelimit.JSON))
	get, post, patch := http.MethodGet, http.MethodPost, http.MethodPatch
	s.handle(get, "/incident-comms/status", s.assistStatus(a), feature)
	s.handle(get, "/incident-comms/incidents/{id}", s.assistSaved(a), feature)
	s.handle(post, "/incident-comms/incidents/{id}/summary", s.assistSummary(a), feature, drafts)
	s.handle(post, "/incident-comms/incidents/{id}/postmortem/generate", s.assistPostmortem(a), feature, drafts)
	s.handle(post, "/incident-comms/incidents/{id}/status-updates", s.assistStatusUpdate(a), feature, drafts)
	s.handle(patch, "/incident-comms/status-updates/{draftId}", s.editDraft, feature)
	s.handle(post, "/incident-comms/status-updates/{draftId}/publish", s.publishDraft, feature)
	s.handle(post, "/incident-comms/status-updates/{draftId}/discard", s.discardDraft, feature)
}

func (s *Server) assistStatus(a *assist.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		svc := a
		if svc == nil {
			svc = &assist.Service{Store: s.opts.Store, Now: s.clock.Now}
		}
		st, err := svc.Status(r.Context(), CallerFrom(r.Context()).Namespace)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		httpjson.Write(w, http.StatusOK, st)
	}
}

// pathDraft finds the draft of the {draftId} path value in the caller's
// workspace.
func (s *Server) pathDraft(w http.ResponseWriter, r *http.Request) (store.AIDraft, bool) {
	d, err := s.opts.Store.GetAIDraft(r.Context(), chi.URLParam(r, "draftId"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && d.Namespace != CallerFrom(r.Context()).Namespace) {
		writeNotFound(w, "Status update draft")
		return d, false
	}
	if err != nil {
		s.writeErr(w, r, err)
		return d, false
	}
	return d, true
}

func (s *Server) assistSaved(a *assist.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		inc := s.pathIncident(w, r)
		if inc == nil {
			return
		}
		svc := a
		if svc == nil {
			svc = &assist.Service{Store: s.opts.Store}
		}
		saved, err := svc.Saved(r.Context(), inc.ID)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		httpjson.Write(w, http.StatusOK, saved)
	}
}

// generation runs gen for the incident of the request after the body was
// decoded into body (nil: no body) and validated by check.
func (s *Server) generation(a *assist.Service, body any, check func() []FieldError,
	gen func(ctx context.Context, inc store.Incident) (any, error), status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		inc := s.pathIncident(w, r)
		if inc == nil {
			return
		}
		if body != nil {
			if err := decodeJSON(r, body, true); err != nil {
				s.writeErr(w, r, err)
				return
			}
		}
		if check != nil {
			if errs := check(); len(errs) > 0 {
				writeValidation(w, errs...)
				return
			}
		}
		if !a.Available() {
			writeError(w, http.StatusServiceUnavailable, CodeAIUnavailable, assist.ErrUnavailable.Error())
			return
		}
		out, err := gen(r.Context(), *inc)
		if err != nil {
			s.writeErr(w, r, assistError(err))
			return
		}
		httpjson.Write(w, status, out)
	}
}

// assistError maps the assist's errors to answers.
func assistError(err error) error {
	var ae *assist.AllowanceError
	var pe *assist.ProviderError
	switch {
	case errors.As(err, &ae):
		return &apiError{Status: http.StatusForbidden, Body: ErrorBody{Error: ae.Error(), Code: CodeEntitlementLimit,
			Details: map[string]any{"resource": "ai_generations", "current": ae.Used, "limit": ae.Limit, "period": ae.Period}}}
	case errors.Is(err, assist.ErrPostmortemExists):
		return newAPIError(http.StatusConflict, CodeConflict, err.Error())
	case errors.Is(err, assist.ErrUnavailable):
		return newAPIError(http.StatusServiceUnavailable, CodeAIUnavailable, err.Error())
	case errors.As(err, &pe):
		return newAPIError(http.StatusServiceUnavailable, CodeAIUnavailable, "the AI model could not write this: "+pe.Error())
	case errors.Is(err, store.ErrNotFound):
		return errNotFound
	}
	return err
}

func (s *Server) assistSummary(a *assist.Service) http.HandlerFunc {
	return s.generation(a, nil, nil, func(ctx context.Context, inc store.Incident) (any, error) {
		return a.Summary(ctx, inc)
	}, http.StatusOK)
}

func (s *Server) assistPostmortem(a *assist.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Overwrite bool `json:"overwrite"`
		}
		s.generation(a, &b, nil, func(ctx context.Context, inc store.Incident) (any, error) {
			return a.Postmortem(ctx, inc, b.Overwrite)
		}, http.StatusOK)(w, r)
	}
}

func (s *Server) assistStatusUpdate(a *assist.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Phase    string `json:"phase"`
			Guidance string `json:"guidance"`
		}
		check := func() []FieldError {
			var errs []FieldError
			if b.Phase != "" && !assist.ValidPhase(b.Phase) {
				errs = append(errs, fieldErr("phase", "must be one of %s", strings.Join(assist.Phases, ", ")))
			}
			if utf8.RuneCountInString(b.Guidance) > assist.MaxGuidance {
				errs = append(errs, fieldErr("guidance", "must be at most %d characters", assist.MaxGuidance))
			}
			return errs
		}
		s.generation(a, &b, check, func(ctx context.Context, inc store.Incident) (any, error) {
			return a.StatusUpdate(ctx, inc, b.Phase, strings.TrimSpace(b.Guidance))
		}, http.StatusCreated)(w, r)
	}
}

// draftStateError maps a draft that is no longer open to 409.
func draftStateError(err error, d store.AIDraft) error {
	if errors.Is(err, store.ErrDraftState) {
		return newAPIError(http.StatusConflict, CodeConflict, "the status update was already "+string(d.Status)+"; only drafts can change")
	}
	if errors.Is(err, store.ErrNotFound) {
		return errNotFound
	}
	return err
}

func (s *Server) editDraft(w http.ResponseWriter, r *http.Request) {
	d, ok := s.pathDraft(w, r)
	if !ok {
		return
	}
	var b struct {
		Body  *string `json:"body"`
		Phase *string `json:"phase"`
	}
	if err := decodeJSON(r, &b, true); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var errs []FieldError
	if b.Body != nil {
		n := utf8.RuneCountInString(strings.TrimSpace(*b.Body))
		if n == 0 || n > assist.MaxStatusUpdate {
			errs = append(errs, fieldErr("body", "must be 1-%d characters", assist.MaxStatusUpdate))
		}
	}
	if b.Phase != nil && !assist.ValidPhase(*b.Phase) {
		errs = append(errs, fieldErr("phase", "must be one of %s", strings.Join(assist.Phases, ", ")))
	}
	if b.Body == nil && b.Phase == nil {
		errs = append(errs, fieldErr("body", "send body, phase or both"))
	}
	if len(errs) > 0 {
		writeValidation(w, errs...)
		return
	}
	if d.Status != store.AIDraftOpen {
		s.writeErr(w, r, draftStateError(store.ErrDraftState, d))
		return
	}
	if b.Body != nil {
		d.Body = strings.TrimSpace(*b.Body)
	}
	if b.Phase != nil {
		d.Phase = *b.Phase
	}
	out, err := s.opts.Store.UpdateAIDraft(r.Context(), d, store.AIDraftOpen)
	if err != nil {
		s.writeErr(w, r, draftStateError(err, out))
		return
	}
	httpjson.Write(w, http.StatusOK, out)
}

// publishDraft publishes a draft as a public note of its incident (a status
// page update).
func (s *Server) publishDraft(w http.ResponseWriter, r *http.Request) {
	d, ok := s.pathDraft(w, r)
	if !ok {
		return
	}
	out, note, err := s.opts.Store.PublishAIDraft(r.Context(), d.ID, CallerFrom(r.Context()).Name(), s.clock.Now())
	if err != nil {
		if errors.Is(err, store.ErrDraftState) {
			out = d
			if cur, gerr := s.opts.Store.GetAIDraft(r.Context(), d.ID); gerr == nil {
				out = cur
			}
		}
		s.writeErr(w, r, draftStateError(err, out))
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.PublishedDraft{Draft: out, Note: note})
}

func (s *Server) discardDraft(w http.ResponseWriter, r *http.Request) {
	d, ok := s.pathDraft(w, r)
	if !ok {
		return
	}
	if d.Status != store.AIDraftOpen {
		s.writeErr(w, r, draftStateError(store.ErrDraftState, d))
		return
	}
	d.Status = store.AIDraftDiscarded
	out, err := s.opts.Store.UpdateAIDraft(r.Context(), d, store.AIDraftOpen)
	if err != nil {
		s.writeErr(w, r, draftStateError(err, out))
		return
	}
	httpjson.Write(w, http.StatusOK, out)
}
