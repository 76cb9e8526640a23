package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MonitorType is the kind of check a Monitor runs. It cannot change after
// creation: history of one type means nothing for another.
// +kubebuilder:validation:Enum=http;api;ping;port;udp;cron;dns;multistep;mcp;grpc;websocket;browser
type MonitorType string

// The nine monitor types of the specification.
const (
	MonitorHTTP      MonitorType = "http"
	MonitorAPI       MonitorType = "api"
	MonitorPing      MonitorType = "ping"
	MonitorPort      MonitorType = "port"
	MonitorUDP       MonitorType = "udp"
	MonitorCron      MonitorType = "cron"
	MonitorDNS       MonitorType = "dns"
	MonitorMultistep MonitorType = "multistep"
	MonitorMCP       MonitorType = "mcp"
)

// MonitorTypeRegistry is the one table of monitor types, in the
// specification's order, then the extension types: one line per type. Everything else about a type is
// derived from its line and from its config struct (the MonitorSpec field
// the line names): the REST config keys, their validation and OpenAPI
// schema, the agent's assignment encoding and the docs' tables
// (internal/monitorconfig reads the struct). The probe that runs the type
// registers itself in its own file (probes/<type>.go). docs/architecture.md
// ("Adding a check type") is the recipe.
//
// The Enum marker on MonitorType and the url rule on MonitorSpec must stay
// literals for controller-gen; TestEnumMarkersMatchLists and
// TestURLRuleMatchesRegistry keep them equal to this table.
var MonitorTypeRegistry = []MonitorTypeInfo{
	{Type: MonitorHTTP, Config: "http", URL: URLRequired, DefaultTimeout: 30 * time.Second},
	{Type: MonitorAPI, Config: "http", URL: URLRequired, DefaultTimeout: 30 * time.Second},
	{Type: MonitorPing, Config: "ping", DefaultTimeout: 10 * time.Second},
	{Type: MonitorPort, Config: "port", DefaultTimeout: 10 * time.Second},
	{Type: MonitorUDP, Config: "udp", DefaultTimeout: 5 * time.Second},
	{Type: MonitorCron, Config: "cron"},
	{Type: MonitorDNS, Config: "dns", DefaultTimeout: 5 * time.Second},
	{Type: MonitorMultistep, Config: "multistep", DefaultTimeout: 60 * time.Second},
	{Type: MonitorMCP, Config: "mcp", URL: URLHTTPS, DefaultTimeout: 30 * time.Second},
	{Type: MonitorGRPC, Config: "grpc", Extension: true, DefaultTimeout: 10 * time.Second},
	{Type: MonitorWebSocket, Config: "websocket", Extension: true, DefaultTimeout: 10 * time.Second},
	{Type: MonitorBrowser, Config: "browser", Extension: true, URL: URLRequired, DefaultTimeout: 60 * time.Second},
}

// MonitorTypes are the monitor types of MonitorTypeRegistry, in its order:
// the one list the REST API, the MCP server and the probe wire contract take
// theirs from.
var MonitorTypes = func() []MonitorType {
	out := make([]MonitorType, len(MonitorTypeRegistry))
	for i, r := range MonitorTypeRegistry {
		out[i] = r.Type
	}
	return out
}()

// MonitorTypeNames are MonitorTypes as strings, for enums and messages.
func MonitorTypeNames() []string {
	out := make([]string, len(MonitorTypes))
	for i, t := range MonitorTypes {
		out[i] = string(t)
	}
	return out
}

// MonitorTypeInfo is one line of MonitorTypeRegistry.
// +kubebuilder:object:generate=false
type MonitorTypeInfo struct {
	// Type is the type's name (spec.type, the REST API's type).
	Type MonitorType
	// Config is the json name of the MonitorSpec field that holds the
	// type's settings (a pointer to its config struct); http and api share
	// "http". The REST API's config object and the agent's assignment carry
	// that struct's fields under snake_case keys.
	Config string
	// Extension marks a type beyond the specification's nine: the REST
	// document and the MCP tools name it as one, and a client that only
	// uses the specification's types never meets it.
	Extension bool
	// URL says whether the type checks spec.url.
	URL URLRule
	// DefaultTimeout is the check timeout when the config sets none (the
	// struct's timeoutMs or timeoutSeconds). Zero for a type that agents do
	// not run (cron: the manager evaluates heartbeats).
	DefaultTimeout time.Duration
}

