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

// ProbeReplayed counts, per region, the results agents delivered late: held
// back by a failed push (the manager unreachable, the token refused) or left
// on disk by an earlier run of the agent, as the agent marks its batches
// (probeapi.ResultBatch.Replayed). Each is stored once, however often it
// was sent (uptime_operator_duplicate_results_total counts the repeats), but
// a batch the manager stored and whose answer was lost counts again when
// the agent re-sends it.
var ProbeReplayed = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "uptime_operator_probe_replayed_results_total",
	Help: "Results probe agents delivered after a failed push held them back (their buffered backlog), by region.",
}, []string{"region"})

// ProbeBacklog is, per region, the results its agents still held when they
// last pushed to this replica (probeapi.ResultBatch.Backlog), summed over
// the agents heard within the online window.
var ProbeBacklog = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "uptime_operator_probe_region_backlog_results",
	Help: "Results the region's agents still held, as they reported with their last push to this replica.",
}, []string{"region"})

func init() {
	ctrlmetrics.Registry.MustRegister(ProbeRefusals, ProbeReplayed, ProbeBacklog)
}
