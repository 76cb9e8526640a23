package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// The REST API's monitor `config` is one flat object whose keys depend on the
// monitor type; the CR keeps it in one typed struct per type. The structs
// below are the JSON form of each type's config: decoding a config object
// into the struct of its type (unknown keys refused) and encoding a spec's
// struct back gives the same object.

// Config limits of the specification.
const (
	maxConfigKeys  = 50
	maxConfigBytes = 32 * 1024
)

// configNotificationEmails is the one config key shared by every type.
const configNotificationEmails = "notification_emails"

// headerValue is a header's value: a JSON string, or
// {"secret_ref": {"name": ..., "key": ...}} for a value read from a Secret.
type headerValue struct {
	Value     *string
	SecretRef *monv1.SecretKeySelector
}

// UnmarshalJSON accepts a string or a secret reference.
func (h *headerValue) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		h.Value = &s
		return nil
	}
	var ref struct {
		SecretRef *monv1.SecretKeySelector `json:"secret_ref"`
	}
	if err := json.Unmarshal(b, &ref); err != nil || ref.SecretRef == nil || ref.SecretRef.Name == "" || ref.SecretRef.Key == "" {
		return &fieldDecodeError{field: "headers", msg: `header values must be strings or {"secret_ref": {"name", "key"}}`}
	}
	h.SecretRef = ref.SecretRef
	return nil
}

// MarshalJSON writes the string or the secret reference.
func (h headerValue) MarshalJSON() ([]byte, error) {
	if h.SecretRef != nil {
		return json.Marshal(map[string]any{"secret_ref": h.SecretRef})
	}
	if h.Value == nil {
		return []byte(`""`), nil
	}
	return json.Marshal(*h.Value)
}

type headersJSON map[string]headerValue

func (hs headersJSON) toCR() []monv1.HTTPHeader {
	if len(hs) == 0 {
		return nil
	}
	names := make([]string, 0, len(hs))
	for n := range hs {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]monv1.HTTPHeader, 0, len(hs))
	for _, n := range names {
		v := hs[n]
		out = append(out, monv1.HTTPHeader{Name: n, Value: v.Value, ValueFrom: v.SecretRef})
	}
	return out
}

func headersFromCR(hs []monv1.HTTPHeader) headersJSON {
	if len(hs) == 0 {
		return nil
	}
	out := headersJSON{}
	for _, h := range hs {
		out[h.Name] = headerValue{Value: h.Value, SecretRef: h.ValueFrom}
	}
	return out
}

type assertionJSON struct {
	Source   string          `json:"source"`
	Property string          `json:"property,omitempty"`
	Operator string          `json:"operator"`
	Target   probeapi.Scalar `json:"target,omitempty"`
}

func assertionsToCR(as []assertionJSON) []monv1.Assertion {
	var out []monv1.Assertion
	for _, a := range as {
		out = append(out, monv1.Assertion{Source: monv1.AssertionSource(a.Source), Property: a.Property,
			Operator: monv1.AssertionOperator(a.Operator), Target: string(a.Target)})
	}
	return out
}

func assertionsFromCR(as []monv1.Assertion) []assertionJSON {
	var out []assertionJSON
	for _, a := range as {
		out = append(out, assertionJSON{Source: string(a.Source), Property: a.Property, Operator: string(a.Operator), Target: probeapi.Scalar(a.Target)})
	}
	return out
}

type httpConfigJSON struct {
	Method                 string          `json:"method,omitempty"`
	Headers                headersJSON     `json:"headers,omitempty"`
	Body                   string          `json:"body,omitempty"`
	Timeout                int32           `json:"timeout,omitempty"`
	ExpectedStatusCodes    []int32         `json:"expected_status_codes,omitempty"`
	Keyword                string          `json:"keyword,omitempty"`
	KeywordCaseInsensitive bool            `json:"keyword_case_insensitive,omitempty"`
	MaxRedirects           *int32          `json:"max_redirects,omitempty"`
	MaxResponseTimeMs      *int32          `json:"max_response_time_ms,omitempty"`
	DegradedResponseTimeMs *int32          `json:"degraded_response_time_ms,omitempty"`
	MaxResponseBytes       *int32          `json:"max_response_bytes,omitempty"`
	Assertions             []assertionJSON `json:"assertions,omitempty"`
}

type pingConfigJSON struct {
	Host        string `json:"host"`
	PacketCount int32  `json:"packet_count,omitempty"`
	Timeout     int32  `json:"timeout,omitempty"`
}

type portConfigJSON struct {
	Host    string `json:"host"`
	Port    int32  `json:"port"`
	TLS     bool   `json:"tls,omitempty"`
	Timeout int32  `json:"timeout,omitempty"`
}

