// Package metrics defines the manager's Prometheus metrics. They are
// registered with controller-runtime's registry, so the manager's metrics
// endpoint serves them beside the controller metrics, and the Helm chart's
// PrometheusRule alerts on them.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// CheckResults counts ingested check results by status.
	CheckResults = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "uptime_operator_check_results_total",
		Help: "Check results ingested from probe agents and heartbeats, by status.",
	}, []string{"status"})
	// DuplicateResults counts results skipped because their id was stored.
	DuplicateResults = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "uptime_operator_duplicate_results_total",
		Help: "Check results skipped because their id was already stored (retried batches).",
	})
	// IncidentsOpened counts incidents opened, by whether alerts were suppressed.
	IncidentsOpened = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "uptime_operator_incidents_opened_total",
		Help: "Incidents opened by the quorum of regions (or by hand), by suppression.",
	}, []string{"suppressed"})
	// IncidentsResolved counts incidents resolved, automatically or by hand.
	IncidentsResolved = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "uptime_operator_incidents_resolved_total",
		Help: "Incidents resolved, by how (recovered or manual).",
	}, []string{"how"})
	// RegionOnline is 1 while a probe region has an agent in contact.
	RegionOnline = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "uptime_operator_probe_region_online",
		Help: "1 while at least one probe agent of the region contacted the manager recently.",
	}, []string{"region"})
	// RegionAgents is the number of agents of a region in contact.
	RegionAgents = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "uptime_operator_probe_region_agents",
		Help: "Probe agents of the region that contacted the manager recently.",
	}, []string{"region"})
	// AlertDeliveries counts delivery attempts by channel type and outcome
	// (delivered, retried, failed).
	AlertDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "uptime_operator_alert_deliveries_total",
		Help: "Alert delivery attempts by channel type and outcome (delivered, retried, failed).",
	}, []string{"channel", "outcome"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(CheckResults, DuplicateResults, IncidentsOpened, IncidentsResolved,
		RegionOnline, RegionAgents, AlertDeliveries)
}
