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
