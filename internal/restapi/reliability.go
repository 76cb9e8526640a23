package restapi

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