type udpConfigJSON struct {
	Host             string `json:"host"`
	Port             int32  `json:"port"`
	Payload          string `json:"payload,omitempty"`
	PayloadHex       string `json:"payload_hex,omitempty"`
	ExpectedResponse string `json:"expected_response,omitempty"`
	SilentIsUp       bool   `json:"silent_is_up,omitempty"`
	Timeout          int32  `json:"timeout,omitempty"`
}

type cronConfigJSON struct {
	CronExpression string `json:"cron_expression"`
	GraceSeconds   int32  `json:"grace_seconds,omitempty"`
	TimeZone       string `json:"time_zone,omitempty"`
}

type dnsConfigJSON struct {
	Name           string   `json:"name"`
	RecordType     string   `json:"record_type,omitempty"`
	Resolver       string   `json:"resolver,omitempty"`
	Protocol       string   `json:"protocol,omitempty"`
	ExpectedValues []string `json:"expected_values,omitempty"`
	MatchMode      string   `json:"match_mode,omitempty"`
	Timeout        int32    `json:"timeout,omitempty"`
}

type extractJSON struct {
	Variable string `json:"variable"`
	Source   string `json:"source"`
	Property string `json:"property"`
}

type stepJSON struct {
	Name                string          `json:"name"`
	Method              string          `json:"method,omitempty"`
	URL                 string          `json:"url"`
	Headers             headersJSON     `json:"headers,omitempty"`
	Body                string          `json:"body,omitempty"`
	ExpectedStatusCodes []int32         `json:"expected_status_codes,omitempty"`
	Extract             []extractJSON   `json:"extract,omitempty"`
	Assertions          []assertionJSON `json:"assertions,omitempty"`
}

type multistepConfigJSON struct {
	Steps   []stepJSON `json:"steps"`
	Timeout int32      `json:"timeout,omitempty"`
}

type toolCallJSON struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

type mcpConfigJSON struct {
	Headers         headersJSON   `json:"headers,omitempty"`
	ExpectedTools   []string      `json:"expected_tools,omitempty"`
	ProtocolVersion string        `json:"protocol_version,omitempty"`
	ToolCall        *toolCallJSON `json:"tool_call,omitempty"`
	Timeout         int32         `json:"timeout,omitempty"`
}

// checkConfigLimits enforces the specification's limits on the raw config
// object: at most 50 keys and 32 KB as JSON.
func checkConfigLimits(cfg map[string]json.RawMessage) []FieldError {
	if len(cfg) > maxConfigKeys {
		return []FieldError{fieldErr("config", "must have at most %d keys", maxConfigKeys)}
	}
	raw, _ := json.Marshal(cfg)
	if len(raw) > maxConfigBytes {
		return []FieldError{fieldErr("config", "must be at most 32 KB as JSON")}
	}
	return nil
}

