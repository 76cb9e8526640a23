package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Reasons of ProbeRefusals: a closed set, so agents cannot mint label values.
const (
	// RefusedUnauthenticated is a probe API request whose token speaks for
	// no region.
	RefusedUnauthenticated = "unauthenticated"
	// RefusedRegionMismatch is a request or result naming a region other
	// than its token's.
	RefusedRegionMismatch = "region_mismatch"
	// RefusedUnassigned is a result for a monitor its region does not check.
	RefusedUnassigned = "unassigned"
	// RefusedUnknownStatus is a result with a status the manager does not know.
	RefusedUnknownStatus = "unknown_status"
)

// ProbeRefusals counts what the probe API refused, by reason: requests
// without a valid token, and results (or polls) of a region other than the
// token's, for monitors the region does not check, or with unknown statuses.
var ProbeRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "uptime_operator_probe_refused_total",
	Help: "Probe API requests and results refused, by reason (unauthenticated, region_mismatch, unassigned, unknown_status).",
}, []string{"reason"})

func init() {
	ctrlmetrics.Registry.MustRegister(ProbeRefusals)
}
