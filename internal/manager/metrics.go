package manager

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
)

// metricsServer configures the metrics endpoint. Served securely (the
// default of the manager command), it speaks TLS only (the certificate of
// MetricsCertDir, or a self-signed one made at start) and answers only
// callers kube-apiserver vouches for: a bearer token checked with a
// TokenReview, then a SubjectAccessReview for "get" on the non-resource URL
// /metrics, which the chart's metrics-reader ClusterRole grants. Both
// reviews are cached (a minute, five for an allowed caller), so a scrape
// every 30 s costs kube-apiserver little. The ServiceAccount needs create on
// tokenreviews and subjectaccessreviews (system:auth-delegator, bound by the
// chart for the aggregated API already).
func metricsServer(opts Options) metricsserver.Options {
	o := metricsserver.Options{BindAddress: orZero(opts.MetricsAddr)}
	if opts.MetricsSecure {
		o.SecureServing = true
		o.FilterProvider = filters.WithAuthenticationAndAuthorization
		o.CertDir = opts.MetricsCertDir
	}
	return o
}

// monitorSeries makes the per-monitor series the metrics endpoint serves,
// nil when they are off (the default). Every replica serves them (see
// metrics.MonitorSeries for why and how to aggregate them).
func monitorSeries(opts Options) *metrics.MonitorSeries {
	if !opts.MonitorSeries {
		metrics.SetMonitorSeries(nil)
		return nil
	}
	s := &metrics.MonitorSeries{Max: opts.MonitorSeriesMax, Log: ctrl.Log.WithName("metrics")}
	metrics.SetMonitorSeries(s)
	return s
}

// seriesObserver is s as the engine's observer; a nil s is no observer
// (not an interface holding a nil pointer).
func seriesObserver(s *metrics.MonitorSeries) engine.SeriesObserver {
	if s == nil {
		return nil
	}
	return s
}
