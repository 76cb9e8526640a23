package assist

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// Config is the admin's model configuration.
type Config struct {
	// URL is the OpenAI-compatible API base (https://api.example.com/v1) or
	// the full chat-completions URL (…/chat/completions).
	URL string
	// Model is the model name sent with every request; empty disables the
	// assist.
	Model string
	// APIKey is sent as a bearer token when not empty.
	APIKey string
	// MonthlyAllowance is the number of generations a workspace may make per
	// calendar month (UTC); 0 means unlimited.
	MonthlyAllowance int
	// Timeout bounds one generation (DefaultTimeout when 0).
	Timeout time.Duration
	// MaxTokens bounds the length of a reply (DefaultMaxTokens when 0).
	MaxTokens int
}

// Defaults of a Config.
const (
	DefaultTimeout   = 90 * time.Second
	DefaultMaxTokens = 2000
)

// Phases of a status update.
const (
	PhaseInvestigating = "investigating"
	PhaseIdentified    = "identified"
	PhaseMonitoring    = "monitoring"
	PhaseResolved      = "resolved"
)

// Phases lists the status-update phases in incident order.
var Phases = []string{PhaseInvestigating, PhaseIdentified, PhaseMonitoring, PhaseResolved}

// ValidPhase reports whether p is a status-update phase.
func ValidPhase(p string) bool { return slices.Contains(Phases, p) }

// Limits of generated and edited text.
const (
	// MaxGuidance is the longest author guidance of a status update.
	MaxGuidance = 1000
	// MaxStatusUpdate is the longest status-update body (a public note).
	MaxStatusUpdate = 5000
	// MaxSummary is the longest saved summary.
	MaxSummary = 5000
	// MaxPostmortem is the longest postmortem (the incident's own limit).
	MaxPostmortem = 50000
)

// Errors of the assist.
var (
	// ErrUnavailable means no model is configured.
	ErrUnavailable = errors.New("AI incident assist is not available: no model is configured")
	// ErrPostmortemExists means the incident has a postmortem and overwrite
	// was not asked for.
	ErrPostmortemExists = errors.New("the incident already has a postmortem; send overwrite: true to replace it")
)

// AllowanceError means the workspace used its monthly allowance.
type AllowanceError struct {
	Used, Limit int
	// Period is the month, YYYY-MM.
	Period string
}

func (e *AllowanceError) Error() string {
	return fmt.Sprintf("monthly AI allowance used: %d of %d generations in %s", e.Used, e.Limit, e.Period)
}

// ProviderError means the model endpoint failed or answered nonsense.
type ProviderError struct {
	// StatusCode is the endpoint's HTTP status, 0 without a response.
	StatusCode int
	Msg        string
}

func (e *ProviderError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("AI provider answered HTTP %d: %s", e.StatusCode, e.Msg)
	}
	return "AI provider failed: " + e.Msg
}

// Service generates and keeps AI incident content.
type Service struct {
	Config Config
	// Store holds incidents, AI content, drafts and usage.
	Store Store
	// HTTPClient calls the model endpoint (a plain client when nil; Config.
	// Timeout bounds each call either way).
	HTTPClient *http.Client
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// Available reports whether a model is configured.
func (s *Service) Available() bool {
	return s != nil && strings.TrimSpace(s.Config.Model) != "" && strings.TrimSpace(s.Config.URL) != ""
}

// Status is what GET /incident-comms/status answers.
type Status struct {
	Available bool `json:"available"`
	// Reason says why the features are unavailable; null when available.
	Reason   *string   `json:"reason"`
	Model    *string   `json:"model"`
	Features Features  `json:"features"`
	Phases   []string  `json:"phases"`
	Allow    Allowance `json:"allowance"`
}

// Features says which generations can be made now.
type Features struct {
	Summary       bool `json:"summary"`
	Postmortem    bool `json:"postmortem"`
	StatusUpdates bool `json:"status_updates"`
}

// Allowance is a workspace's use of the monthly allowance.
type Allowance struct {
	// Limit is nil when unlimited.
	Limit *int `json:"limit"`
	Used  int  `json:"used"`
	// Remaining is nil when unlimited.
	Remaining *int   `json:"remaining"`
	Period    string `json:"period"`
	ResetsAt  string `json:"resets_at"`
}

// period is the allowance month of t.
func period(t time.Time) string { return t.UTC().Format("2006-01") }

// Status reports availability and namespace's allowance.
func (s *Service) Status(ctx context.Context, namespace string) (Status, error) {
	now := s.now()
	st := Status{Phases: Phases}
	p := period(now)
	used, err := s.Store.AIUsage(ctx, namespace, p)
	if err != nil {
		return st, err
	}
	y, m, _ := now.Date()
	st.Allow = Allowance{Used: used, Period: p, ResetsAt: time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)}
	left := true
	if lim := s.Config.MonthlyAllowance; lim > 0 {
		rem := max(0, lim-used)
		st.Allow.Limit, st.Allow.Remaining = &lim, &rem
		left = rem > 0
	}
	switch {
	case !s.Available():
		r := "no AI model is configured for this installation"
		st.Reason = &r
	case !left:
		r := "the monthly allowance is used up"
		st.Reason = &r
		st.Available = true
	default:
		st.Available = true
	}
	if s.Available() {
		model := s.Config.Model
		st.Model = &model
	}
	on := st.Available && left
	st.Features = Features{Summary: on, Postmortem: on, StatusUpdates: on}
	return st, nil
}

