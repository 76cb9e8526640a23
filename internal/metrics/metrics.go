// Package metrics defines the manager's Prometheus metrics. They are
// registered with controller-runtime's registry, so the manager's metrics
// endpoint serves them beside the controller metrics, and the Helm chart's
// PrometheusRule alerts on them.
package metrics

import (
	"context"
	"sync/atomic"
	"time"

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
		Name: "uptime_operator_ingest_lag_seconds",
		Help: "Time from a check's start to its ingestion by the manager.",
		// Fine between 5 s and 10 min, where a manager falling behind its
		// agents shows, so that a p99 read from the buckets says how far.
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 45, 60, 90, 120, 180, 300, 600, 1200, 1800, 3600},
	})
	// StoreBytes is the size of the store: the SQLite file and its WAL, or
	// the PostgreSQL database.
	StoreBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "uptime_operator_store_bytes",
		Help: "Size of the store: the SQLite database and write-ahead log on disk, or the PostgreSQL database (pg_database_size).",
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
	// RegionMonitors is the number of monitors that use a probe region. The
	// chart's UptimeOperatorProbeRegionOffline alert joins on it: a region
	// no monitor uses has no agents on purpose (the manager scales its
	// Deployment to 0), and its being offline is not an outage.
	RegionMonitors = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "uptime_operator_probe_region_monitors",
		Help: "Monitors that use the probe region (0: the region is idle and needs no agent).",
	}, []string{"region"})
	// RegionAgents is the number of agents of a region in contact.
	RegionAgents = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "uptime_operator_probe_region_agents",
		Help: "Probe agents of the region that contacted the manager recently.",
	}, []string{"region"})
	// AlertDeliveries counts delivery attempts by channel type, outcome
	// (delivered, retried, failed) and attempt number (1-6).
	AlertDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "uptime_operator_alert_deliveries_total",
		Help: "Alert delivery attempts by channel type, outcome (delivered, retried, failed) and attempt number.",
	}, []string{"channel", "outcome", "attempt"})

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
	ctrlmetrics.Registry.MustRegister(Collectors()...)
}

// Collectors returns every collector of the manager's own metrics, as
// registered with controller-runtime's registry (the chart's dashboard lint
// lists the families the manager exports from them).
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{CheckResults, IngestLag, StoreBytes, DuplicateResults, IncidentsOpened, IncidentsResolved,
		RegionOnline, RegionMonitors, RegionAgents, AlertDeliveries,
		APIRequests, APIRequestDuration, APIRequestsInFlight, openIncidents{}, monitorSeriesCollector{}}
}

// openIncidentsDesc describes uptime_operator_open_incidents. The label is
// "workspace", not "namespace": Prometheus sets "namespace" to the scraped
// pod's namespace.
var openIncidentsDesc = prometheus.NewDesc("uptime_operator_open_incidents",
	"Monitors with an open incident, by workspace (namespace).", []string{"workspace"}, nil)

// openIncidents reports the open incidents counted by the function last
// given to SetOpenIncidents, at each scrape.
type openIncidents struct{}

// openIncidentsCount is the counting function; a manager started again in
// the same process (tests) replaces its predecessor's.
var openIncidentsCount atomic.Pointer[func(context.Context) (map[string]int, error)]

func (openIncidents) Describe(ch chan<- *prometheus.Desc) { ch <- openIncidentsDesc }

func (openIncidents) Collect(ch chan<- prometheus.Metric) {
	count := openIncidentsCount.Load()
	if count == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := (*count)(ctx)
	if err != nil {
		// Not yet countable (the cache is starting): report nothing rather
		// than fail the whole scrape.
		return
	}
	for ws, n := range counts {
		ch <- prometheus.MustNewConstMetric(openIncidentsDesc, prometheus.GaugeValue, float64(n), ws)
	}
}

// SetOpenIncidents makes uptime_operator_open_incidents report count (open
// incidents by namespace), called at each scrape.
func SetOpenIncidents(count func(context.Context) (map[string]int, error)) {
	openIncidentsCount.Store(&count)
}
