package probeapi

import (
	"encoding/json"
	"fmt"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
)

// Monitor types, the API's (monv1.MonitorTypes) as strings. Cron monitors never reach agents: the manager evaluates
// their heartbeats itself.
const (
	TypeHTTP      = string(monv1.MonitorHTTP)
	TypeAPI       = string(monv1.MonitorAPI)
	TypePing      = string(monv1.MonitorPing)
	TypePort      = string(monv1.MonitorPort)
	TypeUDP       = string(monv1.MonitorUDP)
	TypeCron      = string(monv1.MonitorCron)
	TypeDNS       = string(monv1.MonitorDNS)
	TypeMultistep = string(monv1.MonitorMultistep)
	TypeMCP       = string(monv1.MonitorMCP)
)

// Status is the verdict of one check.
type Status string

// Check statuses as in the REST API's check record.
const (
	// StatusUp means the target answered as expected.
	StatusUp Status = "up"
	// StatusDown means the target failed the check.
	StatusDown Status = "down"
	// StatusDegraded means the target answered, but slowly or partially.
	StatusDegraded Status = "degraded"
	// StatusBlocked means the address guard refused the target; the region
	// abstains from incident quorum.
	StatusBlocked Status = "blocked"
	// StatusUnknown means the probe could not reach a verdict (a fault on the
	// probe side, such as its own resolver failing); the region abstains.
	StatusUnknown Status = "unknown"
)

// Known reports whether s is one of the Status constants. The manager
// stores and counts (as a metric label) only known statuses.
func (s Status) Known() bool {
	switch s {
	case StatusUp, StatusDown, StatusDegraded, StatusBlocked, StatusUnknown:
		return true
	}
	return false
}

// Error types reported in Result.ErrorType.
const (
	ErrorTimeout          = "timeout"
	ErrorDNS              = "dns"
	ErrorConnection       = "connection"
	ErrorRefused          = "connection_refused"
	ErrorTLS              = "tls"
	ErrorHTTPStatus       = "http_status"
	ErrorKeyword          = "keyword"
	ErrorAssertion        = "assertion"
	ErrorResponseTime     = "response_time"
	ErrorBlocked          = "blocked"
	ErrorProtocol         = "protocol"
	ErrorInvalidConfig    = "invalid_config"
	ErrorPacketLoss       = "packet_loss"
	ErrorDNSAnswer        = "dns_answer"
	ErrorResponseMismatch = "response_mismatch"
	ErrorNoResponse       = "no_response"
	ErrorPortUnreachable  = "port_unreachable"
	ErrorStep             = "step_failed"
	// ErrorCredentialOrigin: a request would have carried a credential to
	// an origin other than the one it was stored for, and was not sent.
	ErrorCredentialOrigin = "credential_origin"
	ErrorMCP              = "mcp"
	ErrorNoBrowser        = "no_browser"
	ErrorInternal         = "internal"
)

// Assignment is one monitor definition as an agent runs it.
type Assignment struct {
	// ID is the monitor's UUID (metadata.uid of the Monitor).
	ID string `json:"id"`
	// Namespace is the monitor's workspace.
	Namespace string `json:"namespace"`
	// Name is the Monitor object's name.
	Name string `json:"name"`
	// Type is one of the Type constants.
	Type string `json:"type"`
	// URL is the target for http, api and mcp monitors.
	URL string `json:"url,omitempty"`
	// IntervalSeconds is the check interval (15-900).
	IntervalSeconds int `json:"interval_seconds"`
	// TimeoutMs is the effective timeout chosen by the manager; when zero the
	// agent derives it from Config.Timeout (see EffectiveTimeout).
	TimeoutMs int `json:"timeout_ms,omitempty"`
	// Regions lists every region the monitor runs in.
	Regions []string `json:"regions,omitempty"`
	// Generation is the Monitor's metadata.generation; it changes whenever the
	// definition changes, and results echo it back.
	Generation int64 `json:"generation,omitempty"`
	// Config holds the type-specific settings: the config struct of Type
	// (Config.HTTP for http and api, Config.Ping, ...; monv1's
	// MonitorTypeRegistry names it), the other fields unset. On the wire it
	// is the REST API's flat config object (monitorconfig), header values
	// resolved to text by the manager.
	Config monv1.MonitorSpec `json:"-"`
	// Credentials names the headers of Config whose values the manager
	// read from Secrets, each with the origin it may be sent to (see
	// Credential); agents send them nowhere else.
	Credentials []Credential `json:"credentials,omitempty"`
}

