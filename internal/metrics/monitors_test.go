package metrics

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// cache is a stand-in for the Monitor informer: the monitors it holds now.
type cache struct{ monitors []*monv1.Monitor }

func (c *cache) each(fn func(*monv1.Monitor)) {
	for _, m := range c.monitors {
		fn(m)
	}
}

func (c *cache) remove(name string) {
	for i, m := range c.monitors {
		if m.Name == name {
			c.monitors = append(c.monitors[:i], c.monitors[i+1:]...)
			return
		}
	}
}

var epoch = time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)

// testMonitor is a monitor created age-th (older monitors have a smaller
// age) checked from regions, with the given latest status per region.
func testMonitor(ns, name string, age int, regions map[string]string) *monv1.Monitor {
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name),
		CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Minute))}}
	for code, status := range regions {
		m.Status.EffectiveRegions = append(m.Status.EffectiveRegions, code)
		if status != "" {
			m.Status.Regions = append(m.Status.Regions, monv1.RegionState{Code: code, Status: status})
		}
	}
	sort.Strings(m.Status.EffectiveRegions)
	return m
}

// scrape gathers s and returns every sample as "name{label=value,...}" →
// value; a histogram gives its _count, _sum and one _bucket per bound.
func scrape(t *testing.T, s *MonitorSeries) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(s); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := func(suffix string, extra ...string) string {
				var ls []string
				for _, l := range m.GetLabel() {
					ls = append(ls, l.GetName()+"="+l.GetValue())
				}
				ls = append(ls, extra...)
				return f.GetName() + suffix + "{" + strings.Join(ls, ",") + "}"
			}
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out[key("_count")] = float64(h.GetSampleCount())
				out[key("_sum")] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					out[key("_bucket", fmt.Sprintf("le=%g", b.GetUpperBound()))] = float64(b.GetCumulativeCount())
				}
			case dto.MetricType_COUNTER:
				out[key("")] = m.GetCounter().GetValue()
			default:
				out[key("")] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// withPrefix keeps the samples whose key starts with prefix.
func withPrefix(samples map[string]float64, prefix string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range samples {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out
}

func TestMonitorSeriesFromStatus(t *testing.T) {
	down := testMonitor("shop", "checkout", 0, map[string]string{"eu": "down", "us": "up", "ap": "degraded", "sa": "blocked", "af": "unknown", "oc": ""})
	down.Status.OpenIncident = &monv1.IncidentRef{ID: "i-1"}
	// A region the monitor no longer uses but whose verdict is still in
	// its status.
	down.Status.Regions = append(down.Status.Regions, monv1.RegionState{Code: "old", Status: "down"})
	paused := testMonitor("shop", "paused", 1, map[string]string{"eu": "down"})
	paused.Spec.Paused = true
	c := &cache{monitors: []*monv1.Monitor{down, paused}}
	s := &MonitorSeries{Monitors: c.each}

	got := scrape(t, s)
	want := map[string]float64{
		"uptime_operator_monitor_up{monitor=checkout,namespace=shop,region=eu}":  0,
		"uptime_operator_monitor_up{monitor=checkout,namespace=shop,region=us}":  1,
		"uptime_operator_monitor_up{monitor=checkout,namespace=shop,region=ap}":  1,
		"uptime_operator_monitor_incident_open{monitor=checkout,namespace=shop}": 1,
		"uptime_operator_monitor_incident_open{monitor=paused,namespace=shop}":   0,
		"uptime_operator_monitor_series_dropped_total{}":                         0,
	}
	assertSamples(t, got, want)
}

func assertSamples(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected sample %s = %v", k, got[k])
		}
	}
}

func TestMonitorSeriesResponseHistogramAndCertificate(t *testing.T) {
	m := testMonitor("shop", "api", 0, map[string]string{"eu": "up", "us": "up"})
	c := &cache{monitors: []*monv1.Monitor{m}}
	s := &MonitorSeries{Monitors: c.each}
	for _, ms := range []int{20, 25, 300, 1000, 12000} {
		s.ObserveResponse(m, "eu", time.Duration(ms)*time.Millisecond)
	}
	s.ObserveResponse(m, "us", 70*time.Millisecond)
	newer, older := epoch.Add(90*24*time.Hour), epoch.Add(10*24*time.Hour)
	s.ObserveCertificate(m, newer, epoch.Add(time.Minute))
	s.ObserveCertificate(m, older, epoch) // an earlier check, ingested late

	got := withPrefix(scrape(t, s), "uptime_operator_monitor_response_seconds")
	eu := func(suffix string, extra ...string) string {
		return "uptime_operator_monitor_response_seconds" + suffix + "{" + strings.Join(append([]string{"monitor=api", "namespace=shop", "region=eu"}, extra...), ",") + "}"
	}
	for le, n := range map[string]float64{"0.025": 2, "0.05": 2, "0.1": 2, "0.25": 2, "0.5": 3, "1": 4, "2.5": 4, "5": 4, "10": 4} {
		if g := got[eu("_bucket", "le="+le)]; g != n {
			t.Errorf("eu bucket le=%s = %v, want %v", le, g, n)
		}
	}
	if g := got[eu("_count")]; g != 5 {
		t.Errorf("eu count = %v, want 5", g)
	}
	if g := got[eu("_sum")]; g < 13.344 || g > 13.346 {
		t.Errorf("eu sum = %v, want 13.345", g)
	}
	if g := got["uptime_operator_monitor_response_seconds_count{monitor=api,namespace=shop,region=us}"]; g != 1 {
		t.Errorf("us count = %v, want 1", g)
	}
	cert := scrape(t, s)["uptime_operator_monitor_certificate_expiry_timestamp_seconds{monitor=api,namespace=shop}"]
	if cert != float64(newer.Unix()) {
		t.Errorf("certificate expiry = %v, want %v (the latest check's)", cert, newer.Unix())
	}
}