// URLRule says whether a monitor type checks spec.url.
type URLRule int

// URL rules of MonitorTypeInfo.
const (
	// URLNone types refuse spec.url (their target is in their config).
	URLNone URLRule = iota
	// URLRequired types need an http:// or https:// URL.
	URLRequired
	// URLHTTPS types need an https:// URL.
	URLHTTPS
)

// LookupMonitorType is the registry line of t ("" is http, the default
// type); ok is false for an unknown type.
func LookupMonitorType(t MonitorType) (info MonitorTypeInfo, ok bool) {
	if t == "" {
		t = MonitorHTTP
	}
	for _, r := range MonitorTypeRegistry {
		if r.Type == t {
			return r, true
		}
	}
	return MonitorTypeInfo{}, false
}

// MonitorSpec is the desired configuration of a Monitor.
// +kubebuilder:validation:XValidation:rule="self.type != 'mcp' || (has(self.url) && self.url.startsWith('https://'))",message="url: mcp monitors need an https:// URL",fieldPath=".url"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['http','api','mcp','browser']) || has(self.url)",message="url: required for http, api, mcp and browser monitors",fieldPath=".url"
// +kubebuilder:validation:XValidation:rule="!has(self.http) || !has(self.http.assertions) || size(self.http.assertions) == 0 || self.type == 'api'",message="assertions are only allowed for api monitors",fieldPath=".http.assertions"
type MonitorSpec struct {
	// name is the display name shown in lists, alerts and status pages (1-255
	// characters). Defaults to metadata.name.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name,omitempty"`

	// type is the check type; it cannot change after creation.
	// +optional
	// +kubebuilder:default=http
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="type cannot change after creation"
	Type MonitorType `json:"type,omitempty"`

	// url is the target of http, api and mcp monitors: a valid http:// or
	// https:// URL (mcp needs https://) that resolves to a public address unless
	// the cluster allows private targets.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	URL string `json:"url,omitempty"`

	// intervalSeconds is the time between checks from each region (15-900).
	// Defaults to 120, or to the plan's minimum interval when that is higher.
	// +optional
	// +kubebuilder:validation:Minimum=15
	// +kubebuilder:validation:Maximum=900
	IntervalSeconds int32 `json:"intervalSeconds,omitempty"`

	// groupRef puts the monitor in a MonitorGroup of the same namespace.
	// +optional
	GroupRef *LocalObjectReference `json:"groupRef,omitempty"`

	// escalationPolicyRef names the EscalationPolicy of the same namespace that
	// escalates this monitor's incidents.
	// +optional
	EscalationPolicyRef *LocalObjectReference `json:"escalationPolicyRef,omitempty"`

	// tags label the monitor for filtering and bulk actions: up to 20, 1-32
	// characters each, lower-cased and de-duplicated on admission.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=32
	// +listType=atomic
	Tags []string `json:"tags,omitempty"`

	// regions are the ProbeRegion codes that check this monitor (1-50). Empty
	// means the plan's default locations. Allowed codes depend on the plan.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=32
	// +listType=set
	Regions []string `json:"regions,omitempty"`

	// paused stops checks and alerts while keeping history. Heartbeat pings of a
	// paused cron monitor are answered 200 and ignored.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// key is the monitoring-as-code key (1-128 characters: letters, digits and
	// . _ : / -, starting with a letter or digit), unique in the namespace.
	// /automation/monitors/:key reads and writes the monitor that carries it.
	// It is a selectable field (`kubectl get monitors --field-selector
	// spec.key=KEY`), which is how admission finds a duplicate without
	// reading every Monitor of the namespace.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._:/-]*$`
	Key string `json:"key,omitempty"`

	// notificationEmails are per-monitor alert recipients (up to 20).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=254
	// +listType=set
	NotificationEmails []string `json:"notificationEmails,omitempty"`

	// dependsOn names parent Monitors of the same namespace (up to 20). While a
	// parent has an open incident, incidents of this monitor are recorded with
	// their alerts suppressed (suppression mode suppress_child_if_parent_down).
	// Needs a plan with dependencies.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	DependsOn []LocalObjectReference `json:"dependsOn,omitempty"`

	// confirmation tunes when region failures open an incident.
	// +optional
	Confirmation *ConfirmationSpec `json:"confirmation,omitempty"`

	// http configures http and api monitors.
	// +optional
	HTTP *HTTPConfig `json:"http,omitempty"`
	// ping configures ping monitors.
	// +optional
	Ping *PingConfig `json:"ping,omitempty"`
	// port configures port (TCP) monitors.
	// +optional
	Port *PortConfig `json:"port,omitempty"`
	// udp configures udp monitors.
	// +optional
	UDP *UDPConfig `json:"udp,omitempty"`
	// cron configures cron (heartbeat) monitors.
	// +optional
	Cron *CronConfig `json:"cron,omitempty"`
	// dns configures dns monitors.
	// +optional
	DNS *DNSConfig `json:"dns,omitempty"`
	// multistep configures multistep monitors.
	// +optional
	Multistep *MultistepConfig `json:"multistep,omitempty"`
	// mcp configures mcp (Model Context Protocol server) monitors.
	// +optional
	MCP *MCPConfig `json:"mcp,omitempty"`
	// grpc configures grpc (gRPC health) monitors, an extension type.
	// +optional
	GRPC *GRPCConfig `json:"grpc,omitempty"`
	// websocket configures websocket monitors, an extension type.
	// +optional
	WebSocket *WebSocketConfig `json:"websocket,omitempty"`
	// browser configures browser monitors (headless Chromium; an extension
	// beyond the specification's nine types).
	// +optional
	Browser *BrowserConfig `json:"browser,omitempty"`
}

