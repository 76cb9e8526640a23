package incidentcomms

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"k8s.io/utils/clock"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// CodeAIUnavailable answers a generation when no model is configured or the
// model endpoint failed (not a code of the specification).
const CodeAIUnavailable = "AI_UNAVAILABLE"

// Store is what the incident communication endpoints read and write in the
// history store besides what the assist itself needs: the incident and the
// status update drafts people review.
type Store interface {
	assist.Store
	core.IncidentGetter
	GetAIDraft(ctx context.Context, id string) (store.AIDraft, error)
	UpdateAIDraft(ctx context.Context, d store.AIDraft, from store.AIDraftStatus) (store.AIDraft, error)
	PublishAIDraft(ctx context.Context, id, author string, at time.Time) (store.AIDraft, store.Note, error)
}

// PublishedDraft is declared here, not in internal/restapi, because both
// parts are store records sent as they are (restapi is below the store).

// PublishedDraft is POST /incident-comms/status-updates/:draftId/publish:
// the published draft and the public incident note it became.
type PublishedDraft struct {
	Draft store.AIDraft `json:"draft"`
	Note  store.Note    `json:"note"`
}

// Handlers serve /incident-comms: AI-written incident summaries,
// postmortems and status update drafts, reviewed and published by people.
type Handlers struct {
	st    Store
	clock clock.PassiveClock
	// a is the AI assist; nil or without a model reports the features
	// unavailable.
	a *assist.Service
}

// New returns the handlers; a may be nil.
func New(st Store, clk clock.PassiveClock, a *assist.Service) *Handlers {
	return &Handlers{st: st, clock: clk, a: a}
}

// Routes registers the AI incident assist endpoints. Every one needs the
// ai-assist plan feature; generations count 30 per 10 minutes per
// workspace and toward the monthly allowance. Without a model the status
// reports the features unavailable and generations answer 503
// AI_UNAVAILABLE, while saved content can still be read, edited, published
// and discarded.
func (h *Handlers) Routes(rt *core.Router) {
	a := h.a
	feature := core.WithFeature(monv1.FeatureAIAssist)
	drafts := core.WithLimit(core.NewLimiter("ai-drafts", 30, 10*time.Minute, core.PerWorkspace, ratelimit.JSON))
	get, post, patch := http.MethodGet, http.MethodPost, http.MethodPatch
	rt.Handle(get, "/incident-comms/status", h.status(a), feature, core.Doc(apidoc.Op{
		Tag:     "AI incident assist",
		Summary: "Features available and remaining allowance",
		Resp:    assist.Status{},
	}))
	rt.Handle(get, "/incident-comms/incidents/{id}", h.saved(a), feature, core.Doc(apidoc.Op{Tag: "AI incident assist", Summary: "Saved AI content of an incident", Resp: assist.Saved{}}))
	rt.Handle(post, "/incident-comms/incidents/{id}/summary", h.summary(a), feature, drafts, core.Doc(apidoc.Op{
		Tag:     "AI incident assist",
		Summary: "Generate a summary",
		Resp:    store.AIContent{},
		Extra:   []int{503},
	}))
	rt.Handle(post, "/incident-comms/incidents/{id}/postmortem/generate", h.postmortem(a), feature, drafts, core.Doc(apidoc.Op{
		Tag:          "AI incident assist",
		Summary:      "Generate a postmortem",
		Body:         restapi.Overwrite{},
		BodyOptional: true,
		Resp:         store.AIContent{},
		Extra:        []int{409, 503},
	}))
	rt.Handle(post, "/incident-comms/incidents/{id}/status-updates", h.statusUpdate(a), feature, drafts, core.Doc(apidoc.Op{
		Tag:          "AI incident assist",
		Summary:      "Draft a status update",
		Body:         restapi.DraftRequest{},
		BodyOptional: true,
		Status:       201,
		Resp:         store.AIDraft{},
		Extra:        []int{503},
	}))
	rt.Handle(patch, "/incident-comms/status-updates/{draftId}", h.editDraft, feature, core.Doc(apidoc.Op{
		Tag:     "AI incident assist",
		Summary: "Edit a draft",
		Body:    restapi.DraftEdit{},
		Resp:    store.AIDraft{},
		Extra:   []int{409},
	}))
	rt.Handle(post, "/incident-comms/status-updates/{draftId}/publish", h.publishDraft, feature, core.Doc(apidoc.Op{
		Tag:     "AI incident assist",
		Summary: "Publish a draft as a public incident note",
		Resp:    PublishedDraft{},
		Extra:   []int{409},
	}))
	rt.Handle(post, "/incident-comms/status-updates/{draftId}/discard", h.discardDraft, feature, core.Doc(apidoc.Op{Tag: "AI incident assist", Summary: "Discard a draft", Resp: store.AIDraft{}, Extra: []int{409}}))
}

