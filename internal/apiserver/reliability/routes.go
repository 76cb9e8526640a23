package reliability

import (
	"context"
	"net/http"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Routes registers /reliability and GET /monitors/{id}/flakiness.
func (h *Handlers) Routes(rt *core.Router) {
	slo := core.WithFeature(monv1.FeatureSLO)
	deps := core.WithFeature(monv1.FeatureDependencies)
	owner := core.WithAccess(core.OwnerOnly)
	rt.Handle(http.MethodGet, "/monitors/{id}/flakiness", h.monitorFlakiness)
	rt.Handle(http.MethodGet, "/reliability/overview", h.reliabilityOverview)
	rt.Handle(http.MethodGet, "/reliability/monitor/{monitorId}", h.reliabilityMonitor)
	rt.Handle(http.MethodGet, "/reliability/dependencies", h.listDependencies, deps)
	rt.Handle(http.MethodPost, "/reliability/dependencies", h.createDependency, owner, deps)
	rt.Handle(http.MethodDelete, "/reliability/dependencies/{id}", h.deleteDependency, owner, deps)
	rt.Handle(http.MethodGet, "/reliability/slo-targets", h.listSLOs, slo)
	rt.Handle(http.MethodPost, "/reliability/slo-targets", h.upsertSLO, slo)
	rt.Handle(http.MethodPut, "/reliability/slo-targets/{id}", h.updateSLO, slo)
	rt.Handle(http.MethodDelete, "/reliability/slo-targets/{id}", h.deleteSLO, slo)
}

// Store is what reliability reads from the history store.
type Store interface {
	ListChecks(ctx context.Context, q store.ChecksQuery) (items []store.Check, nextBefore *time.Time, err error)
	ListIncidents(ctx context.Context, q store.IncidentQuery) (store.IncidentList, error)
	Uptime(ctx context.Context, monitorID string, from, to time.Time) (*float64, error)
}

// Handlers serve /reliability: SLO targets (SLO custom resources), monitor
// dependencies (spec.dependsOn), the reliability overview and a monitor's
// reliability and flakiness.
type Handlers struct {
	d  *core.Deps
	st Store
}

// New returns the handlers over d and st.
func New(d *core.Deps, st Store) *Handlers { return &Handlers{d: d, st: st} }
