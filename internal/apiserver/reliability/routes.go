package reliability

import (
	"context"
	"net/http"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Routes registers /reliability, GET /monitors/{id}/flakiness and the
// rollout gates GET /monitors/{id}/gate and /reliability/slo-targets/{id}/gate.
func (h *Handlers) Routes(rt *core.Router) {
	slo := core.WithFeature(monv1.FeatureSLO)
	deps := core.WithFeature(monv1.FeatureDependencies)
	owner := core.WithAccess(core.OwnerOnly)
	rt.Handle(http.MethodGet, "/monitors/{id}/flakiness", h.monitorFlakiness, core.Doc(apidoc.Op{
		Tag:     "Monitors",
		Summary: "7-day and 30-day flakiness score 0-100 with reasons",
		Resp:    restapi.Flakiness{},
	}))
	rt.Handle(http.MethodGet, "/monitors/{id}/gate", h.monitorGate, core.Doc(gateOp("Whether the monitor and its SLO let a rollout go on", false)))
	rt.Handle(http.MethodGet, "/reliability/slo-targets/{id}/gate", h.sloGate, slo, core.Doc(gateOp("Whether the SLO target and its monitor let a rollout go on", true)))
	rt.Handle(http.MethodGet, "/reliability/overview", h.reliabilityOverview, core.Doc(apidoc.Op{Tag: "Reliability", Summary: "Reliability of every monitor", Resp: restapi.ReliabilityOverview{}}))
	rt.Handle(http.MethodGet, "/reliability/monitor/{monitorId}", h.reliabilityMonitor, core.Doc(apidoc.Op{
		Tag:     "Reliability",
		Summary: "Uptime, MTTR, MTBF, health score and SLO state of a monitor",
		Resp:    restapi.MonitorReliability{},
	}))
	rt.Handle(http.MethodGet, "/reliability/dependencies", h.listDependencies, deps, core.Doc(apidoc.Op{Tag: "Reliability", Summary: "Monitor dependencies", Resp: []Dependency{}}))
	rt.Handle(http.MethodPost, "/reliability/dependencies", h.createDependency, owner, deps, core.Doc(apidoc.Op{
		Tag:     "Reliability",
		Summary: "Add a dependency",
		Body:    restapi.DependencyBody{},
		Status:  201,
		Resp:    Dependency{},
	}))
	rt.Handle(http.MethodDelete, "/reliability/dependencies/{id}", h.deleteDependency, owner, deps, core.Doc(apidoc.Op{Tag: "Reliability", Summary: "Remove a dependency", Status: 204}))
	rt.Handle(http.MethodGet, "/reliability/slo-targets", h.listSLOs, slo, core.Doc(apidoc.Op{Tag: "Reliability", Summary: "SLO targets", Resp: []restapi.SLOTarget{}}))
	rt.Handle(http.MethodPost, "/reliability/slo-targets", h.upsertSLO, slo, core.Doc(apidoc.Op{
		Tag:        "Reliability",
		Summary:    "Create or replace the monitor's SLO target",
		Desc:       "201 when created, 200 when the monitor's target was replaced.",
		Body:       restapi.SLOTargetBody{},
		Status:     201,
		AlsoStatus: []int{200},
		Resp:       restapi.SLOTarget{},
	}))
	rt.Handle(http.MethodPut, "/reliability/slo-targets/{id}", h.updateSLO, slo, core.Doc(apidoc.Op{
		Tag:     "Reliability",
		Summary: "Change an SLO target",
		Body:    restapi.SLOTargetBody{},
		Resp:    restapi.SLOTarget{},
	}))
	rt.Handle(http.MethodDelete, "/reliability/slo-targets/{id}", h.deleteSLO, slo, core.Doc(apidoc.Op{Tag: "Reliability", Summary: "Delete an SLO target", Status: 204}))
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