// generate reserves one generation of namespace's allowance, asks the model
// and gives the reservation back when that fails.
func (s *Service) generate(ctx context.Context, namespace string, t task, data incidentData) (string, error) {
	if !s.Available() {
		return "", ErrUnavailable
	}
	p := period(s.now())
	used, ok, err := s.Store.AddAIUsage(ctx, namespace, p, 1, s.Config.MonthlyAllowance)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", &AllowanceError{Used: used, Limit: s.Config.MonthlyAllowance, Period: p}
	}
	text, err := s.complete(ctx, buildMessages(t, data))
	if err != nil {
		// The generation did not happen: give it back. A fresh context, so a
		// cancelled request still returns its reservation.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, _, rerr := s.Store.AddAIUsage(rctx, namespace, p, -1, 0); rerr != nil {
			err = errors.Join(err, fmt.Errorf("give back AI allowance: %w", rerr))
		}
		return "", err
	}
	return text, nil
}

// Summary generates and saves a summary of inc.
func (s *Service) Summary(ctx context.Context, inc store.Incident) (store.AIContent, error) {
	data, err := s.collect(ctx, inc, false)
	if err != nil {
		return store.AIContent{}, err
	}
	text, err := s.generate(ctx, inc.Namespace, taskSummary, data)
	if err != nil {
		return store.AIContent{}, err
	}
	return s.Store.PutAIContent(ctx, store.AIContent{IncidentID: inc.ID, Namespace: inc.Namespace, Kind: store.AIContentSummary,
		Body: strings.TrimSpace(textutil.Truncate(text, MaxSummary)), Model: s.Config.Model, UpdatedAt: s.now()})
}

// Postmortem generates a postmortem draft of inc, saves it and makes it the
// incident's postmortem. When the incident already has a postmortem it
// fails with ErrPostmortemExists unless overwrite is set; nothing is
// generated (or counted) then.
func (s *Service) Postmortem(ctx context.Context, inc store.Incident, overwrite bool) (store.AIContent, error) {
	if strings.TrimSpace(inc.Postmortem) != "" && !overwrite {
		return store.AIContent{}, ErrPostmortemExists
	}
	data, err := s.collect(ctx, inc, false)
	if err != nil {
		return store.AIContent{}, err
	}
	text, err := s.generate(ctx, inc.Namespace, taskPostmortem, data)
	if err != nil {
		return store.AIContent{}, err
	}
	c, err := s.Store.PutAIContent(ctx, store.AIContent{IncidentID: inc.ID, Namespace: inc.Namespace, Kind: store.AIContentPostmortem,
		Body: strings.TrimSpace(textutil.Truncate(text, MaxPostmortem)), Model: s.Config.Model, UpdatedAt: s.now()})
	if err != nil {
		return c, err
	}
	if err := s.Store.SetPostmortem(ctx, inc.ID, c.Body); err != nil {
		return c, fmt.Errorf("save postmortem: %w", err)
	}
	return c, nil
}

// StatusUpdate generates a status-update draft of inc for phase (derived from
// the incident when empty) following the author's guidance.
func (s *Service) StatusUpdate(ctx context.Context, inc store.Incident, phase, guidance string) (store.AIDraft, error) {
	if phase == "" {
		phase = PhaseInvestigating
		if inc.ResolvedAt != nil {
			phase = PhaseResolved
		}
	}
	data, err := s.collect(ctx, inc, true)
	if err != nil {
		return store.AIDraft{}, err
	}
	data.Request = &updateRequest{Phase: phase, AuthorGuidance: guidance}
	text, err := s.generate(ctx, inc.Namespace, taskStatusUpdate, data)
	if err != nil {
		return store.AIDraft{}, err
	}
	return s.Store.InsertAIDraft(ctx, store.AIDraft{Namespace: inc.Namespace, IncidentID: inc.ID, Phase: phase,
		Body: strings.TrimSpace(textutil.Truncate(text, MaxStatusUpdate)), Guidance: guidance, Model: s.Config.Model, CreatedAt: s.now()})
}

// Saved is the AI content of one incident.
type Saved struct {
	IncidentID   string           `json:"incident_id"`
	Summary      *store.AIContent `json:"summary"`
	Postmortem   *store.AIContent `json:"postmortem"`
	StatusUpdate []store.AIDraft  `json:"status_updates"`
}

// Saved returns the saved content and drafts of incidentID.
func (s *Service) Saved(ctx context.Context, incidentID string) (Saved, error) {
	out := Saved{IncidentID: incidentID, StatusUpdate: []store.AIDraft{}}
	content, err := s.Store.ListAIContent(ctx, incidentID)
	if err != nil {
		return out, err
	}
	for i := range content {
		switch content[i].Kind {
		case store.AIContentSummary:
			out.Summary = &content[i]
		case store.AIContentPostmortem:
			out.Postmortem = &content[i]
		}
	}
	if out.StatusUpdate, err = s.Store.ListAIDrafts(ctx, incidentID); err != nil {
		return out, err
	}
	return out, nil
}
