package workspace

import (
	"net/http"

	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Routes registers /automation/whoami and /regions.
func (h *Handlers) Routes(rt *core.Router) {
	rt.Handle(http.MethodGet, "/automation/whoami", h.whoami, core.Doc(apidoc.Op{Tag: "Whoami", Summary: "The caller's workspace, access level and plan", Resp: restapi.Whoami{}}))
	rt.Handle(http.MethodGet, "/regions", h.listRegions, core.Doc(apidoc.Op{Tag: "Monitors", Summary: "Probe regions", Resp: []restapi.ProbeRegion{}}))
}

// Handlers serve what a caller learns about its workspace: who it is (key
// level, role, plan and limits) and the probe regions it can use.
type Handlers struct {
	d *core.Deps
}

// New returns the handlers over d.
func New(d *core.Deps) *Handlers { return &Handlers{d: d} }