// ConfirmationSpec is the quorum rule of a monitor: an incident opens when at
// least `regions` voting regions report failure and they are a majority of the
// voting regions (unless majority is false). Regions whose checks are blocked
// or unknown abstain.
type ConfirmationSpec struct {
	// regions is the minimum number of failing regions that open an incident
	// (1-50). Defaults to 2 when the monitor has two or more regions, else 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	Regions int32 `json:"regions,omitempty"`
	// majority also requires failing regions to be more than half of the voting
	// regions. Defaults to true.
	// +optional
	Majority *bool `json:"majority,omitempty"`
}

// HTTPMethod is an HTTP request method a check may send.
// +kubebuilder:validation:Enum=GET;HEAD;POST;PUT;PATCH;DELETE;OPTIONS
type HTTPMethod string

// HTTPHeader is one request header; its value is literal or read from a Secret.
// +kubebuilder:validation:XValidation:rule="has(self.value) != has(self.valueFrom)",message="exactly one of value and valueFrom is required"
type HTTPHeader struct {
	// name is the header name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[!#$%&'*+.^_|~0-9A-Za-z-]+$`
	Name string `json:"name"`
	// value is the literal header value. It is stored in the Monitor as
	// written, so anyone who may read Monitors reads it: give credentials
	// (basic-auth, bearer tokens, API keys) as valueFrom. Values written
	// through the REST API are moved to the Monitor's own Secret
	// <monitor>-credentials (owned by the Monitor) and referenced from here.
	// +optional
	// +kubebuilder:validation:MaxLength=8192
	Value *string `json:"value,omitempty"`
	// valueFrom reads the value from a key of a Secret of the Monitor's
	// namespace, for credentials. The Secret must be the Monitor's own
	// <monitor>-credentials or carry the label
	// monitoring.uptime-operator.io/credentials: "true"; Secrets the
	// operator makes (signing secrets, page passwords, API keys, other
	// Monitors' credentials) are never read. Agents receive the value in
	// their assignments only; the Secret may be created after the Monitor
	// (its Configured condition reports a missing or refused one).
	// +optional
	ValueFrom *SecretKeySelector `json:"valueFrom,omitempty"`
}

