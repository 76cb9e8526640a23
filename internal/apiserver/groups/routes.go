package groups

import (
	"net/http"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
)

// Routes registers /monitor-groups.
func (h *Handlers) Routes(rt *core.Router) {
	rt.Handle(http.MethodGet, "/monitor-groups", h.listGroups)
	rt.Handle(http.MethodPost, "/monitor-groups", h.createGroup)
	rt.Handle(http.MethodGet, "/monitor-groups/{id}/summary", h.groupSummary)
	rt.Handle(http.MethodPut, "/monitor-groups/{id}", h.updateGroup)
	rt.Handle(http.MethodDelete, "/monitor-groups/{id}", h.deleteGroup)
}

// Handlers serve /monitor-groups: MonitorGroup custom resources with the
// status of their member monitors.
type Handlers struct {
	d *core.Deps
}

// New returns the handlers over d.
func New(d *core.Deps) *Handlers { return &Handlers{d: d} }
