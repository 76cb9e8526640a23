package restapi

import "github.com/uptime-operator/uptime-operator/internal/reliability"

// Stats is GET /stats/:id/stats: check counts and response times of the
// last days.
type Stats struct {
	UptimePercentage  *float64 `json:"uptime_percentage"`
	TotalChecks       int64    `json:"total_checks"`
	SuccessfulChecks  int64    `json:"successful_checks"`
	FailedChecks      int64    `json:"failed_checks"`
	DegradedChecks    int64    `json:"degraded_checks"`
	AvgResponseTimeMs float64  `json:"avg_response_time_ms"`
	MinResponseTimeMs *int64   `json:"min_response_time_ms"`
	MaxResponseTimeMs *int64   `json:"max_response_time_ms"`
	Days              int      `json:"days"`
}

// SLOTarget is an SLO target of GET /reliability/slo-targets.
type SLOTarget struct {
	ID                          string   `json:"id" openapi:"format=uuid"`
	MonitorID                   *string  `json:"monitor_id" openapi:"format=uuid"`
	MonitorName                 string   `json:"monitor_name"`
	TargetPercentage            float64  `json:"target_percentage"`
	SLIType                     string   `json:"sli_type"`
	WindowMinutes               int32    `json:"window_minutes"`
	BurnRateFastThreshold       float64  `json:"burn_rate_fast_threshold"`
	BurnRateSlowThreshold       float64  `json:"burn_rate_slow_threshold"`
	IsEnabled                   bool     `json:"is_enabled"`
	CurrentSLI                  *float64 `json:"current_sli"`
	ErrorBudgetRemainingPercent *float64 `json:"error_budget_remaining_percent"`
	ErrorBudgetRemainingMinutes *float64 `json:"error_budget_remaining_minutes"`
	CreatedAt                   string   `json:"created_at" openapi:"format=date-time"`
}

// SeriesPoint is one bucket of a response-time series.
type SeriesPoint struct {
	At                string   `json:"at" openapi:"format=date-time"` // Start of the bucket.
	AvgResponseTimeMs *float64 `json:"avg_response_time_ms"`          // Null without a successful check.
	MinResponseTimeMs *int64   `json:"min_response_time_ms"`
	MaxResponseTimeMs *int64   `json:"max_response_time_ms"`
	Checks            int64    `json:"checks"`
	UptimePercentage  *float64 `json:"uptime_percentage"`
}

// ResponseTimeChart is GET /stats/:id/response-time-chart: buckets of 5
// minutes (1 day), an hour (up to 14 days) or a local day.
type ResponseTimeChart struct {
	Days        int           `json:"days"`
	StepSeconds int           `json:"step_seconds"`
	Points      []SeriesPoint `json:"points"`
}

// ResponseSeries is GET /stats/:id/response-series.
type ResponseSeries struct {
	Range       string        `json:"range" openapi:"enum=1h|6h|24h|7d|30d"`
	StepSeconds int           `json:"step_seconds"`
	Points      []SeriesPoint `json:"points"`
}

// Day is one day of GET /stats/:id/uptime-history and /stats/:id/24h-bars.
type Day struct {
	Date             string   `json:"date" openapi:"format=date"` // YYYY-MM-DD in the requested time zone.
	UptimePercentage *float64 `json:"uptime_percentage"`
	TotalChecks      int64    `json:"total_checks"`
	FailedChecks     int64    `json:"failed_checks"`
	Status           string   `json:"status,omitempty"` // Status of the day (24h-bars only).
}

// Days is the answer of the daily statistics, oldest day first.
type Days struct {
	Days []Day `json:"days"`
}

// RegionStatus is the latest check of one region the monitor is checked
// from.
type RegionStatus struct {
	Region         string  `json:"region"`
	RegionName     string  `json:"region_name"`
	Status         string  `json:"status" openapi:"enum=@checkStates"`
	CheckedAt      string  `json:"checked_at" openapi:"format=date-time"`
	ResponseTimeMs int64   `json:"response_time_ms"`
	StatusCode     *int    `json:"status_code"`
	ErrorMessage   *string `json:"error_message"`
}

// RegionStatuses is GET /stats/:id/region-statuses.
type RegionStatuses struct {
	Regions []RegionStatus `json:"regions"`
}