// HTTPConfig configures http and api monitors.
// +kubebuilder:validation:XValidation:rule="!has(self.degradedResponseTimeMs) || !has(self.maxResponseTimeMs) || self.degradedResponseTimeMs < self.maxResponseTimeMs",message="degradedResponseTimeMs must be lower than maxResponseTimeMs",fieldPath=".degradedResponseTimeMs"
type HTTPConfig struct {
	// method is the request method. Defaults to GET.
	// +optional
	Method HTTPMethod `json:"method,omitempty" wire:",upper"`
	// headers are sent with every request (up to 50).
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	Headers []HTTPHeader `json:"headers,omitempty"`
	// body is the request body.
	// +optional
	// +kubebuilder:validation:MaxLength=32768
	Body string `json:"body,omitempty"`
	// timeoutMs is the request timeout in milliseconds (1000-60000). Defaults
	// to 30000.
	// +optional
	// +kubebuilder:validation:Minimum=1000
	// +kubebuilder:validation:Maximum=60000
	TimeoutMs int32 `json:"timeoutMs,omitempty" wire:"timeout"`
	// expectedStatusCodes are the status codes that count as up (up to 500).
	// Empty means any 2xx or 3xx final response.
	// +optional
	// +kubebuilder:validation:MaxItems=500
	// +kubebuilder:validation:items:Minimum=100
	// +kubebuilder:validation:items:Maximum=599
	// +listType=atomic
	ExpectedStatusCodes []int32 `json:"expectedStatusCodes,omitempty"`
	// keyword is text the response body must contain (up to 1000 characters).
	// +optional
	// +kubebuilder:validation:MaxLength=1000
	Keyword string `json:"keyword,omitempty"`
	// keywordCaseInsensitive matches keyword without regard to case.
	// +optional
	KeywordCaseInsensitive bool `json:"keywordCaseInsensitive,omitempty"`
	// maxRedirects is how many redirects are followed (0-5); each hop is
	// re-checked by the address guard. Defaults to 5.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	MaxRedirects *int32 `json:"maxRedirects,omitempty"`
	// reuseConnection keeps a check's connection open for the monitor's
	// next check (HTTP/1.1 keep-alive) instead of opening a new one each
	// time. Off by default: a new connection measures what a user's first
	// request pays (DNS, connect and TLS time) and catches failures of
	// those steps. With reuse, a check that finds its connection still open
	// measures only the request and the response (its dns, connect and tls
	// timings are 0; the certificate is the one of the handshake that
	// opened it) and costs both ends less CPU. Applies to GET and HEAD
	// requests without a body; a connection the server closed in between
	// is replaced at once, within the same check.
	// +optional
	ReuseConnection bool `json:"reuseConnection,omitempty"`
	// maxResponseTimeMs marks slower responses as down (1-600000).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600000
	MaxResponseTimeMs *int32 `json:"maxResponseTimeMs,omitempty"`
	// degradedResponseTimeMs marks slower responses as degraded; it must be
	// lower than maxResponseTimeMs.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600000
	DegradedResponseTimeMs *int32 `json:"degradedResponseTimeMs,omitempty"`
	// maxResponseBytes is the most of the body that is read (1-10485760).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10485760
	MaxResponseBytes *int32 `json:"maxResponseBytes,omitempty"`
	// assertions are checked against each response of an api monitor (up to 50).
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	Assertions []Assertion `json:"assertions,omitempty"`
}

