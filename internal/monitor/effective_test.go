package monitor

import (
	"slices"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

func TestEffectiveTimeoutMs(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec monv1.MonitorSpec
		want int32
	}{
		{"http default", monv1.MonitorSpec{Type: monv1.MonitorHTTP}, 30000},
		{"http set", monv1.MonitorSpec{Type: monv1.MonitorHTTP, HTTP: &monv1.HTTPConfig{TimeoutMs: 2000}}, 2000},
		{"ping default", monv1.MonitorSpec{Type: monv1.MonitorPing, Ping: &monv1.PingConfig{}}, 10000},
		{"port set", monv1.MonitorSpec{Type: monv1.MonitorPort, Port: &monv1.PortConfig{TimeoutSeconds: 3}}, 3000},
		{"udp default", monv1.MonitorSpec{Type: monv1.MonitorUDP, UDP: &monv1.UDPConfig{}}, 5000},
		{"dns default", monv1.MonitorSpec{Type: monv1.MonitorDNS, DNS: &monv1.DNSConfig{}}, 5000},
		{"dns set", monv1.MonitorSpec{Type: monv1.MonitorDNS, DNS: &monv1.DNSConfig{TimeoutSeconds: 2}}, 2000},
		{"multistep default", monv1.MonitorSpec{Type: monv1.MonitorMultistep, Multistep: &monv1.MultistepConfig{}}, 60000},
		{"mcp default", monv1.MonitorSpec{Type: monv1.MonitorMCP, MCP: &monv1.MCPConfig{}}, 30000},
		{"mcp without config", monv1.MonitorSpec{Type: monv1.MonitorMCP}, 30000},
		{"cron has none", monv1.MonitorSpec{Type: monv1.MonitorCron, Cron: &monv1.CronConfig{}}, 0},
	} {
		if got := EffectiveTimeoutMs(&tc.spec); got != tc.want {
			t.Errorf("%s: EffectiveTimeoutMs = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestEffectiveRegions(t *testing.T) {
	available := []string{"eu", "us"}
	for _, tc := range []struct {
		name string
		spec monv1.MonitorSpec
		want []string
	}{
		{"own list wins", monv1.MonitorSpec{Regions: []string{"us"}}, []string{"us"}},
		{"plan default", monv1.MonitorSpec{}, []string{"eu", "us"}},
		{"cron has none", monv1.MonitorSpec{Type: monv1.MonitorCron, Regions: []string{"us"}}, nil},
	} {
		if got := EffectiveRegions(&tc.spec, plans.Unlimited(), available); !slices.Equal(got, tc.want) {
			t.Errorf("%s: EffectiveRegions = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRegionsAndInterval(t *testing.T) {
	m := &monv1.Monitor{Spec: monv1.MonitorSpec{Regions: []string{"us"}, IntervalSeconds: 30}}
	if got := Regions(m); !slices.Equal(got, []string{"us"}) {
		t.Errorf("unreconciled monitor: Regions = %v, want the spec's", got)
	}
	m.Status.EffectiveRegions, m.Status.EffectiveIntervalSeconds = []string{"eu", "us"}, 60
	if got := Regions(m); !slices.Equal(got, []string{"eu", "us"}) {
		t.Errorf("reconciled monitor: Regions = %v, want status's", got)
	}
	if got := IntervalSeconds(m); got != 60 {
		t.Errorf("IntervalSeconds = %d, want the plan-raised 60", got)
	}
}

func TestPercentRoundTrip(t *testing.T) {
	v := 99.123
	s := FormatPercent(&v)
	if s != "99.12%" {
		t.Fatalf("FormatPercent = %q", s)
	}
	if p := ParsePercent(s); p == nil || *p != 99.12 {
		t.Fatalf("ParsePercent(%q) = %v", s, p)
	}
	if FormatPercent(nil) != "" || ParsePercent("") != nil || ParsePercent("n/a") != nil {
		t.Fatal("no data must stay no data")
	}
}
