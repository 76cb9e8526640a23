package monitor

import (
	"slices"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// EffectiveTimeoutMs is the timeout a check of this spec actually uses: the
// config's timeout in its type's unit, else the type's default (both from
// probeapi, the one place that knows them). Status, REST's
// effective_timeout_ms and the probe assignment all show this one value.
func EffectiveTimeoutMs(s *monv1.MonitorSpec) int32 {
	return int32(probeapi.ConfigTimeout(string(typeOf(s)), s).Milliseconds())
}

func typeOf(spec *monv1.MonitorSpec) monv1.MonitorType {
	if spec.Type == "" {
		return monv1.MonitorHTTP
	}
	return spec.Type
}

// EffectiveRegions are the regions a monitor of spec is checked from under
// plan: its own list, else the plan's default among the available region
// codes. Cron monitors have none: the manager evaluates their heartbeats.
func EffectiveRegions(s *monv1.MonitorSpec, plan *monv1.Plan, available []string) []string {
	if s.Type == monv1.MonitorCron {
		return nil
	}
	if len(s.Regions) > 0 {
		return slices.Clone(s.Regions)
	}
	return plans.DefaultRegions(plan, available)
}

// EffectiveIntervalSeconds is the check interval under plan: the spec's,
// raised to the plan's minimum.
func EffectiveIntervalSeconds(s *monv1.MonitorSpec, plan *monv1.Plan) int32 {
	return max(s.IntervalSeconds, plans.MinIntervalSeconds(plan))
}

// Regions are the regions m runs in as far as its status says (the Monitor
// controller writes the effective list there), else its spec's list. The
// engine reads this to build assignments and to count quorum votes.
func Regions(m *monv1.Monitor) []string {
	if m.Spec.Type == monv1.MonitorCron {
		return nil
	}
	if len(m.Status.EffectiveRegions) > 0 {
		return m.Status.EffectiveRegions
	}
	return m.Spec.Regions
}

// IntervalSeconds is the interval m runs at: its effective interval from
// status, at least the spec's; zero only for a monitor never defaulted.
func IntervalSeconds(m *monv1.Monitor) int32 {
	return max(m.Spec.IntervalSeconds, m.Status.EffectiveIntervalSeconds)
}

// Target is the monitored URL, host[:port] or DNS name, for display.
func Target(s *monv1.MonitorSpec) string { return Endpoint(s).Target }

// Endpoint is where s's checks connect: spec.url for the types that check
// it, else what the type's config struct declares (monv1.Endpointer).
func Endpoint(s *monv1.MonitorSpec) monv1.Endpoint {
	if s.URL != "" {
		return monv1.URLEndpoint(s.URL)
	}
	if e, ok := monitorconfig.Config(s).(monv1.Endpointer); ok {
		return e.Endpoint()
	}
	return monv1.Endpoint{}
}

// SecretRefs lists every Secret key the spec reads (the header lists
// monitorconfig finds in its config struct).
func SecretRefs(s *monv1.MonitorSpec) []monv1.SecretKeySelector {
	var out []monv1.SecretKeySelector
	for _, l := range monitorconfig.HeaderLists(s) {
		for _, h := range *l.Headers {
			if h.ValueFrom != nil {
				out = append(out, *h.ValueFrom)
			}
		}
	}
	return out
}

// DisplayName is how alerts and notices name m: its spec name, else the
// object's name.
func DisplayName(m *monv1.Monitor) string {
	if m.Spec.Name != "" {
		return m.Spec.Name
	}
	return m.Name
}