// PauseWindow is a time the monitor was paused.
type PauseWindow struct {
	PausedAt  string  `json:"paused_at" openapi:"format=date-time"`
	ResumedAt *string `json:"resumed_at" openapi:"format=date-time"` // Null while still paused.
}

// PauseWindows is GET /stats/:id/pause-windows.
type PauseWindows struct {
	Windows []PauseWindow `json:"windows"`
}

// MonitorReliability is GET /reliability/monitor/:monitorId and one monitor
// of GET /reliability/overview: uptime, incidents, MTTR and MTBF of the last
// 30 days, the health score with its components and the SLO state.
type MonitorReliability struct {
	MonitorID          string   `json:"monitor_id" openapi:"format=uuid"`
	Name               string   `json:"name"`
	CurrentStatus      string   `json:"current_status" openapi:"enum=@monitorStates"`
	Uptime24h          *float64 `json:"uptime_24h"`
	Uptime7d           *float64 `json:"uptime_7d"`
	Uptime30d          *float64 `json:"uptime_30d"`
	Incidents30d       int      `json:"incidents_30d"`
	OpenIncident       bool     `json:"open_incident"`
	DowntimeSeconds30d int64    `json:"downtime_seconds_30d"`
	MTTRSeconds        *float64 `json:"mttr_seconds"` // Mean time to recovery; null without a resolved incident.
	MTBFSeconds        *float64 `json:"mtbf_seconds"` // Mean time between failures; null with fewer than two incidents.
	HealthScore        *int     `json:"health_score" openapi:"min=0,max=100"`
	// What the health score is made of (docs/reliability.md).
	Health []HealthComponent `json:"health_components"`
	SLO    *SLOState         `json:"slo"` // Null without an SLO target.
	// The monitor's SLO target (GET /reliability/monitor/:monitorId only).
	SLOTarget *SLOTarget `json:"slo_target,omitempty"`
}

// HealthComponent is one part of a health score: its weight, its value
// (0-1) and the points it gives.
type HealthComponent struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
	Value  float64 `json:"value"`
	Points float64 `json:"points"`
}

// SLOState is an SLO target's evaluated state.
type SLOState struct {
	ID                          string         `json:"id" openapi:"format=uuid"`
	TargetPercentage            float64        `json:"target_percentage"`
	SLIType                     string         `json:"sli_type" openapi:"enum=availability|latency"`
	WindowMinutes               int32          `json:"window_minutes"`
	IsEnabled                   bool           `json:"is_enabled"`
	State                       string         `json:"state" openapi:"enum=met|breaching|budget_exhausted|burning_fast|burning_slow|pending|disabled"`
	CurrentSLI                  *float64       `json:"current_sli"`
	ErrorBudgetMinutes          *float64       `json:"error_budget_minutes"`
	ErrorBudgetRemainingMinutes *float64       `json:"error_budget_remaining_minutes"`
	ErrorBudgetRemainingPercent *float64       `json:"error_budget_remaining_percent"`
	BurnRates                   []BurnRate     `json:"burn_rates"`
	Conditions                  []SLOCondition `json:"conditions"`
	LastEvaluatedAt             *string        `json:"last_evaluated_at" openapi:"format=date-time"`
}

// BurnRate is how fast the error budget burns over one window.
type BurnRate struct {
	Window string  `json:"window"`
	Rate   float64 `json:"rate"`
}

// SLOCondition is a condition of the SLO resource's status.
type SLOCondition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	LastTransitionTime string `json:"last_transition_time" openapi:"format=date-time"`
}

// ReliabilityOverview is GET /reliability/overview: the workspace's figures
// and every monitor's report, least healthy first.
type ReliabilityOverview struct {
	GeneratedAt         string                `json:"generated_at" openapi:"format=date-time"`
	Monitors            int                   `json:"monitors"`
	Counts              map[string]int        `json:"counts"` // Monitors per current_status.
	OpenIncidents       int                   `json:"open_incidents"`
	Uptime24h           *float64              `json:"uptime_24h"` // Mean of the monitors that have one.
	Uptime7d            *float64              `json:"uptime_7d"`
	Uptime30d           *float64              `json:"uptime_30d"`
	Incidents30d        int                   `json:"incidents_30d"`
	MTTRSeconds         *float64              `json:"mttr_seconds"`
	MTBFSeconds         *float64              `json:"mtbf_seconds"`
	HealthScore         *int                  `json:"health_score" openapi:"min=0,max=100"` // Mean of the monitors' scores.
	SLOTargets          int                   `json:"slo_targets"`
	SLOTargetsBreaching int                   `json:"slo_targets_breaching"`
	SLOStates           map[string]int        `json:"slo_states"` // SLO targets per state.
	ByMonitor           []*MonitorReliability `json:"by_monitor"`
}