// applyConfig sets the type's config struct of spec from the config object
// (notification_emails excluded) and clears the structs of other types.
func applyConfig(spec *monv1.MonitorSpec, cfg map[string]json.RawMessage) error {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	if len(cfg) == 0 {
		raw = []byte("{}")
	}
	spec.HTTP, spec.Ping, spec.Port, spec.UDP, spec.Cron, spec.DNS, spec.Multistep, spec.MCP = nil, nil, nil, nil, nil, nil, nil, nil
	decode := func(v any) error {
		err := decodeBytes(raw, v, true, "config.")
		if ae, ok := err.(*apiError); ok && ae.Body.Code == CodeValidation {
			for i, e := range ae.Body.Errors {
				if e.Message == "unknown field" {
					ae.Body.Errors[i].Message = fmt.Sprintf("unknown config key for %s monitors", typeOrDefault(spec.Type))
				}
			}
		}
		return err
	}
	switch typeOrDefault(spec.Type) {
	case monv1.MonitorHTTP, monv1.MonitorAPI:
		var c httpConfigJSON
		if err := decode(&c); err != nil {
			return err
		}
		spec.HTTP = &monv1.HTTPConfig{
			Method: monv1.HTTPMethod(strings.ToUpper(c.Method)), Headers: c.Headers.toCR(), Body: c.Body,
			TimeoutMs: c.Timeout, ExpectedStatusCodes: c.ExpectedStatusCodes, Keyword: c.Keyword,
			KeywordCaseInsensitive: c.KeywordCaseInsensitive, MaxRedirects: c.MaxRedirects,
			MaxResponseTimeMs: c.MaxResponseTimeMs, DegradedResponseTimeMs: c.DegradedResponseTimeMs,
			MaxResponseBytes: c.MaxResponseBytes, Assertions: assertionsToCR(c.Assertions),
		}
	case monv1.MonitorPing:
		var c pingConfigJSON
		if err := decode(&c); err != nil {
			return err
		}
		spec.Ping = &monv1.PingConfig{Host: c.Host, PacketCount: c.PacketCount, TimeoutSeconds: c.Timeout}
	case monv1.MonitorPort:
		var c portConfigJSON
		if err := decode(&c); err != nil {
			return err
		}
		spec.Port = &monv1.PortConfig{Host: c.Host, Port: c.Port, TLS: c.TLS, TimeoutSeconds: c.Timeout}
	case monv1.MonitorUDP:
		var c udpConfigJSON
		if err := decode(&c); err != nil {
			return err
		}
		spec.UDP = &monv1.UDPConfig{Host: c.Host, Port: c.Port, Payload: c.Payload, PayloadHex: c.PayloadHex,
			ExpectedResponse: c.ExpectedResponse, SilentIsUp: c.SilentIsUp, TimeoutSeconds: c.Timeout}
	case monv1.MonitorCron:
		var c cronConfigJSON
		if err := decode(&c); err != nil {
			return err
		}
		spec.Cron = &monv1.CronConfig{CronExpression: c.CronExpression, GraceSeconds: c.GraceSeconds, TimeZone: c.TimeZone}
	case monv1.MonitorDNS:
		var c dnsConfigJSON
		if err := decode(&c); err != nil {
			return err
		}
		spec.DNS = &monv1.DNSConfig{Name: c.Name, RecordType: monv1.DNSRecordType(strings.ToUpper(c.RecordType)), Resolver: c.Resolver,
			Protocol: c.Protocol, ExpectedValues: c.ExpectedValues, MatchMode: monv1.DNSMatchMode(c.MatchMode), TimeoutSeconds: c.Timeout}
	case monv1.MonitorMultistep:
		var c multistepConfigJSON
		if err := decode(&c); err != nil {
			return err
		}
		ms := &monv1.MultistepConfig{TimeoutMs: c.Timeout}
		for _, st := range c.Steps {
			step := monv1.MultistepStep{Name: st.Name, Method: monv1.HTTPMethod(strings.ToUpper(st.Method)), URL: st.URL,
				Headers: st.Headers.toCR(), Body: st.Body, ExpectedStatusCodes: st.ExpectedStatusCodes,
				Assertions: assertionsToCR(st.Assertions)}
			for _, ex := range st.Extract {
				step.Extract = append(step.Extract, monv1.Extraction{Variable: ex.Variable, Source: ex.Source, Property: ex.Property})
			}
			ms.Steps = append(ms.Steps, step)
		}
		spec.Multistep = ms
	case monv1.MonitorMCP:
		var c mcpConfigJSON
		if err := decode(&c); err != nil {
			return err
		}
		m := &monv1.MCPConfig{Headers: c.Headers.toCR(), ExpectedTools: c.ExpectedTools, ProtocolVersion: c.ProtocolVersion, TimeoutMs: c.Timeout}
		if c.ToolCall != nil {
			m.ToolCall = &monv1.MCPToolCall{Name: c.ToolCall.Name}
			if args := bytes.TrimSpace(c.ToolCall.Arguments); len(args) > 0 && string(args) != "null" {
				if args[0] != '{' {
					return validationError(fieldErr("config.tool_call.arguments", "must be a JSON object"))
				}
				m.ToolCall.ArgumentsJSON = string(args)
			}
		}
		spec.MCP = m
	default:
		return validationError(fieldErr("type", "must be one of http, api, ping, port, udp, cron, dns, multistep, mcp"))
	}
	return nil
}

