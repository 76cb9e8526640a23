package restapi

import (
	"encoding/json"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// Check is one check record of the history endpoints
// (GET /monitors/:id/checks and friends): one check from one region.
type Check struct {
	ID             string  `json:"id"`
	CheckedAt      string  `json:"checked_at" openapi:"format=date-time"` // UTC with microseconds.
	Region         string  `json:"region"`
	Status         string  `json:"status" openapi:"enum=@checkStates"`
	StatusCode     *int    `json:"status_code"`
	ResponseTimeMs int64   `json:"response_time_ms"`
	ErrorType      *string `json:"error_type"`
	ErrorMessage   *string `json:"error_message"`
}

// CheckPage is one page of GET /monitors/:id/checks, newest first;
// NextBefore is the cursor of the next older page (null on the last).
type CheckPage struct {
	Items []Check `json:"items"` // Newest first.
	// Pass unchanged as `before` for older checks (microsecond precision);
	// null: no more.
	NextBefore *string `json:"next_before"`
}

// CheckResult is the answer of a one-off check (POST /monitors/:id/run-check,
// POST /monitors/test): the check record with the probe's timings, TLS
// details and type-specific details.
type CheckResult struct {
	Check
	Timings *probeapi.Timings `json:"timings,omitempty"`
	TLS     *probeapi.TLSInfo `json:"tls,omitempty"`
	Details json.RawMessage   `json:"details,omitempty"`
}

// CheckList is GET /stats/:id/checks: the latest checks, newest first.
type CheckList struct {
	Items []Check `json:"items"`
}

// DNSRecords is GET /monitors/:id/dns-records: what a DNS monitor expects,
// the answers it observed (newest first) and the observations that changed
// the answer.
type DNSRecords struct {
	Records        []DNSObservation `json:"records"`
	Changes        []DNSObservation `json:"changes"`
	ExpectedValues []string         `json:"expected_values"`
}

// DNSObservation is one answer a DNS monitor observed.
type DNSObservation struct {
	ObservedAt string   `json:"observed_at" openapi:"format=date-time"`
	RecordType string   `json:"record_type"`
	Answers    []string `json:"answers"`
	Changed    bool     `json:"changed"` // The answer differs from the one observed before.
}

// DNSAccepted is POST /monitors/:id/dns-records/accept: the latest observed
// answer, now the monitor's expected values.
type DNSAccepted struct {
	MonitorID      string   `json:"monitor_id" openapi:"format=uuid"`
	RecordType     string   `json:"record_type"`
	ObservedAt     string   `json:"observed_at" openapi:"format=date-time"`
	ExpectedValues []string `json:"expected_values"`
	MatchMode      string   `json:"match_mode"`
}
