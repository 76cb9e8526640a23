package workspace

import (
	"net/http"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
)

// Routes registers /automation/whoami and /regions.
func (h *Handlers) Routes(rt *core.Router) {
	rt.Handle(http.MethodGet, "/automation/whoami", h.whoami)
	rt.Handle(http.MethodGet, "/regions", h.listRegions)
}

// Handlers serve what a caller learns about its workspace: who it is (key
// level, role, plan and limits) and the probe regions it can use.
type Handlers struct {
	d *core.Deps
}

// New returns the handlers over d.
func New(d *core.Deps) *Handlers { return &Handlers{d: d} }
