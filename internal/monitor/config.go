package monitor

import (
	"encoding/json"
	"slices"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// The one config codec. A Monitor keeps its settings in one typed struct per
// type (spec.http, spec.udp, ...); the REST API and the probe API carry them
// as one flat probeapi.Config whose keys are the REST keys. ConfigOf and
// ApplyConfig are the only translation between the two: adding a config key
// is a field on the API type, a field on probeapi.Config, one line in each
// function below, and the probe that reads it.

// ConfigOf is the config object of spec: the fields of its type's struct
// under their REST keys. Header values that come from Secrets stay
// references; the engine resolves them for agents.
func ConfigOf(spec *monv1.MonitorSpec) probeapi.Config {
	var c probeapi.Config
	switch {
	case spec.HTTP != nil:
		h := spec.HTTP
		c.Timeout = h.TimeoutMs
		c.Method, c.Headers, c.Body = string(h.Method), headersOf(h.Headers), h.Body
		c.ExpectedStatusCodes = slices.Clone(h.ExpectedStatusCodes)
		c.Keyword, c.KeywordCaseInsensitive = h.Keyword, h.KeywordCaseInsensitive
		c.MaxRedirects, c.MaxResponseTimeMs = clonePtr(h.MaxRedirects), clonePtr(h.MaxResponseTimeMs)
		c.DegradedResponseTimeMs, c.MaxResponseBytes = clonePtr(h.DegradedResponseTimeMs), clonePtr(h.MaxResponseBytes)
		c.Assertions = assertionsOf(h.Assertions)
	case spec.Ping != nil:
		c.Host, c.PacketCount, c.Timeout = spec.Ping.Host, spec.Ping.PacketCount, spec.Ping.TimeoutSeconds
	case spec.Port != nil:
		c.Host, c.Port, c.TLS, c.Timeout = spec.Port.Host, spec.Port.Port, spec.Port.TLS, spec.Port.TimeoutSeconds
	case spec.UDP != nil:
		u := spec.UDP
		c.Host, c.Port, c.Timeout = u.Host, u.Port, u.TimeoutSeconds
		c.Payload, c.PayloadHex, c.ExpectedResponse, c.SilentIsUp = u.Payload, u.PayloadHex, u.ExpectedResponse, u.SilentIsUp
	case spec.Cron != nil:
		c.CronExpression, c.GraceSeconds, c.TimeZone = spec.Cron.CronExpression, spec.Cron.GraceSeconds, spec.Cron.TimeZone
	case spec.DNS != nil:
		d := spec.DNS
		c.Name, c.RecordType, c.Resolver, c.Protocol = d.Name, string(d.RecordType), d.Resolver, d.Protocol
		c.ExpectedValues, c.MatchMode, c.Timeout = slices.Clone(d.ExpectedValues), string(d.MatchMode), d.TimeoutSeconds
	case spec.Multistep != nil:
		c.Timeout = spec.Multistep.TimeoutMs
		c.Steps = []probeapi.Step{}
		for _, st := range spec.Multistep.Steps {
			step := probeapi.Step{Name: st.Name, Method: string(st.Method), URL: st.URL, Headers: headersOf(st.Headers),
				Body: st.Body, ExpectedStatusCodes: slices.Clone(st.ExpectedStatusCodes), Assertions: assertionsOf(st.Assertions)}
			for _, ex := range st.Extract {
				step.Extract = append(step.Extract, probeapi.Extract{Variable: ex.Variable, Source: ex.Source, Property: ex.Property})
			}
			c.Steps = append(c.Steps, step)
		}
	case spec.MCP != nil:
		m := spec.MCP
		c.Headers, c.Timeout = headersOf(m.Headers), m.TimeoutMs
		c.ExpectedTools, c.ProtocolVersion = slices.Clone(m.ExpectedTools), m.ProtocolVersion
		if tc := m.ToolCall; tc != nil {
			c.ToolCall = &probeapi.ToolCall{Name: tc.Name}
			if tc.ArgumentsJSON != "" {
				c.ToolCall.Arguments = json.RawMessage(tc.ArgumentsJSON)
			}
		}
	}
	return c
}

// ApplyConfig sets the config struct of spec's type (spec.Type, http when
// empty) from c and clears the structs of the other types. It reports
// whether the type is known.
func ApplyConfig(spec *monv1.MonitorSpec, c *probeapi.Config) bool {
	spec.HTTP, spec.Ping, spec.Port, spec.UDP, spec.Cron, spec.DNS, spec.Multistep, spec.MCP = nil, nil, nil, nil, nil, nil, nil, nil
	switch typeOf(spec) {
	case monv1.MonitorHTTP, monv1.MonitorAPI:
		spec.HTTP = &monv1.HTTPConfig{
			Method: monv1.HTTPMethod(strings.ToUpper(c.Method)), Headers: headersToCR(c.Headers), Body: c.Body,
			TimeoutMs: c.Timeout, ExpectedStatusCodes: c.ExpectedStatusCodes, Keyword: c.Keyword,
			KeywordCaseInsensitive: c.KeywordCaseInsensitive, MaxRedirects: c.MaxRedirects,
			MaxResponseTimeMs: c.MaxResponseTimeMs, DegradedResponseTimeMs: c.DegradedResponseTimeMs,
			MaxResponseBytes: c.MaxResponseBytes, Assertions: assertionsToCR(c.Assertions),
		}
	case monv1.MonitorPing:
		spec.Ping = &monv1.PingConfig{Host: c.Host, PacketCount: c.PacketCount, TimeoutSeconds: c.Timeout}
	case monv1.MonitorPort:
		spec.Port = &monv1.PortConfig{Host: c.Host, Port: c.Port, TLS: c.TLS, TimeoutSeconds: c.Timeout}
	case monv1.MonitorUDP:
		spec.UDP = &monv1.UDPConfig{Host: c.Host, Port: c.Port, Payload: c.Payload, PayloadHex: c.PayloadHex,
			ExpectedResponse: c.ExpectedResponse, SilentIsUp: c.SilentIsUp, TimeoutSeconds: c.Timeout}
	case monv1.MonitorCron:
		spec.Cron = &monv1.CronConfig{CronExpression: c.CronExpression, GraceSeconds: c.GraceSeconds, TimeZone: c.TimeZone}
	case monv1.MonitorDNS:
		spec.DNS = &monv1.DNSConfig{Name: c.Name, RecordType: monv1.DNSRecordType(strings.ToUpper(c.RecordType)),
			Resolver: c.Resolver, Protocol: c.Protocol, ExpectedValues: c.ExpectedValues,
			MatchMode: monv1.DNSMatchMode(c.MatchMode), TimeoutSeconds: c.Timeout}
	case monv1.MonitorMultistep:
		ms := &monv1.MultistepConfig{TimeoutMs: c.Timeout}
		for _, st := range c.Steps {
			step := monv1.MultistepStep{Name: st.Name, Method: monv1.HTTPMethod(strings.ToUpper(st.Method)), URL: st.URL,
				Headers: headersToCR(st.Headers), Body: st.Body, ExpectedStatusCodes: st.ExpectedStatusCodes,
				Assertions: assertionsToCR(st.Assertions)}
			for _, ex := range st.Extract {
				step.Extract = append(step.Extract, monv1.Extraction{Variable: ex.Variable, Source: ex.Source, Property: ex.Property})
			}
			ms.Steps = append(ms.Steps, step)
		}
		spec.Multistep = ms
	case monv1.MonitorMCP:
		m := &monv1.MCPConfig{Headers: headersToCR(c.Headers), ExpectedTools: c.ExpectedTools,
			ProtocolVersion: c.ProtocolVersion, TimeoutMs: c.Timeout}
		if c.ToolCall != nil {
			m.ToolCall = &monv1.MCPToolCall{Name: c.ToolCall.Name}
			if args := strings.TrimSpace(string(c.ToolCall.Arguments)); args != "" && args != "null" {
				m.ToolCall.ArgumentsJSON = args
			}
		}
		spec.MCP = m
	default:
		return false
	}
	return true
}

func typeOf(spec *monv1.MonitorSpec) monv1.MonitorType {
	if spec.Type == "" {
		return monv1.MonitorHTTP
	}
	return spec.Type
}

func clonePtr(p *int32) *int32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func headersOf(hs []monv1.HTTPHeader) probeapi.Headers {
	if len(hs) == 0 {
		return nil
	}
	out := make(probeapi.Headers, len(hs))
	for _, h := range hs {
		var v probeapi.HeaderValue
		if h.Value != nil {
			v.Value = *h.Value
		}
		if h.ValueFrom != nil {
			v.SecretRef = &probeapi.SecretKeyRef{Name: h.ValueFrom.Name, Key: h.ValueFrom.Key}
		}
		out[h.Name] = v
	}
	return out
}

// headersToCR lists headers sorted by name, the stable order of the CR.
func headersToCR(hs probeapi.Headers) []monv1.HTTPHeader {
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
		h := monv1.HTTPHeader{Name: n}
		if v.SecretRef != nil {
			h.ValueFrom = &monv1.SecretKeySelector{Name: v.SecretRef.Name, Key: v.SecretRef.Key}
		} else {
			value := v.Value
			h.Value = &value
		}
		out = append(out, h)
	}
	return out
}

func assertionsOf(in []monv1.Assertion) []probeapi.Assertion {
	if len(in) == 0 {
		return nil
	}
	out := make([]probeapi.Assertion, len(in))
	for i, a := range in {
		out[i] = probeapi.Assertion{Source: string(a.Source), Property: a.Property, Operator: string(a.Operator), Target: probeapi.Scalar(a.Target)}
	}
	return out
}

func assertionsToCR(in []probeapi.Assertion) []monv1.Assertion {
	var out []monv1.Assertion
	for _, a := range in {
		out = append(out, monv1.Assertion{Source: monv1.AssertionSource(a.Source), Property: a.Property,
			Operator: monv1.AssertionOperator(a.Operator), Target: string(a.Target)})
	}
	return out
}