// AssertionSource is the part of a response an assertion reads.
// +kubebuilder:validation:Enum=status_code;header;json_body;body;response_time
type AssertionSource string

// AssertionOperator compares the value read with the target.
// +kubebuilder:validation:Enum=equals;not_equals;contains;not_contains;greater_than;less_than;greater_or_equal;less_or_equal;exists;not_exists;matches
type AssertionOperator string

// Assertion is one rule an api response must satisfy.
// +kubebuilder:validation:XValidation:rule="!(self.source in ['header','json_body']) || has(self.property)",message="property is required for header and json_body assertions",fieldPath=".property"
type Assertion struct {
	// source is what the assertion reads.
	// +required
	Source AssertionSource `json:"source"`
	// property is the header name (header) or JSON path (json_body) such as
	// $.data[0].id; [*] and .* select every element or member, and the path
	// then reads as the array of the values reached.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Property string `json:"property,omitempty"`
	// operator compares the value with target.
	// +required
	Operator AssertionOperator `json:"operator"`
	// target is the expected value; not used by exists and not_exists.
	// +optional
	// +kubebuilder:validation:MaxLength=1000
	Target string `json:"target,omitempty" wire:",scalar"`
}

// PingConfig configures ICMP echo checks.
type PingConfig struct {
	// host is the hostname or IP address to ping; it must be public unless the
	// cluster allows private targets.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Host string `json:"host" guard:"host"`
	// packetCount is how many echo requests are sent; values are clamped to
	// 1-10. Defaults to 3.
	// +optional
	PacketCount int32 `json:"packetCount,omitempty"`
	// timeoutSeconds bounds the whole check (1-30). Defaults to 10.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty" wire:"timeout"`
}

// PortConfig configures TCP connect checks.
type PortConfig struct {
	// host is the hostname or IP address to connect to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Host string `json:"host" guard:"host"`
	// port is the TCP port (1-65535).
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
	// tls also performs a TLS handshake and reports the certificate.
	// +optional
	TLS bool `json:"tls,omitempty"`
	// timeoutSeconds bounds the check (1-30). Defaults to 10.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty" wire:"timeout"`
}

// UDPConfig configures UDP request/response checks.
type UDPConfig struct {
	// host is the hostname or IP address to send to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Host string `json:"host" guard:"host"`
	// port is the UDP port (1-65535).
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
	// payload is the datagram sent (text; see payloadHex for binary).
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Payload string `json:"payload,omitempty"`
	// payloadHex is the datagram as hex, for binary protocols.
	// +optional
	// +kubebuilder:validation:MaxLength=8192
	// +kubebuilder:validation:Pattern=`^([0-9a-fA-F]{2})*$`
	PayloadHex string `json:"payloadHex,omitempty"`
	// expectedResponse is a regular expression the reply must match. Empty
	// means any reply counts as up.
	// +optional
	// +kubebuilder:validation:MaxLength=1000
	ExpectedResponse string `json:"expectedResponse,omitempty"`
	// silentIsUp treats no reply within the timeout as up (for fire-and-forget
	// protocols). Otherwise silence is unknown: UDP cannot tell a silent
	// service from a lost datagram. An ICMP port-unreachable is always down.
	// +optional
	SilentIsUp bool `json:"silentIsUp,omitempty"`
	// timeoutSeconds bounds the check (1-30). Defaults to 5.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty" wire:"timeout"`
}

// CronConfig configures heartbeat monitors: the job pings its heartbeat URL and
// a missed run (per the cron expression plus grace) opens an incident.
type CronConfig struct {
	// cronExpression is the job's schedule (5 fields, or a descriptor such as
	// @hourly).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	CronExpression string `json:"cronExpression"`
	// graceSeconds is how late a ping may arrive (0-604800).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=604800
	GraceSeconds int32 `json:"graceSeconds,omitempty"`
	// timeZone is the IANA zone the expression is read in. Defaults to UTC.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`
}

