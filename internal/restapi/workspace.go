package restapi

import (
	"encoding/json"
	"time"
)

// Whoami is GET /automation/whoami: the caller's workspace, access level
// and plan.
type Whoami struct {
	WorkspaceID            string       `json:"workspace_id"`
	UserEmail              *string      `json:"user_email"`
	AuthType               string       `json:"auth_type"` // api_key for key calls.
	APIKeyAccess           string       `json:"api_key_access" openapi:"enum=read_only|standard|automation"`
	WorkspaceRole          string       `json:"workspace_role"`
	ReadOnly               bool         `json:"read_only"`
	CanManageAlertChannels bool         `json:"can_manage_alert_channels"`
	Plan                   string       `json:"plan"`
	Market                 *string      `json:"market"`
	Limits                 WhoamiLimits `json:"limits"`
}

// WhoamiLimits are the plan limits whoami reports; null means unlimited.
type WhoamiLimits struct {
	Monitors           *int32 `json:"monitors"`
	MinIntervalSeconds int32  `json:"min_interval_seconds"`
	ProbeLocations     *int32 `json:"probe_locations"`
	StatusPages        *int32 `json:"status_pages"`
}

// ProbeRegion is one probe region of GET /regions, with its location and
// live state.
type ProbeRegion struct {
	Code        string  `json:"code"`
	Name        string  `json:"name"`
	City        *string `json:"city"`
	Country     *string `json:"country"`
	Continent   *string `json:"continent"`
	ISP         *string `json:"isp"`
	Online      bool    `json:"online"`
	Agents      int32   `json:"agents"`
	Monitors    int32   `json:"monitors"`
	LastContact *string `json:"last_contact" openapi:"format=date-time"`
}

// MaintenanceWindow is a maintenance window of GET /maintenance; monitors
// and groups are referenced by id. State is the live state (a scheduled
// window whose start has passed is ongoing); CurrentStart and CurrentEnd
// are the occurrence that is running or next.
type MaintenanceWindow struct {
	ID           string   `json:"id" openapi:"format=uuid"`
	Title        string   `json:"title"`
	Description  *string  `json:"description"`
	StartsAt     string   `json:"starts_at" openapi:"format=date-time"`
	EndsAt       string   `json:"ends_at" openapi:"format=date-time"`
	TimeZone     string   `json:"time_zone"`
	Recurrence   *string  `json:"recurrence"`
	Scope        string   `json:"scope"`
	MonitorIDs   []string `json:"monitor_ids"`
	GroupIDs     []string `json:"group_ids"`
	Impact       string   `json:"impact"`
	State        string   `json:"state" openapi:"enum=scheduled|ongoing|completed|cancelled"`
	CurrentStart *string  `json:"current_start" openapi:"format=date-time"`
	CurrentEnd   *string  `json:"current_end" openapi:"format=date-time"`
	Cancelled    bool     `json:"cancelled"`
}

// TestResult is the answer of a test delivery (POST /automation/otel/test):
// whether it was accepted, and the error when not.
type TestResult struct {
	OK    bool    `json:"ok"`
	Error *string `json:"error"`
}

// OTelExport is GET and PUT /automation/otel: the telemetry export settings
// (header values redacted) and how its deliveries fare.
type OTelExport struct {
	Endpoint      string             `json:"endpoint"`
	Protocol      string             `json:"protocol"`
	Headers       map[string]string  `json:"headers"` // Header names; every value is shown as ********.
	ServiceName   string             `json:"service_name"`
	Enabled       bool               `json:"enabled"`
	ExportSpans   bool               `json:"export_spans"`
	ExportMetrics bool               `json:"export_metrics"`
	CreatedAt     string             `json:"created_at" openapi:"format=date-time"`
	UpdatedAt     string             `json:"updated_at" openapi:"format=date-time"`
	Delivery      OTelDeliveryStatus `json:"delivery"`
}

// OTelDeliveryStatus is how the telemetry export's deliveries fare: the
// last success and failure, and the counters since the settings were made.
type OTelDeliveryStatus struct {
	LastSuccessAt   *time.Time `json:"last_success_at"`
	LastErrorAt     *time.Time `json:"last_error_at"`
	LastError       string     `json:"last_error"`
	SpansExported   int64      `json:"spans_exported"`
	PointsExported  int64      `json:"data_points_exported"`
	FailedExports   int64      `json:"failed_exports"`
	DroppedChecks   int64      `json:"dropped_checks"`
	SuccessfulCalls int64      `json:"successful_exports"`
}

// MaintenanceBody is the create and update body of a maintenance window:
// PUT and PATCH change only sent fields.
type MaintenanceBody struct {
	Title       Nullable[string] `json:"title" openapi:"nonnull,min=1,max=255"`
	Description Nullable[string] `json:"description" openapi:"max=5000"`
	StartsAt    Nullable[string] `json:"starts_at" openapi:"nonnull,format=date-time"` // Required on create.
	EndsAt      Nullable[string] `json:"ends_at" openapi:"nonnull,format=date-time"`   // Required on create; after starts_at.
	TimeZone    Nullable[string] `json:"time_zone" openapi:"nonnull"`                  // IANA.
	// Recurrence is a frequency, or an object with an interval and an end.
	Recurrence Nullable[MaintenanceRecurrence] `json:"recurrence" openapi:"orstring=none|daily|weekly|monthly"`
	Scope      Nullable[string]                `json:"scope" openapi:"nonnull,enum=all|monitors|groups"`
	MonitorIDs Nullable[[]string]              `json:"monitor_ids" openapi:"nonnull,max=500,itemformat=uuid"`
	GroupIDs   Nullable[[]string]              `json:"group_ids" openapi:"nonnull,max=100,itemformat=uuid"`
	Impact     Nullable[string]                `json:"impact" openapi:"nonnull,enum=low|medium|high"`
	Cancelled  Nullable[bool]                  `json:"cancelled" openapi:"nonnull"`
}

// MaintenanceRecurrence is a window's recurrence as an object; a frequency
// string alone ("weekly") decodes into it as well.
type MaintenanceRecurrence struct {
	Frequency string  `json:"frequency"`                                  // daily, weekly or monthly; none removes the recurrence.
	Interval  int32   `json:"interval,omitempty" openapi:"min=1,max=52"`  // Every how many periods; default 1.
	Until     *string `json:"until,omitempty" openapi:"format=date-time"` // When the recurrence ends; null for never.
}

// UnmarshalJSON accepts a frequency string or an object.
func (rb *MaintenanceRecurrence) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &rb.Frequency)
	}
	type plain MaintenanceRecurrence
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return &FieldDecodeError{Field: "recurrence", Msg: "must be a frequency or {frequency, interval, until}"}
	}
	*rb = MaintenanceRecurrence(p)
	return nil
}
