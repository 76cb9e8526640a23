package automation

import (
	"context"
	"net/http"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Routes registers monitoring as code (/automation/monitors; keys may
// contain "/": the key is the rest of the path). The receiver is named
// code so the route table reads as what it serves.
func (code *Handlers) Routes(rt *core.Router) {
	l := rt.Limits
	keyed := core.WithLimit(l.KeyedWrite)
	codeBody := core.WithMaxBody(maxCodeBody)
	rt.Handle(http.MethodPost, "/automation/monitors/plan", code.planMonitors, core.WithAccess(core.ReadOnlyWrite), core.WithLimit(l.Plan), codeBody, core.Doc(apidoc.Op{
		Tag:     "Monitoring as code",
		Summary: "Preview an apply; writes nothing",
		Body:    restapi.PlanRequest{},
		Resp:    restapi.Plan{},
	}))
	rt.Handle(http.MethodPost, "/automation/monitors/apply", code.applyMonitors, core.WithLimit(l.Apply), codeBody, core.Doc(apidoc.Op{
		Tag:         "Monitoring as code",
		Summary:     "Apply monitor specs",
		Desc:        "200 when every change applied, 207 when some failed. A spec setting config.notification_emails needs an Automation key (403 ALERT_ROUTING_NOT_ALLOWED).",
		Body:        restapi.PlanRequest{},
		Resp:        restapi.ApplyResult{},
		AlsoStatus:  []int{207},
		Extra:       []int{409, 428},
		Entitlement: true,
	}))
	rt.Handle(http.MethodPut, "/automation/monitors/by-id/{id}/key", code.putMonitorKey, keyed, core.Doc(apidoc.Op{
		Tag:     "Monitoring as code",
		Summary: "Assign or remove a monitor's key",
		Body:    restapi.MonitorKeyBody{},
		Resp:    restapi.Monitor{},
		Extra:   []int{409},
	}))
	rt.Handle(http.MethodGet, "/automation/monitors/*", code.getKeyedMonitor, core.Doc(apidoc.Op{
		Path:    "/automation/monitors/{key}",
		Tag:     "Monitoring as code",
		Summary: "Monitor by key",
		Resp:    restapi.Monitor{},
	}))
	rt.Handle(http.MethodPut, "/automation/monitors/*", code.putKeyedMonitor, keyed, core.Doc(apidoc.Op{
		Path:        "/automation/monitors/{key}",
		Tag:         "Monitoring as code",
		Summary:     "Create or update a monitor by key",
		Desc:        "201 when created, 200 when updated (also when a changed type replaced the monitor). config.notification_emails needs an Automation key (403 ALERT_ROUTING_NOT_ALLOWED).",
		Body:        restapi.MonitorSpec{},
		Resp:        restapi.Monitor{},
		AlsoStatus:  []int{201},
		Entitlement: true,
		NoNotFound:  true,
	}))
	rt.Handle(http.MethodDelete, "/automation/monitors/*", code.deleteKeyedMonitor, keyed, core.Doc(apidoc.Op{
		Path:    "/automation/monitors/{key}",
		Tag:     "Monitoring as code",
		Summary: "Delete a monitor by key, with its history",
		Status:  204,
	}))
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
