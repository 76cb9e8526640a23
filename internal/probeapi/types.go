package probeapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
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
	TypeBrowser   = string(monv1.MonitorBrowser)
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
	// Config holds the type-specific settings.
	Config Config `json:"config"`
}

// Config is a monitor's type-specific settings: the flat object of the REST
// API's monitor `config`, with its keys and units. The model fills it from a
// Monitor (monitor.ConfigOf) and writes it back (monitor.ApplyConfig), the
// REST API decodes and renders it, and agents run it; no other type defines
// these keys. The `for` tag of each field names the monitor types that
// accept its key; the REST API refuses a key its type does not list. The
// doc comments and `openapi` tags are also the keys' entries in the REST
// API's document (restapi.MonitorConfig inlines this type), so they are
// written for the API's reader.
type Config struct {
	// Timeout bounds the whole check: 1000-60000 milliseconds for http, api,
	// multistep and mcp, 5000-120000 for browser, 1-30 seconds for ping,
	// port, udp and dns.
	Timeout int32 `json:"timeout,omitempty" for:"http api ping port udp dns multistep mcp browser"`
	HTTPConfig
	NetConfig
	UDPConfig
	CronConfig
	DNSConfig
	MultistepConfig
	MCPConfig
	BrowserConfig
}

// HTTPConfig configures http and api monitors; mcp monitors use its Headers.
type HTTPConfig struct {
	// Method is GET (default), HEAD, POST, PUT, PATCH, DELETE or OPTIONS.
	Method string `json:"method,omitempty" for:"http api" openapi:"enum=GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS"`
	// Headers are sent with the request.
	Headers Headers `json:"headers,omitempty" for:"http api mcp" openapi:"ref=RequestHeaders"`
	// Body is the request body.
	Body string `json:"body,omitempty" for:"http api"`
	// ExpectedStatusCodes replaces the default rule (2xx and 3xx up).
	ExpectedStatusCodes []int32 `json:"expected_status_codes,omitempty" for:"http api" openapi:"max=500"`
	// Keyword is text the response body must contain.
	Keyword string `json:"keyword,omitempty" for:"http api" openapi:"max=1000"`
	// KeywordCaseInsensitive compares the keyword ignoring case.
	KeywordCaseInsensitive bool `json:"keyword_case_insensitive,omitempty" for:"http api"`
	// MaxRedirects is the number of redirects followed (0-5); absent means 5.
	MaxRedirects *int32 `json:"max_redirects,omitempty" for:"http api" openapi:"nonnull,min=0,max=5"`
	// MaxResponseTimeMs marks slower responses down (failed); for browser
	// monitors the response time is the whole run (load, waits and steps).
	MaxResponseTimeMs *int32 `json:"max_response_time_ms,omitempty" for:"http api browser" openapi:"nonnull,min=1,max=600000"`
	// DegradedResponseTimeMs marks slower responses degraded; lower than
	// max_response_time_ms.
	DegradedResponseTimeMs *int32 `json:"degraded_response_time_ms,omitempty" for:"http api browser" openapi:"nonnull"`
	// MaxResponseBytes bounds how much of the body is read (default 1 MiB).
	MaxResponseBytes *int32 `json:"max_response_bytes,omitempty" for:"http api" openapi:"nonnull,min=1,max=10485760"`
	// Assertions are evaluated against the response.
	Assertions []Assertion `json:"assertions,omitempty" for:"http api" openapi:"max=50"`
}

// NetConfig configures ping, port and udp monitors.
type NetConfig struct {
	// Host is a hostname or IP address; required; it must be public.
	Host string `json:"host,omitempty" for:"ping port udp"`
	// Port is the TCP or UDP port; required.
	Port int32 `json:"port,omitempty" for:"port udp" openapi:"min=1,max=65535"`
	// PacketCount is the number of ICMP echoes (clamped to 1-10, default 3).
	PacketCount int32 `json:"packet_count,omitempty" for:"ping"`
	// TLS makes a port monitor perform a TLS handshake after connecting.
	TLS bool `json:"tls,omitempty" for:"port"`
}