// DNSRecordType is a DNS record type a dns monitor queries.
// +kubebuilder:validation:Enum=A;AAAA;CNAME;MX;NS;TXT;SOA;CAA;SRV
type DNSRecordType string

// DNSMatchMode says how answers are compared with expected values.
// +kubebuilder:validation:Enum=any;all;exact
type DNSMatchMode string

// DNSConfig configures DNS record checks.
type DNSConfig struct {
	// name is the domain name queried.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// recordType is the record type queried. Defaults to A.
	// +optional
	RecordType DNSRecordType `json:"recordType,omitempty" wire:",upper"`
	// resolver is the server asked, as host or host:port. Empty means the
	// probe's system resolver.
	// +optional
	// +kubebuilder:validation:MaxLength=260
	Resolver string `json:"resolver,omitempty"`
	// protocol is udp (default) or tcp.
	// +optional
	// +kubebuilder:validation:Enum=udp;tcp
	Protocol string `json:"protocol,omitempty"`
	// expectedValues are the answers expected (up to 50), written as the
	// record's presentation value (an address, a target name, "10 mx.example.").
	// Empty means any non-empty answer is up; changes are still recorded.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MaxLength=1024
	// +listType=atomic
	ExpectedValues []string `json:"expectedValues,omitempty"`
	// matchMode: any (one expected value is answered), all (every expected
	// value is answered) or exact (the answer set equals the expected set).
	// Defaults to any.
	// +optional
	MatchMode DNSMatchMode `json:"matchMode,omitempty"`
	// timeoutSeconds bounds the query (1-30). Defaults to 5.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty" wire:"timeout"`
}

// MultistepConfig configures a sequence of HTTP requests run in order with a
// shared cookie jar; values extracted by one step are available to later steps
// as {{name}}.
type MultistepConfig struct {
	// steps run in order; the first failing step fails the run (1-20).
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	Steps []MultistepStep `json:"steps"`
	// timeoutMs bounds the whole run (1000-120000). Defaults to 60000.
	// +optional
	// +kubebuilder:validation:Minimum=1000
	// +kubebuilder:validation:Maximum=120000
	TimeoutMs int32 `json:"timeoutMs,omitempty" wire:"timeout"`
}

// MultistepStep is one request of a multistep monitor.
type MultistepStep struct {
	// name labels the step in results (1-100 characters).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	Name string `json:"name"`
	// method is the request method. Defaults to GET.
	// +optional
	Method HTTPMethod `json:"method,omitempty" wire:",upper"`
	// url is the request URL; it may contain {{variables}}.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url" guard:"http-url"`
	// headers are sent with the request (up to 50).
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	Headers []HTTPHeader `json:"headers,omitempty"`
	// body is the request body; it may contain {{variables}}. A password or
	// token in it goes in secrets and is written here as {{name}}:
	// admission refuses a literal credential (a JSON or form field named
	// like password, token or secret with a literal value), since anyone
	// who may read Monitors reads the body.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	Body string `json:"body,omitempty"`
	// secrets are values this step uses as {{name}} in its headers and body,
	// e.g. the password of a login step, each read from a Secret with
	// valueFrom as a header value is (up to 20). They are bound to the
	// origin of this step's url: the agent sends none to another origin
	// (after templating and after each redirect) and never writes them
	// into results. A secret's name shadows a variable extracted by an
	// earlier step. Values written through the REST API are moved to the
	// Monitor's own Secret like header values.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	Secrets []HTTPHeader `json:"secrets,omitempty" wire:",secret"`
	// expectedStatusCodes count as success (up to 100); empty means 2xx/3xx.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:Minimum=100
	// +kubebuilder:validation:items:Maximum=599
	// +listType=atomic
	ExpectedStatusCodes []int32 `json:"expectedStatusCodes,omitempty"`
	// extract stores values of this response for later steps (up to 20).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	Extract []Extraction `json:"extract,omitempty"`
	// assertions must hold for this step (up to 50).
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	Assertions []Assertion `json:"assertions,omitempty"`
}