func (h *Handlers) status(a *assist.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		svc := a
		if svc == nil {
			svc = &assist.Service{Store: h.st, Now: h.clock.Now}
		}
		st, err := svc.Status(r.Context(), core.CallerFrom(r.Context()).Namespace)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		httpjson.Write(w, http.StatusOK, st)
	}
}

// pathDraft finds the draft of the {draftId} path value in the caller's
// workspace.
func (h *Handlers) pathDraft(w http.ResponseWriter, r *http.Request) (store.AIDraft, bool) {
	d, err := h.st.GetAIDraft(r.Context(), chi.URLParam(r, "draftId"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && d.Namespace != core.CallerFrom(r.Context()).Namespace) {
		core.WriteNotFound(w, "Status update draft")
		return d, false
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return d, false
	}
	return d, true
}

func (h *Handlers) saved(a *assist.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		inc := core.PathIncident(w, r, h.st)
		if inc == nil {
			return
		}
		svc := a
		if svc == nil {
			svc = &assist.Service{Store: h.st}
		}
		saved, err := svc.Saved(r.Context(), inc.ID)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		httpjson.Write(w, http.StatusOK, saved)
	}
}

// generation runs gen for the incident of the request after the body was
// decoded into body (nil: no body) and validated by check.
func (h *Handlers) generation(a *assist.Service, body any, check func() []core.FieldError,
	gen func(ctx context.Context, inc store.Incident) (any, error), status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		inc := core.PathIncident(w, r, h.st)
		if inc == nil {
			return
		}
		if body != nil {
			if err := core.DecodeJSON(r, body, true); err != nil {
				core.WriteErr(w, r, err)
				return
			}
		}
		if check != nil {
			if errs := check(); len(errs) > 0 {
				core.WriteValidation(w, errs...)
				return
			}
		}
		if !a.Available() {
			core.WriteError(w, http.StatusServiceUnavailable, CodeAIUnavailable, assist.ErrUnavailable.Error())
			return
		}
		out, err := gen(r.Context(), *inc)
		if err != nil {
			core.WriteErr(w, r, assistError(err))
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
		return &core.Error{Status: http.StatusForbidden, Body: core.ErrorBody{Error: ae.Error(), Code: core.CodeEntitlementLimit,
			Details: map[string]any{"resource": "ai_generations", "current": ae.Used, "limit": ae.Limit, "period": ae.Period}}}
	case errors.Is(err, assist.ErrPostmortemExists):
		return core.NewError(http.StatusConflict, core.CodeConflict, err.Error())
	case errors.Is(err, assist.ErrUnavailable):
		return core.NewError(http.StatusServiceUnavailable, CodeAIUnavailable, err.Error())
	case errors.As(err, &pe):
		return core.NewError(http.StatusServiceUnavailable, CodeAIUnavailable, "the AI model could not write this: "+pe.Error())
	case errors.Is(err, store.ErrNotFound):
		return core.ErrNotFound
	}
	return err
}

func (h *Handlers) summary(a *assist.Service) http.HandlerFunc {
	return h.generation(a, nil, nil, func(ctx context.Context, inc store.Incident) (any, error) {
		return a.Summary(ctx, inc)
	}, http.StatusOK)
}

func (h *Handlers) postmortem(a *assist.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b restapi.Overwrite
		h.generation(a, &b, nil, func(ctx context.Context, inc store.Incident) (any, error) {
			return a.Postmortem(ctx, inc, b.Overwrite)
		}, http.StatusOK)(w, r)
	}
}

