package engine

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// SecretReader reads Secrets (uncached: the manager caches only API keys).
type SecretReader interface {
	Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error
}

// ToAssignment turns a Monitor into the probe API's assignment, resolving
// header values from Secrets. It fails when a referenced Secret or key is
// missing: such a monitor is not assigned until it is fixed (its Configured
// condition says why).
func ToAssignment(ctx context.Context, secrets SecretReader, m *monv1.Monitor) (probeapi.Assignment, error) {
	s := &m.Spec
	a := probeapi.Assignment{
		ID:              string(m.UID),
		Namespace:       m.Namespace,
		Name:            m.Name,
		Type:            string(s.Type),
		URL:             s.URL,
		IntervalSeconds: int(monitor.IntervalSeconds(m)),
		TimeoutMs:       int(monitor.EffectiveTimeoutMs(s)),
		Regions:         slices.Clone(monitor.Regions(m)),
		Generation:      m.Generation,
	}
	if a.IntervalSeconds == 0 {
		a.IntervalSeconds = 120
	}
	resolve := func(hs []monv1.HTTPHeader) (map[string]string, error) {
		if len(hs) == 0 {
			return nil, nil
		}
		out := make(map[string]string, len(hs))
		for _, h := range hs {
			if h.Value != nil {
				out[h.Name] = *h.Value
				continue
			}
			v, err := secretValue(ctx, secrets, m.Namespace, h.ValueFrom)
			if err != nil {
				return nil, err
			}
			out[h.Name] = v
		}
		return out, nil
	}
	var err error
	c := &a.Config
	switch {
	case s.HTTP != nil:
		h := s.HTTP
		c.Method = string(h.Method)
		if c.Headers, err = resolve(h.Headers); err != nil {
			return a, err
		}
		c.Body = h.Body
		c.Timeout = int(h.TimeoutMs)
		c.ExpectedStatusCodes = ints(h.ExpectedStatusCodes)
		c.Keyword = h.Keyword
		c.KeywordCaseInsensitive = h.KeywordCaseInsensitive
		if h.MaxRedirects != nil {
			v := int(*h.MaxRedirects)
			c.MaxRedirects = &v
		}
		c.MaxResponseTimeMs = intp(h.MaxResponseTimeMs)
		c.DegradedResponseTimeMs = intp(h.DegradedResponseTimeMs)
		if h.MaxResponseBytes != nil {
			c.MaxResponseBytes = int64(*h.MaxResponseBytes)
		}
		c.Assertions = assertions(h.Assertions)
	case s.Ping != nil:
		c.Host, c.PacketCount, c.Timeout = s.Ping.Host, int(s.Ping.PacketCount), int(s.Ping.TimeoutSeconds)
	case s.Port != nil:
		c.Host, c.Port, c.TLS, c.Timeout = s.Port.Host, int(s.Port.Port), s.Port.TLS, int(s.Port.TimeoutSeconds)
	case s.UDP != nil:
		u := s.UDP
		c.Host, c.Port, c.Timeout = u.Host, int(u.Port), int(u.TimeoutSeconds)
		c.Payload, c.PayloadEncoding = u.Payload, "text"
		if u.PayloadHex != "" {
			c.Payload, c.PayloadEncoding = u.PayloadHex, "hex"
		}
		if u.ExpectedResponse != "" {
			c.ExpectedResponse, c.ExpectedResponseMatch = u.ExpectedResponse, "regex"
		}
		c.SilentIsUp = u.SilentIsUp
	case s.DNS != nil:
		d := s.DNS
		c.Name, c.RecordType, c.Resolver, c.Protocol = d.Name, string(d.RecordType), d.Resolver, d.Protocol
		c.ExpectedValues, c.Match = slices.Clone(d.ExpectedValues), string(d.MatchMode)
		c.Timeout = int(d.TimeoutSeconds) * 1000
	case s.Multistep != nil:
		c.Timeout = int(s.Multistep.TimeoutMs)
		for _, st := range s.Multistep.Steps {
			hs, err := resolve(st.Headers)
			if err != nil {
				return a, err
			}
			step := probeapi.Step{
				Name: st.Name, Method: string(st.Method), URL: st.URL, Headers: hs, Body: st.Body,
				ExpectedStatusCodes: ints(st.ExpectedStatusCodes), Assertions: assertions(st.Assertions),
			}
			for _, ex := range st.Extract {
				step.Extract = append(step.Extract, probeapi.Extract{Variable: ex.Variable, Source: ex.Source, Property: ex.Property})
			}
			c.Steps = append(c.Steps, step)
		}
	case s.MCP != nil:
		if c.Headers, err = resolve(s.MCP.Headers); err != nil {
			return a, err
		}
		c.Timeout = int(s.MCP.TimeoutMs)
		c.ExpectedTools = slices.Clone(s.MCP.ExpectedTools)
		c.ProtocolVersion = s.MCP.ProtocolVersion
		if tc := s.MCP.ToolCall; tc != nil {
			c.ToolCall = &probeapi.ToolCall{Name: tc.Name}
			if tc.ArgumentsJSON != "" {
				c.ToolCall.Arguments = json.RawMessage(tc.ArgumentsJSON)
			}
		}
	}
	return a, nil
}

func secretValue(ctx context.Context, secrets SecretReader, ns string, ref *monv1.SecretKeySelector) (string, error) {
	var sec corev1.Secret
	if err := secrets.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, &sec); err != nil {
		return "", fmt.Errorf("read secret %s: %w", ref.Name, err)
	}
	v, ok := sec.Data[ref.Key]
	if !ok {
		return "", fmt.Errorf("secret %s has no key %s", ref.Name, ref.Key)
	}
	return string(v), nil
}

func ints(in []int32) []int {
	if len(in) == 0 {
		return nil
	}
	out := make([]int, len(in))
	for i, v := range in {
		out[i] = int(v)
	}
	return out
}

func intp(p *int32) int {
	if p == nil {
		return 0
	}
	return int(*p)
}

func assertions(in []monv1.Assertion) []probeapi.Assertion {
	if len(in) == 0 {
		return nil
	}
	out := make([]probeapi.Assertion, len(in))
	for i, a := range in {
		out[i] = probeapi.Assertion{Source: string(a.Source), Property: a.Property, Operator: string(a.Operator), Target: probeapi.Scalar(a.Target)}
	}
	return out
}

// revision is a stable digest of an assignment list.
func revision(list []probeapi.Assignment) string {
	raw, _ := json.Marshal(list)
	sum := sum256(raw)
	return hex.EncodeToString(sum[:12])
}
