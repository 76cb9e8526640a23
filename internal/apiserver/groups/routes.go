package groups

import (
	"net/http"

	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Routes registers /monitor-groups.
func (h *Handlers) Routes(rt *core.Router) {
	rt.Handle(http.MethodGet, "/monitor-groups", h.listGroups, core.Doc(apidoc.Op{Tag: "Monitor groups", Summary: "Monitor groups", Resp: []restapi.MonitorGroup{}}))
	rt.Handle(http.MethodPost, "/monitor-groups", h.createGroup, core.Doc(apidoc.Op{
		Tag:     "Monitor groups",
		Summary: "Create a group",
		Body:    restapi.MonitorGroupBody{},
		Status:  201,
		Resp:    restapi.MonitorGroup{},
	}))
	rt.Handle(http.MethodGet, "/monitor-groups/{id}/summary", h.groupSummary, core.Doc(apidoc.Op{
		Tag:     "Monitor groups",
		Summary: "Status summary of the group's monitors",
		Resp:    restapi.GroupSummary{},
	}))
	rt.Handle(http.MethodPut, "/monitor-groups/{id}", h.updateGroup, core.Doc(apidoc.Op{
		Tag:     "Monitor groups",
		Summary: "Rename a group",
		Body:    restapi.MonitorGroupBody{},
		Resp:    restapi.MonitorGroup{},
	}))
	rt.Handle(http.MethodDelete, "/monitor-groups/{id}", h.deleteGroup, core.Doc(apidoc.Op{Tag: "Monitor groups", Summary: "Delete a group (its monitors leave it)", Status: 204}))
}

// Handlers serve /monitor-groups: MonitorGroup custom resources with the
// status of their member monitors.
type Handlers struct {
	d *core.Deps
}

// New returns the handlers over d.
func New(d *core.Deps) *Handlers { return &Handlers{d: d} }
