package monitor

import (
	"slices"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// DefaultMonitor applies the defaults that do not need the API server; the
// REST layer calls it too so both front doors store the same object.
func DefaultMonitor(m *monv1.Monitor, plan *monv1.Plan) {
	s := &m.Spec
	if s.Name == "" {
		s.Name = m.Name
	}
	if s.Type == "" {
		s.Type = monv1.MonitorHTTP
	}
	if s.IntervalSeconds == 0 {
		s.IntervalSeconds = plans.DefaultIntervalSeconds(plan)
	}
	s.Tags = NormalizeTags(s.Tags)
	if s.Ping != nil {
		if s.Ping.PacketCount == 0 {
			s.Ping.PacketCount = 3
		}
		s.Ping.PacketCount = min(max(s.Ping.PacketCount, 1), 10)
	}
	if s.HTTP != nil && s.HTTP.Method == "" {
		s.HTTP.Method = "GET"
	}
	if (s.Type == monv1.MonitorHTTP || s.Type == monv1.MonitorAPI) && s.HTTP == nil {
		s.HTTP = &monv1.HTTPConfig{Method: "GET"}
	}
	if s.DNS != nil {
		if s.DNS.RecordType == "" {
			s.DNS.RecordType = "A"
		}
		if s.DNS.MatchMode == "" {
			s.DNS.MatchMode = "any"
		}
		if s.DNS.Protocol == "" {
			s.DNS.Protocol = "udp"
		}
	}
	for i := range sliceOf(s.Multistep) {
		if s.Multistep.Steps[i].Method == "" {
			s.Multistep.Steps[i].Method = "GET"
		}
	}
}

func sliceOf(ms *monv1.MultistepConfig) []monv1.MultistepStep {
	if ms == nil {
		return nil
	}
	return ms.Steps
}

// NormalizeTags lower-cases, trims and de-duplicates tags, keeping order.
func NormalizeTags(tags []string) []string {
	if tags == nil {
		return nil
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