// Flakiness is GET /monitors/{id}/flakiness: the flakiness of the last 7
// and 30 days.
type Flakiness struct {
	MonitorID  string                      `json:"monitor_id" openapi:"format=uuid"`
	ComputedAt string                      `json:"computed_at" openapi:"format=date-time"`
	Days7      reliability.FlakinessWindow `json:"7d"`
	Days30     reliability.FlakinessWindow `json:"30d"`
}

// RolloutGate is GET /monitors/:id/gate and GET
// /reliability/slo-targets/:id/gate: whether a rollout may go on, and why.
// Argo Rollouts' web metric provider and Flagger evaluate it
// (docs/gitops.md): decision and go say the same, reasons every rule
// applied.
type RolloutGate struct {
	Decision     string       `json:"decision" openapi:"enum=go|stop"`
	Go           bool         `json:"go"`
	Reasons      []GateReason `json:"reasons"`
	MonitorID    string       `json:"monitor_id" openapi:"format=uuid"`
	MonitorName  string       `json:"monitor_name"`
	OpenIncident bool         `json:"open_incident"`
	// The open incident's id; null without one.
	OpenIncidentID *string `json:"open_incident_id" openapi:"format=uuid"`
	// The monitor's SLO; null without one.
	SLO         *GateSLO `json:"slo"`
	EvaluatedAt string   `json:"evaluated_at" openapi:"format=date-time"`
}

// GateReason is one rule a gate applied; ok false stops the rollout.
type GateReason struct {
	Code    string `json:"code" openapi:"enum=open_incident|error_budget|burn_rate|no_slo|slo_disabled|slo_pending|slo_stale"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// GateSLO is the SLO part of a rollout gate, from the SLO's evaluated
// status.
type GateSLO struct {
	ID            string   `json:"id" openapi:"format=uuid"`
	Target        float64  `json:"target"` // target_percentage
	SLIType       string   `json:"sli_type" openapi:"enum=availability|latency"`
	WindowMinutes int32    `json:"window_minutes"`
	IsEnabled     bool     `json:"is_enabled"`
	State         string   `json:"state" openapi:"enum=met|breaching|budget_exhausted|burning_fast|burning_slow|pending|disabled"`
	CurrentSLI    *float64 `json:"current_sli"`
	// Percent of the window's error budget left; null before the first evaluation.
	ErrorBudgetRemaining        *float64 `json:"error_budget_remaining"`
	ErrorBudgetRemainingMinutes *float64 `json:"error_budget_remaining_minutes"`
	MinErrorBudgetRemaining     float64  `json:"min_error_budget_remaining"`
	// The lower burn rate of 1h and 5m: above burn_rate_fast_threshold exactly when the fast alert fires.
	BurnRateFast *float64 `json:"burn_rate_fast"`
	// The lower burn rate of 6h and 30m: above burn_rate_slow_threshold exactly when the slow alert fires.
	BurnRateSlow          *float64     `json:"burn_rate_slow"`
	BurnRateFastThreshold float64      `json:"burn_rate_fast_threshold"`
	BurnRateSlowThreshold float64      `json:"burn_rate_slow_threshold"`
	MaxBurnRate           float64      `json:"max_burn_rate"`
	Windows               []GateWindow `json:"windows"`
	// When the SLO controller last evaluated it.
	EvaluatedAt *string `json:"evaluated_at" openapi:"format=date-time"`
}

// GateWindow is one chosen window's burn rate against max_burn_rate.
type GateWindow struct {
	Window   string  `json:"window" openapi:"enum=5m|30m|1h|6h"`
	BurnRate float64 `json:"burn_rate"`
	Exceeded bool    `json:"exceeded"`
}
