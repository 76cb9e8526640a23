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
	// CheckResults counts ingested check results by monitor type, region and
	// status.
	CheckResults = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "uptime_operator_check_results_total",
		Help: "Check results ingested from probe agents and heartbeats, by monitor type, region and status.",
	}, []string{"type", "region", "status"})
	// IngestLag is how old results are when the manager stores them (agent
	// batching, buffering while the manager was unreachable).
	IngestLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "uptime_operator_ingest_lag_seconds",
		Help:    "Time from a check's start to its ingestion by the manager.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800},
	})
	// StoreBytes is the size of the embedded SQLite store on disk.
	StoreBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "uptime_operator_store_bytes",
		Help: "Size of the SQLite store on disk (database and write-ahead log); absent with PostgreSQL.",
	})
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

	// APIRequests counts requests of the REST API (both front doors) by chi
	// route pattern, method and status code. The route is the pattern
	// ("/monitors/{id}"), never the raw path, so the label set stays bounded.
	APIRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "uptime_operator_api_requests_total",
		Help: "REST API requests by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	// APIRequestDuration is the latency of REST API requests by route
	// pattern and method, until the handler returned.
	APIRequestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "uptime_operator_api_request_duration_seconds",
		Help:    "Latency of REST API requests by route pattern and method.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"route", "method"})
	// APIRequestsInFlight is the number of REST API requests being served.
	APIRequestsInFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "uptime_operator_api_requests_in_flight",
		Help: "REST API requests being served.",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(CheckResults, IngestLag, StoreBytes, DuplicateResults, IncidentsOpened, IncidentsResolved,
		RegionOnline, RegionAgents, AlertDeliveries,
		APIRequests, APIRequestDuration, APIRequestsInFlight)
}