// UDPConfig configures udp monitors (Host and Port come from NetConfig).
type UDPConfig struct {
	// Payload is the datagram sent, as text.
	Payload string `json:"payload,omitempty" for:"udp"`
	// PayloadHex is the datagram as hex, for binary protocols; it wins over
	// payload.
	PayloadHex string `json:"payload_hex,omitempty" for:"udp"`
	// ExpectedResponse is a regular expression the reply must match.
	ExpectedResponse string `json:"expected_response,omitempty" for:"udp"`
	// SilentIsUp treats a missing reply as up (for services that never answer).
	SilentIsUp bool `json:"silent_is_up,omitempty" for:"udp"`
}

// CronConfig configures cron monitors. Agents never run them (the manager
// evaluates heartbeats), but the keys belong to the one config shape.
type CronConfig struct {
	// CronExpression is the schedule the job runs on; required.
	CronExpression string `json:"cron_expression,omitempty" for:"cron"`
	// GraceSeconds is how late a ping may be.
	GraceSeconds int32 `json:"grace_seconds,omitempty" for:"cron" openapi:"min=0,max=604800"`
	// TimeZone is the IANA zone of the schedule.
	TimeZone string `json:"time_zone,omitempty" for:"cron"`
}

// DNSConfig configures dns monitors.
type DNSConfig struct {
	// RecordType is A (default), AAAA, CNAME, MX, NS, TXT, SOA, CAA or SRV.
	RecordType string `json:"record_type,omitempty" for:"dns"`
	// Name is the name queried.
	Name string `json:"name,omitempty" for:"dns"`
	// Resolver is "host:port" (port defaults to 53); empty means the probe's
	// system resolver.
	Resolver string `json:"resolver,omitempty" for:"dns"`
	// Protocol is "udp" (default) or "tcp".
	Protocol string `json:"protocol,omitempty" for:"dns"`
	// ExpectedValues are compared with the normalized answers.
	ExpectedValues []string `json:"expected_values,omitempty" for:"dns" openapi:"max=50"`
	// MatchMode is "any" (default: one expected value is present), "all"
	// (every expected value is present) or "exact" (the answers are exactly
	// the expected values).
	MatchMode string `json:"match_mode,omitempty" for:"dns"`
}

// MultistepConfig configures multistep monitors.
type MultistepConfig struct {
	// Steps run in order and share a cookie jar (at most 20).
	Steps []Step `json:"steps,omitempty" for:"multistep"`
}

// Step is one HTTP request of a multistep monitor. URL, headers and body may
// contain {{variable}} references to values extracted by earlier steps.
type Step struct {
	Name                string  `json:"name"`
	Method              string  `json:"method,omitempty"`
	URL                 string  `json:"url"`
	Headers             Headers `json:"headers,omitempty" openapi:"ref=RequestHeaders"`
	Body                string  `json:"body,omitempty"`
	ExpectedStatusCodes []int32 `json:"expected_status_codes,omitempty"`
	// Extract stores response values into variables for later steps.
	Extract    []Extract   `json:"extract,omitempty"`
	Assertions []Assertion `json:"assertions,omitempty"`
}

// Extract copies a value from a step's response into a variable.
type Extract struct {
	// Variable is the name used as {{Variable}}.
	Variable string `json:"variable"`
	// Source is "json_body" or "header".
	Source string `json:"source"`
	// Property is the JSON path ($.a.b[0]) or the header name.
	Property string `json:"property"`
}

// MCPConfig configures mcp monitors (the endpoint is Assignment.URL, request
// headers come from HTTPConfig.Headers).
type MCPConfig struct {
	// ExpectedTools must all be listed by tools/list.
	ExpectedTools []string `json:"expected_tools,omitempty" for:"mcp"`
	// ProtocolVersion is requested at initialize and must be what the server
	// negotiates.
	ProtocolVersion string `json:"protocol_version,omitempty" for:"mcp"`
	// ToolCall is a tool called once when set; a tool error makes the check
	// down.
	ToolCall *ToolCall `json:"tool_call,omitempty" for:"mcp" openapi:"nonnull"`
}

// BrowserConfig configures browser monitors (the page is Assignment.URL).
type BrowserConfig struct {
	// WaitForSelector is a CSS selector that must match a visible element
	// once the page has loaded.
	WaitForSelector string `json:"wait_for_selector,omitempty" for:"browser" openapi:"max=1024"`
	// WaitForText is text the rendered page must show.
	WaitForText string `json:"wait_for_text,omitempty" for:"browser" openapi:"max=1000"`
	// BrowserSteps run in order after the page loaded (at most 20).
	BrowserSteps []BrowserStep `json:"browser_steps,omitempty" for:"browser" openapi:"max=20"`
}