// Extraction stores a value of a step's response in a variable.
type Extraction struct {
	// variable is the name later steps use as {{variable}}.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Variable string `json:"variable"`
	// source is json_body or header.
	// +required
	// +kubebuilder:validation:Enum=json_body;header
	Source string `json:"source"`
	// property is the JSON path or header name read.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Property string `json:"property"`
}

// MCPConfig configures checks of a Model Context Protocol server over
// Streamable HTTP: initialize, tools/list and optionally one tools/call.
type MCPConfig struct {
	// headers are sent with every request, e.g. an authorization header from a
	// Secret (up to 50).
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	Headers []HTTPHeader `json:"headers,omitempty"`
	// expectedTools must all be listed by tools/list (up to 100).
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=128
	// +listType=atomic
	ExpectedTools []string `json:"expectedTools,omitempty"`
	// protocolVersion, when set, must equal the version the server negotiates.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// toolCall is called after listing; an error result makes the check down.
	// +optional
	ToolCall *MCPToolCall `json:"toolCall,omitempty"`
	// timeoutMs bounds the whole check (1000-60000). Defaults to 30000.
	// +optional
	// +kubebuilder:validation:Minimum=1000
	// +kubebuilder:validation:Maximum=60000
	TimeoutMs int32 `json:"timeoutMs,omitempty" wire:"timeout"`
}

// MCPToolCall is one tool invocation of an mcp check.
type MCPToolCall struct {
	// name is the tool name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`
	// argumentsJSON is the arguments object as JSON text.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	ArgumentsJSON string `json:"argumentsJSON,omitempty" wire:"arguments,json"`
}

// MonitorStatusValue is the current state of a monitor.
// +kubebuilder:validation:Enum=up;down;degraded;blocked;unknown;pending;paused;maintenance
type MonitorStatusValue string

// Monitor states of the specification.
const (
	StatusUp          MonitorStatusValue = "up"
	StatusDown        MonitorStatusValue = "down"
	StatusDegraded    MonitorStatusValue = "degraded"
	StatusBlocked     MonitorStatusValue = "blocked"
	StatusUnknown     MonitorStatusValue = "unknown"
	StatusPending     MonitorStatusValue = "pending"
	StatusPaused      MonitorStatusValue = "paused"
	StatusMaintenance MonitorStatusValue = "maintenance"
)

// Monitor condition types.
const (
	// MonitorConditionConfigured is True when references and Secrets resolve
	// and the monitor is assigned to its regions.
	MonitorConditionConfigured = "Configured"
	// MonitorConditionAvailable is True while no incident is open.
	MonitorConditionAvailable = "Available"
)

// Monitor condition reasons.
const (
	// ReasonIncidentOpen means regions confirmed a failure and an incident is open.
	ReasonIncidentOpen = "IncidentOpen"
	// ReasonChecksPassing means the latest verdicts are up.
	ReasonChecksPassing = "ChecksPassing"
	// ReasonAwaitingChecks means no check has completed yet.
	ReasonAwaitingChecks = "AwaitingChecks"
	// ReasonUnderMaintenance means a maintenance window covers the monitor.
	ReasonUnderMaintenance = "UnderMaintenance"
	// ReasonNoRegions means no probe region is available to the monitor
	// (Configured is False).
	ReasonNoRegions = "NoRegions"
	// ReasonNotConfigured means Ready is False because Configured is.
	ReasonNotConfigured = "NotConfigured"
)

// IncidentRef summarises an incident in Monitor status.
type IncidentRef struct {
	// id is the incident's UUID in the store.
	ID string `json:"id"`
	// startedAt is when the incident opened.
	StartedAt metav1.Time `json:"startedAt"`
	// resolvedAt is when it resolved; absent while open.
	// +optional
	ResolvedAt *metav1.Time `json:"resolvedAt,omitempty"`
	// confirmingRegions are the region codes that confirmed the failure.
	// +optional
	// +listType=atomic
	ConfirmingRegions []string `json:"confirmingRegions,omitempty"`
}

