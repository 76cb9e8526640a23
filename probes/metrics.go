package probes

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are an agent's Prometheus metrics, on a registry of its own.
type metrics struct {
	registry *prometheus.Registry
	// collectors are what registry holds.
	collectors []prometheus.Collector
	checks     *prometheus.CounterVec
	lag        prometheus.Histogram
	skipped    prometheus.Counter
	pushes     *prometheus.CounterVec
	replayed   prometheus.Counter
	delivered  prometheus.Gauge
}

func newMetrics(inFlight, buffered, dropped, scheduled func() float64) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "uptime_probe", Name: "checks_total", Help: "Checks run, by monitor type and status.",
		}, []string{"type", "status"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "uptime_probe", Name: "schedule_lag_seconds", Help: "Actual minus planned start of scheduled checks.",
			Buckets: []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		skipped: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "uptime_probe", Name: "skipped_runs_total", Help: "Slots skipped because the previous run of the monitor was still going.",
		}),
		pushes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "uptime_probe", Name: "result_pushes_total", Help: "Result batch pushes to the manager, by outcome.",
		}, []string{"outcome"}),
		replayed: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "uptime_probe", Name: "replayed_results_total",
			Help: "Results delivered after a failed push held them back (or left on disk by an earlier run): the backlog replayed once the manager answers again.",
		}),
		delivered: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "uptime_probe", Name: "last_delivery_timestamp_seconds", Help: "When the manager last accepted a result batch (Unix time; 0 for never).",
		}),
	}
	m.collectors = []prometheus.Collector{m.checks, m.lag, m.skipped, m.pushes, m.replayed, m.delivered,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "uptime_probe", Name: "in_flight", Help: "Checks running now."}, inFlight),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "uptime_probe", Name: "scheduled_monitors", Help: "Monitors in the schedule (the assignments received that this agent can run)."}, scheduled),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "uptime_probe", Name: "buffered_results", Help: "Results waiting for delivery to the manager."}, buffered),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "uptime_probe", Name: "dropped_results_total", Help: "Results discarded because the buffer was full."}, dropped),
		prometheus.NewGoCollector(),
		prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}),
	}
	m.registry.MustRegister(m.collectors...)
	return m
}

// AgentMetricCollectors returns the collectors of an agent's metrics (with
// zero gauges), so that tools can list the families an agent exports: the
// chart's dashboard lint checks its queries against them.
func AgentMetricCollectors() []prometheus.Collector {
	zero := func() float64 { return 0 }
	return newMetrics(zero, zero, zero, zero).collectors
}