// Browser step actions (BrowserStep.Action).
const (
	ActionNavigate       = "navigate"
	ActionClick          = "click"
	ActionFill           = "fill"
	ActionWait           = "wait"
	ActionExpectText     = "expectText"
	ActionExpectSelector = "expectSelector"
	ActionEvaluate       = "evaluate"
)

// BrowserStep is one action of a browser monitor.
type BrowserStep struct {
	// Name labels the step in results.
	Name string `json:"name,omitempty"`
	// Action is navigate, click, fill, wait, expectText, expectSelector or
	// evaluate.
	Action string `json:"action" openapi:"enum=navigate|click|fill|wait|expectText|expectSelector|evaluate"`
	// URL is the page a navigate step loads.
	URL string `json:"url,omitempty"`
	// Selector is the CSS selector a click, fill, wait or expectSelector
	// step acts on.
	Selector string `json:"selector,omitempty"`
	// Value is what a fill step types: text, or a Secret reference
	// {"secret_ref": {"name", "key"}} the manager resolves for agents.
	Value *HeaderValue `json:"value,omitempty" openapi:"nonnull,ref=SecretValue"`
	// Text is what an expectText step waits for.
	Text string `json:"text,omitempty"`
	// Expression is the JavaScript an evaluate step evaluates; it must be
	// true.
	Expression string `json:"expression,omitempty"`
	// DurationMs is how long a wait step without selector pauses.
	DurationMs int32 `json:"duration_ms,omitempty"`
}

// ToolCall is one tools/call request.
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty" openapi:"object"`
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

// Assertion is one check on a response (api and multistep monitors).
type Assertion struct {
	// Source is what is asserted: status_code, response_time, body,
	// json_body or header.
	Source string `json:"source"`
	// Property is the header name (header) or JSON path (json_body).
	Property string `json:"property,omitempty"`
	// Operator is the comparison: equals, not_equals, contains,
	// not_contains, greater_than, less_than, greater_or_equal,
	// less_or_equal, exists, not_exists or matches.
	Operator string `json:"operator"`
	// Target is the value compared against; JSON numbers and booleans are
	// accepted and kept in their text form.
	Target Scalar `json:"target,omitempty" openapi:"any"`
}

// Scalar is a string that also decodes from a JSON number, boolean or null.
type Scalar string

// UnmarshalJSON accepts any JSON scalar.
func (s *Scalar) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = Scalar(v)
		return nil
	}
	switch string(b) {
	case "null":
		*s = ""
		return nil
	case "true", "false":
		*s = Scalar(b)
		return nil
	}
	if _, err := strconv.ParseFloat(string(b), 64); err != nil {
		return fmt.Errorf("decode assertion target: want a string, number or boolean")
	}
	*s = Scalar(b)
	return nil
}

// Default check timeouts by type, used when the config sets none; the
// documented defaults (docs/checks.md). Cron monitors have no check.
var defaultTimeouts = map[string]time.Duration{
	TypeHTTP: 30 * time.Second, TypeAPI: 30 * time.Second, TypeMCP: 30 * time.Second,
	TypePing: 10 * time.Second, TypePort: 10 * time.Second,
	TypeUDP: 5 * time.Second, TypeDNS: 5 * time.Second,
	TypeMultistep: 60 * time.Second, TypeBrowser: 60 * time.Second,
}

// DefaultTimeout is the check timeout of a monitor type whose config sets
// none (zero for cron).
func DefaultTimeout(typ string) time.Duration { return defaultTimeouts[typ] }

// TimeoutInSeconds reports whether config.timeout of typ counts seconds
// (ping, port, udp, dns) rather than milliseconds.
func TimeoutInSeconds(typ string) bool {
	return typ == TypePing || typ == TypePort || typ == TypeUDP || typ == TypeDNS
}

// ConfigTimeout is the timeout c sets for a monitor of type typ, else the
// type's default.
func ConfigTimeout(typ string, c *Config) time.Duration {
	switch {
	case c.Timeout <= 0:
		return DefaultTimeout(typ)
	case TimeoutInSeconds(typ):
		return time.Duration(c.Timeout) * time.Second
	}
	return time.Duration(c.Timeout) * time.Millisecond
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
	// trips, multistep step results, MCP tools, browser steps and timings.
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