// assignmentJSON is Assignment on the wire: Config as its config object.
type assignmentJSON struct {
	*assignmentFields
	Config json.RawMessage `json:"config"`
}

type assignmentFields Assignment

// MarshalJSON writes Config as the config object of Type's struct.
func (a Assignment) MarshalJSON() ([]byte, error) {
	spec := a.Config
	spec.Type = monv1.MonitorType(a.Type)
	return json.Marshal(assignmentJSON{assignmentFields: (*assignmentFields)(&a), Config: monitorconfig.Marshal(&spec)})
}

// UnmarshalJSON reads the config object into the struct of Type, skipping
// keys this build does not know (a newer manager's); a type this build
// does not know keeps an empty Config (the agent reports it).
func (a *Assignment) UnmarshalJSON(b []byte) error {
	var w assignmentJSON
	w.assignmentFields = (*assignmentFields)(a)
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	a.Config = monv1.MonitorSpec{Type: monv1.MonitorType(a.Type)}
	if _, known := monv1.LookupMonitorType(a.Config.Type); known {
		if err := monitorconfig.UnmarshalLenient(&a.Config, w.Config); err != nil {
			return fmt.Errorf("decode config of monitor %s: %w", a.ID, err)
		}
	}
	return nil
}

// Assertion sources.
const (
	SourceStatusCode   = "status_code"
	SourceHeader       = "header"
	SourceJSONBody     = "json_body"
	SourceBody         = "body"
	SourceResponseTime = "response_time"
)

// Assertion operators.
const (
	OpEquals         = "equals"
	OpNotEquals      = "not_equals"
	OpContains       = "contains"
	OpNotContains    = "not_contains"
	OpGreaterThan    = "greater_than"
	OpLessThan       = "less_than"
	OpGreaterOrEqual = "greater_or_equal"
	OpLessOrEqual    = "less_or_equal"
	OpExists         = "exists"
	OpNotExists      = "not_exists"
	OpMatches        = "matches"
)

// ConfigTimeout is the check timeout spec's config sets for a monitor of
// type typ (its timeoutMs or timeoutSeconds, monitorconfig.Timeout), else
// the type's default (monv1.MonitorTypeRegistry).
func ConfigTimeout(typ string, spec *monv1.MonitorSpec) time.Duration {
	s := *spec
	s.Type = monv1.MonitorType(typ)
	if d := monitorconfig.Timeout(&s); d > 0 {
		return d
	}
	info, _ := monv1.LookupMonitorType(s.Type)
	return info.DefaultTimeout
}

// EffectiveTimeout returns the timeout a check of a runs with: TimeoutMs when
// the manager set it (it always does), else ConfigTimeout.
func EffectiveTimeout(a *Assignment) time.Duration {
	if a.TimeoutMs > 0 {
		return time.Duration(a.TimeoutMs) * time.Millisecond
	}
	return ConfigTimeout(a.Type, &a.Config)
}

// AssignmentList is every assignment of one region at one revision.
type AssignmentList struct {
	Region string `json:"region"`
	// Revision changes whenever any assignment of the region changes, and
	// whenever an ad-hoc check is queued.
	Revision    string       `json:"revision"`
	Assignments []Assignment `json:"assignments"`
	// Browser is where the region's browser checks get their browser and
	// how many run at once (the ProbeRegion's spec.browser); nil means a
	// local Chromium and the default concurrency.
	Browser *RegionBrowser `json:"browser,omitempty"`
	// AdHoc are checks to run once, now (run-check and test requests aimed
	// at this region). The agent runs each once and pushes its result with
	// Result.ID = RequestID.
	AdHoc []AdHocCheck `json:"ad_hoc,omitempty"`
}