func (h *Handlers) statusUpdate(a *assist.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b restapi.DraftRequest
		check := func() []core.FieldError {
			var errs []core.FieldError
			if b.Phase != "" && !assist.ValidPhase(b.Phase) {
				errs = append(errs, core.FieldErr("phase", "must be one of %s", strings.Join(assist.Phases, ", ")))
			}
			if utf8.RuneCountInString(b.Guidance) > assist.MaxGuidance {
				errs = append(errs, core.FieldErr("guidance", "must be at most %d characters", assist.MaxGuidance))
			}
			return errs
		}
		h.generation(a, &b, check, func(ctx context.Context, inc store.Incident) (any, error) {
			return a.StatusUpdate(ctx, inc, b.Phase, strings.TrimSpace(b.Guidance))
		}, http.StatusCreated)(w, r)
	}
}

// draftStateError maps a draft that is no longer open to 409.
func draftStateError(err error, d store.AIDraft) error {
	if errors.Is(err, store.ErrDraftState) {
		return core.NewError(http.StatusConflict, core.CodeConflict, "the status update was already "+string(d.Status)+"; only drafts can change")
	}
	if errors.Is(err, store.ErrNotFound) {
		return core.ErrNotFound
	}
	return err
}

func (h *Handlers) editDraft(w http.ResponseWriter, r *http.Request) {
	d, ok := h.pathDraft(w, r)
	if !ok {
		return
	}
	var b restapi.DraftEdit
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	var errs []core.FieldError
	if b.Body != nil {
		n := utf8.RuneCountInString(strings.TrimSpace(*b.Body))
		if n == 0 || n > assist.MaxStatusUpdate {
			errs = append(errs, core.FieldErr("body", "must be 1-%d characters", assist.MaxStatusUpdate))
		}
	}
	if b.Phase != nil && !assist.ValidPhase(*b.Phase) {
		errs = append(errs, core.FieldErr("phase", "must be one of %s", strings.Join(assist.Phases, ", ")))
	}
	if b.Body == nil && b.Phase == nil {
		errs = append(errs, core.FieldErr("body", "send body, phase or both"))
	}
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	if d.Status != store.AIDraftOpen {
		core.WriteErr(w, r, draftStateError(store.ErrDraftState, d))
		return
	}
	if b.Body != nil {
		d.Body = strings.TrimSpace(*b.Body)
	}
	if b.Phase != nil {
		d.Phase = *b.Phase
	}
	out, err := h.st.UpdateAIDraft(r.Context(), d, store.AIDraftOpen)
	if err != nil {
		core.WriteErr(w, r, draftStateError(err, out))
		return
	}
	httpjson.Write(w, http.StatusOK, out)
}

// publishDraft publishes a draft as a public note of its incident (a status
// page update).
func (h *Handlers) publishDraft(w http.ResponseWriter, r *http.Request) {
	d, ok := h.pathDraft(w, r)
	if !ok {
		return
	}
	out, note, err := h.st.PublishAIDraft(r.Context(), d.ID, core.CallerFrom(r.Context()).Name(), h.clock.Now())
	if err != nil {
		if errors.Is(err, store.ErrDraftState) {
			out = d
			if cur, gerr := h.st.GetAIDraft(r.Context(), d.ID); gerr == nil {
				out = cur
			}
		}
		core.WriteErr(w, r, draftStateError(err, out))
		return
	}
	httpjson.Write(w, http.StatusOK, PublishedDraft{Draft: out, Note: note})
}

func (h *Handlers) discardDraft(w http.ResponseWriter, r *http.Request) {
	d, ok := h.pathDraft(w, r)
	if !ok {
		return
	}
	if d.Status != store.AIDraftOpen {
		core.WriteErr(w, r, draftStateError(store.ErrDraftState, d))
		return
	}
	d.Status = store.AIDraftDiscarded
	out, err := h.st.UpdateAIDraft(r.Context(), d, store.AIDraftOpen)
	if err != nil {
		core.WriteErr(w, r, draftStateError(err, out))
		return
	}
	httpjson.Write(w, http.StatusOK, out)
}