// RegionState is the latest verdict of one region.
type RegionState struct {
	// code is the ProbeRegion code.
	Code string `json:"code"`
	// status is the latest check status from this region.
	Status string `json:"status"`
	// lastCheckedAt is the time of that check.
	// +optional
	LastCheckedAt *metav1.Time `json:"lastCheckedAt,omitempty"`
	// error is the check's error message, if it failed.
	// +optional
	Error string `json:"error,omitempty"`
}

// MonitorStatus is the observed state of a Monitor. It is written on
// transitions and at a throttled cadence, never once per check.
type MonitorStatus struct {
	// observedGeneration is the generation this status describes; -1 until
	// a controller first writes status, so kstatus reports InProgress.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// target is the checked URL, host:port or heartbeat path, for display.
	// +optional
	Target string `json:"target,omitempty"`
	// currentStatus is up, down (an incident is open), degraded, blocked,
	// unknown, pending (no check yet), paused or maintenance.
	// +optional
	CurrentStatus MonitorStatusValue `json:"currentStatus,omitempty"`
	// lastStatus is the status of the latest check.
	// +optional
	LastStatus string `json:"lastStatus,omitempty"`
	// lastCheckedAt is the time of the latest check.
	// +optional
	LastCheckedAt *metav1.Time `json:"lastCheckedAt,omitempty"`
	// lastResponseTimeMs is the response time of the latest check.
	// +optional
	LastResponseTimeMs *int64 `json:"lastResponseTimeMs,omitempty"`
	// lastError is the error of the latest check if it failed.
	// +optional
	LastError string `json:"lastError,omitempty"`
	// openIncident is the incident open now, if any.
	// +optional
	OpenIncident *IncidentRef `json:"openIncident,omitempty"`
	// recentIncidents are the last few incidents, newest first (up to 5).
	// +optional
	// +listType=atomic
	RecentIncidents []IncidentRef `json:"recentIncidents,omitempty"`
	// uptime24h is the percentage of up checks over 24 hours, as text ("99.95").
	// +optional
	Uptime24h string `json:"uptime24h,omitempty"`
	// uptime30d is the percentage of up checks over 30 days, as text.
	// +optional
	Uptime30d string `json:"uptime30d,omitempty"`
	// underMaintenance is true while a maintenance window covers the monitor.
	// +optional
	UnderMaintenance bool `json:"underMaintenance,omitempty"`
	// effectiveRegions are the regions the monitor is checked from.
	// +optional
	// +listType=atomic
	EffectiveRegions []string `json:"effectiveRegions,omitempty"`
	// effectiveIntervalSeconds is the interval in use.
	// +optional
	EffectiveIntervalSeconds int32 `json:"effectiveIntervalSeconds,omitempty"`
	// effectiveTimeoutMs is the timeout in use.
	// +optional
	EffectiveTimeoutMs int32 `json:"effectiveTimeoutMs,omitempty"`
	// regions is the latest verdict per region.
	// +optional
	// +listType=map
	// +listMapKey=code
	Regions []RegionState `json:"regions,omitempty"`
	// conditions are Configured, Available and Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Monitor is a target checked on a schedule from one or more probe regions.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mon,categories=uptime
// +kubebuilder:selectablefield:JSONPath=`.spec.key`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.target`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.currentStatus`
// +kubebuilder:printcolumn:name="Uptime 24h",type=string,JSONPath=`.status.uptime24h`
// +kubebuilder:printcolumn:name="Last Check",type=date,JSONPath=`.status.lastCheckedAt`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Monitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired configuration.
	// +required
	Spec MonitorSpec `json:"spec"`
	// status is the observed state.
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status MonitorStatus `json:"status,omitempty"`
}

// MonitorList is a list of Monitors.
// +kubebuilder:object:root=true
type MonitorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Monitor `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Monitor{}, &MonitorList{})
}
