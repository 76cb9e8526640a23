package monitors

import (
	"context"
	"net/http"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
)

// Writes are the monitor writes of /monitors offered to monitoring as code
// (package automation, whose Monitors interface they satisfy), so a keyed
// monitor is written the one way every monitor is.
type Writes struct{ h *Handlers }

// Writes returns the monitor writes of h.
func (h *Handlers) Writes() Writes { return Writes{h: h} }

// Apply writes spec b onto m as monitoring as code does (key, paused,
// regions and notification_emails managed) and validates the result like
// admission.
func (w Writes) Apply(ctx context.Context, m *monv1.Monitor, b *core.MonitorBody) error {
	if _, err := w.h.applyMonitorBody(ctx, m, b, modeCode); err != nil {
		return err
	}
	return w.h.validateMonitor(ctx, m)
}

// Inline is m's spec with its credentials in plain text (see
// credentials.inline).
func (w Writes) Inline(ctx context.Context, m *monv1.Monitor) (*monv1.MonitorSpec, error) {
	return w.h.creds.inline(ctx, m)
}

// Create creates m (see Handlers.create).
func (w Writes) Create(ctx context.Context, m *monv1.Monitor) (*monv1.Monitor, error) {
	return w.h.create(ctx, m)
}

// Update applies spec b to cur, as monitoring as code does, and records a
// pause window when paused changed. cur was read for the plan in this
// request, so it is written as read and read again only when the update
// conflicts (core.Deps.MutateCached): an apply reads no monitor per change.
func (w Writes) Update(ctx context.Context, cur *monv1.Monitor, b *core.MonitorBody) (*monv1.Monitor, error) {
	h := w.h
	m := cur.DeepCopy()
	wasPaused := m.Spec.Paused
	err := h.d.MutateCached(ctx, m, func() error {
		wasPaused = m.Spec.Paused
		if err := w.Apply(ctx, m, b); err != nil {
			return err
		}
		_, err := h.creds.keep(ctx, m, "")
		return err
	})
	if err != nil {
		return nil, h.d.WriteFailed(ctx, m.Namespace, err, core.MonitorFieldPath)
	}
	h.recordPause(ctx, m, wasPaused)
	return m, nil
}

// Delete deletes m and its history.
func (w Writes) Delete(ctx context.Context, m *monv1.Monitor) error {
	return w.h.delete(ctx, m)
}

// Respond answers with the monitor object of m.
func (w Writes) Respond(rw http.ResponseWriter, r *http.Request, m *monv1.Monitor, code int, uptime bool) {
	w.h.writeMonitor(rw, r, m, code, uptime)
}