// RegionBrowser is a region's browser settings as agents receive them.
type RegionBrowser struct {
	// Endpoint is the DevTools WebSocket URL of a remote browser; empty
	// means a local Chromium.
	Endpoint string `json:"endpoint,omitempty"`
	// MaxConcurrent bounds the browser checks an agent runs at once.
	MaxConcurrent int `json:"max_concurrent,omitempty"`
}

// AdHocCheck is a one-off check requested through the API.
type AdHocCheck struct {
	// RequestID becomes the result's id.
	RequestID  string     `json:"request_id"`
	Assignment Assignment `json:"assignment"`
}

// Result is one check record produced by an agent.
type Result struct {
	// ID is a UUID made by the agent; the server ingests each id once.
	ID        string `json:"id"`
	MonitorID string `json:"monitor_id"`
	// Generation is the Assignment.Generation the check ran with.
	Generation int64  `json:"generation,omitempty"`
	Region     string `json:"region"`
	// CheckedAt is when the check started, UTC, microsecond precision.
	CheckedAt      time.Time `json:"checked_at"`
	Status         Status    `json:"status"`
	StatusCode     *int      `json:"status_code"`
	ResponseTimeMs int64     `json:"response_time_ms"`
	ErrorType      string    `json:"error_type,omitempty"`
	ErrorMessage   string    `json:"error_message,omitempty"`
	Timings        *Timings  `json:"timings,omitempty"`
	TLS            *TLSInfo  `json:"tls,omitempty"`
	// Details holds type-specific data: DNS answers, ping loss and round
	// trips, multistep step results, MCP tools.
	Details json.RawMessage `json:"details,omitempty"`
	// Screenshot is a JPEG of the page a failed browser check ended on, at
	// most MaxScreenshotBytes; the manager stores it beside the check.
	Screenshot []byte `json:"screenshot,omitempty"`
}

// MaxScreenshotBytes bounds Result.Screenshot: a batch of results stays
// far below MaxBatchBytes even when several carry one.
const MaxScreenshotBytes = 200 << 10

// Timings breaks a check's latency down, in milliseconds.
type Timings struct {
	DNSMs       float64 `json:"dns_ms,omitempty"`
	ConnectMs   float64 `json:"connect_ms,omitempty"`
	TLSMs       float64 `json:"tls_ms,omitempty"`
	FirstByteMs float64 `json:"first_byte_ms,omitempty"`
}

// TLSInfo describes the leaf certificate the target presented.
type TLSInfo struct {
	NotAfter time.Time `json:"not_after"`
	Issuer   string    `json:"issuer"`
	Subject  string    `json:"subject"`
}

// ResultBatch is a set of results pushed by one agent.
type ResultBatch struct {
	Region  string   `json:"region"`
	AgentID string   `json:"agent_id"`
	Results []Result `json:"results"`
	// Replayed counts the results of this batch whose delivery an earlier
	// failed push held back (the manager was unreachable or refused the
	// token) or that an earlier run of the agent left on disk: the backlog
	// the agent replays. The manager counts them per region
	// (uptime_operator_probe_replayed_results_total); it judges them like
	// any other result.
	Replayed int `json:"replayed,omitempty"`
	// Backlog is how many results the agent still held, beyond this
	// batch, when it sent it.
	Backlog int `json:"backlog,omitempty"`
}

// ResultsResponse answers a ResultBatch.
type ResultsResponse struct {
	// Accepted counts results stored by this request.
	Accepted int `json:"accepted"`
	// Duplicates counts results whose id was already stored.
	Duplicates int `json:"duplicates"`
	// Refused counts results the server would not store: for a monitor the
	// region does not check (moved away while the check ran, or forged), or
	// with a status it does not know. The agent does not send them again.
	Refused int `json:"refused,omitempty"`
}
