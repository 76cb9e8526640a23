package automation

import (
	"context"
	"net/http"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
)

// Routes registers monitoring as code (/automation/monitors; keys may
// contain "/": the key is the rest of the path). The receiver is named
// code so the route table reads as what it serves.
func (code *Handlers) Routes(rt *core.Router) {
	l := rt.Limits
	keyed := core.WithLimit(l.KeyedWrite)
	codeBody := core.WithMaxBody(maxCodeBody)
	rt.Handle(http.MethodPost, "/automation/monitors/plan", code.planMonitors, core.WithAccess(core.ReadOnlyWrite), core.WithLimit(l.Plan), codeBody)
	rt.Handle(http.MethodPost, "/automation/monitors/apply", code.applyMonitors, core.WithLimit(l.Apply), codeBody)
	rt.Handle(http.MethodPut, "/automation/monitors/by-id/{id}/key", code.putMonitorKey, keyed)
	rt.Handle(http.MethodGet, "/automation/monitors/*", code.getKeyedMonitor)
	rt.Handle(http.MethodPut, "/automation/monitors/*", code.putKeyedMonitor, keyed)
	rt.Handle(http.MethodDelete, "/automation/monitors/*", code.deleteKeyedMonitor, keyed)
}

// Handlers serve monitoring as code: plans and applies of a whole set of
// monitors, and monitors addressed by key.
type Handlers struct {
	d   *core.Deps
	mon Monitors
}

// New returns the handlers; mon writes the monitors (package monitors'
// Writes).
func New(d *core.Deps, mon Monitors) *Handlers {
	return &Handlers{d: d, mon: mon}
}

// Monitors is what monitoring as code asks of the monitor handlers: it
// writes a monitor the one way /monitors does (bodies applied and validated
// like admission, credentials kept in the monitor's Secret, pause windows
// recorded, history deleted with the monitor), so a keyed monitor and one
// made through /monitors cannot differ.
type Monitors interface {
	// Apply writes spec b onto m as monitoring as code does (key, paused,
	// regions and notification_emails managed) and validates the result.
	Apply(ctx context.Context, m *monv1.Monitor, b *core.MonitorBody) error
	// Inline is m's spec with the values of its credentials Secret in place
	// of the references to it, so a plan compares credentials as written.
	Inline(ctx context.Context, m *monv1.Monitor) (*monv1.MonitorSpec, error)
	// Create creates m, built by Apply, and returns it.
	Create(ctx context.Context, m *monv1.Monitor) (*monv1.Monitor, error)
	// Update applies spec b to the newest version of cur and returns it.
	Update(ctx context.Context, cur *monv1.Monitor, b *core.MonitorBody) (*monv1.Monitor, error)
	// Delete deletes m and its history.
	Delete(ctx context.Context, m *monv1.Monitor) error
	// Respond answers with the monitor object of m (uptime: computed from
	// the store, as GET /monitors/:id does).
	Respond(w http.ResponseWriter, r *http.Request, m *monv1.Monitor, code int, uptime bool)
}