// configOf renders a spec's config object, notification_emails included.
func configOf(spec *monv1.MonitorSpec) map[string]json.RawMessage {
	var v any
	switch {
	case spec.HTTP != nil:
		c := spec.HTTP
		v = httpConfigJSON{Method: string(c.Method), Headers: headersFromCR(c.Headers), Body: c.Body, Timeout: c.TimeoutMs,
			ExpectedStatusCodes: c.ExpectedStatusCodes, Keyword: c.Keyword, KeywordCaseInsensitive: c.KeywordCaseInsensitive,
			MaxRedirects: c.MaxRedirects, MaxResponseTimeMs: c.MaxResponseTimeMs, DegradedResponseTimeMs: c.DegradedResponseTimeMs,
			MaxResponseBytes: c.MaxResponseBytes, Assertions: assertionsFromCR(c.Assertions)}
	case spec.Ping != nil:
		v = pingConfigJSON{Host: spec.Ping.Host, PacketCount: spec.Ping.PacketCount, Timeout: spec.Ping.TimeoutSeconds}
	case spec.Port != nil:
		v = portConfigJSON{Host: spec.Port.Host, Port: spec.Port.Port, TLS: spec.Port.TLS, Timeout: spec.Port.TimeoutSeconds}
	case spec.UDP != nil:
		c := spec.UDP
		v = udpConfigJSON{Host: c.Host, Port: c.Port, Payload: c.Payload, PayloadHex: c.PayloadHex,
			ExpectedResponse: c.ExpectedResponse, SilentIsUp: c.SilentIsUp, Timeout: c.TimeoutSeconds}
	case spec.Cron != nil:
		v = cronConfigJSON{CronExpression: spec.Cron.CronExpression, GraceSeconds: spec.Cron.GraceSeconds, TimeZone: spec.Cron.TimeZone}
	case spec.DNS != nil:
		c := spec.DNS
		v = dnsConfigJSON{Name: c.Name, RecordType: string(c.RecordType), Resolver: c.Resolver, Protocol: c.Protocol,
			ExpectedValues: c.ExpectedValues, MatchMode: string(c.MatchMode), Timeout: c.TimeoutSeconds}
	case spec.Multistep != nil:
		c := multistepConfigJSON{Timeout: spec.Multistep.TimeoutMs, Steps: []stepJSON{}}
		for _, st := range spec.Multistep.Steps {
			s := stepJSON{Name: st.Name, Method: string(st.Method), URL: st.URL, Headers: headersFromCR(st.Headers), Body: st.Body,
				ExpectedStatusCodes: st.ExpectedStatusCodes, Assertions: assertionsFromCR(st.Assertions)}
			for _, ex := range st.Extract {
				s.Extract = append(s.Extract, extractJSON{Variable: ex.Variable, Source: ex.Source, Property: ex.Property})
			}
			c.Steps = append(c.Steps, s)
		}
		v = c
	case spec.MCP != nil:
		c := spec.MCP
		m := mcpConfigJSON{Headers: headersFromCR(c.Headers), ExpectedTools: c.ExpectedTools, ProtocolVersion: c.ProtocolVersion, Timeout: c.TimeoutMs}
		if c.ToolCall != nil {
			m.ToolCall = &toolCallJSON{Name: c.ToolCall.Name}
			if c.ToolCall.ArgumentsJSON != "" {
				m.ToolCall.Arguments = json.RawMessage(c.ToolCall.ArgumentsJSON)
			}
		}
		v = m
	}
	out := map[string]json.RawMessage{}
	if v != nil {
		raw, _ := json.Marshal(v)
		_ = json.Unmarshal(raw, &out)
	}
	if len(spec.NotificationEmails) > 0 {
		raw, _ := json.Marshal(spec.NotificationEmails)
		out[configNotificationEmails] = raw
	}
	return out
}

func typeOrDefault(t monv1.MonitorType) monv1.MonitorType {
	if t == "" {
		return monv1.MonitorHTTP
	}
	return t
}

// monitorFieldPath maps a Monitor field path (spec.http.timeoutMs) to the
// REST field (config.timeout).
func monitorFieldPath(p string) string {
	p = strings.TrimPrefix(p, "spec")
	p = strings.TrimPrefix(p, ".")
	head, rest, _ := strings.Cut(p, ".")
	base := head
	if i := strings.IndexByte(head, '['); i >= 0 {
		base = head[:i]
	}
	switch base {
	case "":
		return ""
	case "intervalSeconds":
		return "interval_seconds"
	case "groupRef":
		return "group_id"
	case "escalationPolicyRef":
		return "escalation_policy_id"
	case "paused":
		return "is_active"
	case "tags", "regions", "name", "url", "type", "key":
		return base
	case "notificationEmails":
		return "config.notification_emails"
	case "http", "ping", "port", "udp", "cron", "dns", "multistep", "mcp":
		if rest == "" {
			return "config"
		}
		parts := strings.Split(rest, ".")
		for i, s := range parts {
			idx := ""
			if j := strings.IndexByte(s, '['); j >= 0 {
				s, idx = s[:j], s[j:]
			}
			switch s {
			case "timeoutMs", "timeoutSeconds":
				s = "timeout"
			case "argumentsJSON":
				s = "arguments"
			case "payloadHex":
				s = "payload_hex"
			default:
				s = camelToSnake(s)
			}
			parts[i] = s + idx
		}
		return "config." + strings.Join(parts, ".")
	}
	return snakePath(p)
}

// mergeConfig overlays sent config keys on the current ones; a null value
// removes the key.
func mergeConfig(cur, sent map[string]json.RawMessage) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range cur {
		out[k] = v
	}
	for k, v := range sent {
		if string(bytes.TrimSpace(v)) == "null" {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}