// TestMonitorSeriesNoStaleSeries: a monitor that moves off a region loses
// that region's series, a deleted monitor loses all of them, at the next
// scrape, and what was kept for them is freed.
func TestMonitorSeriesNoStaleSeries(t *testing.T) {
	a := testMonitor("shop", "a", 0, map[string]string{"eu": "up", "us": "down"})
	b := testMonitor("shop", "b", 1, map[string]string{"eu": "up"})
	c := &cache{monitors: []*monv1.Monitor{a, b}}
	s := &MonitorSeries{Monitors: c.each}
	s.ObserveResponse(a, "eu", time.Second)
	s.ObserveResponse(a, "us", time.Second)
	s.ObserveResponse(b, "eu", time.Second)
	s.ObserveCertificate(b, epoch, epoch)
	if n := len(withPrefix(scrape(t, s), "uptime_operator_monitor_response_seconds_count")); n != 3 {
		t.Fatalf("%d response histograms before the changes, want 3", n)
	}

	// a moves from us to ap (the controller rewrites its status); b is deleted.
	moved := testMonitor("shop", "a", 0, map[string]string{"eu": "up", "ap": ""})
	c.monitors = []*monv1.Monitor{moved}
	got := scrape(t, s)
	for k := range got {
		if strings.Contains(k, "region=us") || strings.Contains(k, "monitor=b") {
			t.Errorf("stale series %s after the move and the deletion", k)
		}
	}
	if _, ok := got["uptime_operator_monitor_response_seconds_count{monitor=a,namespace=shop,region=eu}"]; !ok {
		t.Errorf("a's eu histogram is gone, want it kept")
	}
	if len(s.observed) != 1 || len(s.observed["shop-a"].regions) != 1 {
		t.Errorf("kept results of %d monitors (a: %d regions), want only a's eu", len(s.observed), len(s.observed["shop-a"].regions))
	}
}

// TestMonitorSeriesLimit: beyond Max, the oldest monitors are exported, the
// others are counted once each and logged, their results are not kept, and
// a deletion makes room for the next oldest.
func TestMonitorSeriesLimit(t *testing.T) {
	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	oldest := testMonitor("b", "oldest", 0, map[string]string{"eu": "up"})
	second := testMonitor("a", "second", 1, map[string]string{"eu": "up"})
	third := testMonitor("a", "third", 2, map[string]string{"eu": "up"})
	c := &cache{monitors: []*monv1.Monitor{third, second, oldest}}
	now := epoch
	s := &MonitorSeries{Max: 2, Monitors: c.each, Log: log, Now: func() time.Time { return now }}

	// Results before the first scrape are already limited.
	s.ObserveResponse(third, "eu", time.Second)
	s.ObserveResponse(oldest, "eu", time.Second)
	got := scrape(t, s)
	incidents := withPrefix(got, "uptime_operator_monitor_incident_open")
	if len(incidents) != 2 || incidents["uptime_operator_monitor_incident_open{monitor=oldest,namespace=b}"] != 0 ||
		incidents["uptime_operator_monitor_incident_open{monitor=second,namespace=a}"] != 0 {
		t.Errorf("exported %v, want the two oldest monitors", incidents)
	}
	if n := len(withPrefix(got, "uptime_operator_monitor_response_seconds_count")); n != 1 {
		t.Errorf("%d response histograms, want 1 (the third monitor's result is not kept)", n)
	}
	if d := got["uptime_operator_monitor_series_dropped_total{}"]; d != 1 {
		t.Errorf("dropped = %v, want 1", d)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], `"leftOut"=1`) {
		t.Errorf("log lines %q, want one saying one monitor is left out", logged)
	}

	// Scraping again counts nobody twice; a new monitor beyond the limit is
	// counted, and logged once the log interval passed.
	c.monitors = append(c.monitors, testMonitor("a", "fourth", 3, nil))
	s.ObserveResponse(c.monitors[3], "eu", time.Second)
	got = scrape(t, s)
	if d := got["uptime_operator_monitor_series_dropped_total{}"]; d != 2 {
		t.Errorf("dropped = %v after a fourth monitor, want 2", d)
	}
	if len(logged) != 1 {
		t.Errorf("%d log lines within the log interval, want 1", len(logged))
	}
	now = now.Add(logLeftOutEvery)
	c.monitors = append(c.monitors, testMonitor("a", "fifth", 4, nil))
	scrape(t, s)
	if len(logged) != 2 {
		t.Errorf("%d log lines after the interval, want 2", len(logged))
	}

	// Deleting the oldest makes the third the second oldest.
	c.remove("oldest")
	scrape(t, s)
	s.ObserveResponse(third, "eu", time.Second)
	got = scrape(t, s)
	if _, ok := got["uptime_operator_monitor_response_seconds_count{monitor=third,namespace=a,region=eu}"]; !ok {
		t.Errorf("third's histogram missing after the oldest was deleted: %v", withPrefix(got, "uptime_operator_monitor_response"))
	}
	if _, ok := got["uptime_operator_monitor_incident_open{monitor=oldest,namespace=b}"]; ok {
		t.Errorf("the deleted monitor is still exported")
	}
}
