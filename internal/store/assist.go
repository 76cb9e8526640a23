package store

import (
	"context"
	"errors"
	"time"
)

// ErrDraftState means an AI status-update draft is no longer in the state the
// change expects (it was published or discarded meanwhile).
var ErrDraftState = errors.New("store: draft is not in the expected state")

// AI content kinds saved per incident.
const (
	AIContentSummary    = "summary"
	AIContentPostmortem = "postmortem"
)

// AIContent is a generated text saved on an incident: the latest summary or
// postmortem draft, one of each kind.
type AIContent struct {
	IncidentID string    `json:"incident_id"`
	Namespace  string    `json:"namespace"`
	Kind       string    `json:"kind"`
	Body       string    `json:"body"`
	Model      string    `json:"model"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// AIDraftStatus is the state of an AI status-update draft.
type AIDraftStatus string

// AI status-update draft states: a draft is published (as a public incident
// note) or discarded, once.
const (
	AIDraftOpen      AIDraftStatus = "draft"
	AIDraftPublished AIDraftStatus = "published"
	AIDraftDiscarded AIDraftStatus = "discarded"
)

// AIDraft is a generated status-update draft of an incident.
type AIDraft struct {
	ID         string `json:"id"`
	Namespace  string `json:"namespace"`
	IncidentID string `json:"incident_id"`
	// Phase is investigating, identified, monitoring or resolved.
	Phase    string        `json:"phase"`
	Body     string        `json:"body"`
	Guidance string        `json:"guidance,omitempty"`
	Model    string        `json:"model"`
	Status   AIDraftStatus `json:"status"`
	// NoteID is the public note a published draft became.
	NoteID    string    `json:"note_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// AssistStore keeps AI incident assist content, drafts and usage.
type AssistStore interface {
	// PutAIContent saves (replaces) the content of c.Kind on c.IncidentID.
	PutAIContent(ctx context.Context, c AIContent) (AIContent, error)
	// ListAIContent returns an incident's saved content, by kind.
	ListAIContent(ctx context.Context, incidentID string) ([]AIContent, error)
	// InsertAIDraft stores a new draft (ID, timestamps and status filled when
	// empty); ErrNotFound when the incident does not exist.
	InsertAIDraft(ctx context.Context, d AIDraft) (AIDraft, error)
	// GetAIDraft returns one draft or ErrNotFound.
	GetAIDraft(ctx context.Context, id string) (AIDraft, error)
	// ListAIDrafts returns an incident's drafts, newest first.
	ListAIDrafts(ctx context.Context, incidentID string) ([]AIDraft, error)
	// UpdateAIDraft replaces the phase, body and status of draft d.ID if its
	// stored status is still from: ErrNotFound when missing, ErrDraftState
	// when the status differs.
	UpdateAIDraft(ctx context.Context, d AIDraft, from AIDraftStatus) (AIDraft, error)
	// PublishAIDraft turns an open draft into a public note of its incident
	// (with its "note" timeline event) and marks it published, in one
	// transaction. author names who published it.
	PublishAIDraft(ctx context.Context, id, author string, at time.Time) (AIDraft, Note, error)
	// AddAIUsage adds delta generations to namespace's count of period
	// (YYYY-MM) unless the result would exceed limit (limit <= 0: no limit);
	// a negative delta gives back generations, never below zero. It returns
	// the count after the call and whether delta was applied.
	AddAIUsage(ctx context.Context, namespace, period string, delta, limit int) (used int, ok bool, err error)
	// AIUsage returns namespace's count of period.
	AIUsage(ctx context.Context, namespace, period string) (int, error)
}
