package assist

import (
	"context"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Store is the part of the history store (internal/store) that the Service
// uses: an incident's timeline and notes to build the prompt from, the
// generated content and drafts, the postmortem it may write, and the
// per-namespace usage that the monthly limit counts. It holds only the
// methods the Service calls, so the dependency is visible here and a test
// can fake or wrap it; every store backend satisfies it.
type Store interface {
	ListTimeline(ctx context.Context, q store.TimelineQuery) (items []store.TimelineEvent, nextCursor string, err error)
	ListNotes(ctx context.Context, incidentID string) ([]store.Note, error)
	SetPostmortem(ctx context.Context, id, postmortem string) error
	PutAIContent(ctx context.Context, c store.AIContent) (store.AIContent, error)
	ListAIContent(ctx context.Context, incidentID string) ([]store.AIContent, error)
	InsertAIDraft(ctx context.Context, d store.AIDraft) (store.AIDraft, error)
	ListAIDrafts(ctx context.Context, incidentID string) ([]store.AIDraft, error)
	AddAIUsage(ctx context.Context, namespace, period string, delta, limit int) (used int, ok bool, err error)
	AIUsage(ctx context.Context, namespace, period string) (int, error)
}
