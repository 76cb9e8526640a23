package metrics

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
)

// DefaultMonitorSeriesMax is the default of MonitorSeries.Max: the most
// monitors whose series one manager exports. At three regions each that is
// 410,000 series and 48 MB of text a scrape (BenchmarkMonitorSeries;
// docs/monitoring.md has the measured cost).
const DefaultMonitorSeriesMax = 10000

// ResponseBuckets are the upper bounds, in seconds, of the response-time
// histogram: fine where healthy HTTP answers fall (25 ms to 1 s) and up to
// the longest check timeout worth telling apart. Nine buckets keep a
// monitor checked from three regions at 39 series.
var ResponseBuckets = [...]float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// The per-monitor families. Their "namespace" label is the monitor's
// namespace (its workspace), not the scraped Pod's: the chart's
// ServiceMonitor sets honorLabels so that it survives the scrape.
var (
	monitorUpDesc = prometheus.NewDesc("uptime_operator_monitor_up",
		"1 while the latest check of the monitor from the region passed (up or degraded), 0 while it failed; no sample while the region abstains (blocked, unknown), has not checked yet or the monitor is paused.",
		[]string{"namespace", "monitor", "region"}, nil)
	monitorResponseDesc = prometheus.NewDesc("uptime_operator_monitor_response_seconds",
		"Response time of the monitor's checks from the region (passed and failed checks) that this manager replica ingested.",
		[]string{"namespace", "monitor", "region"}, nil)
	monitorCertDesc = prometheus.NewDesc("uptime_operator_monitor_certificate_expiry_timestamp_seconds",
		"Expiry (notAfter, Unix seconds) of the TLS certificate the monitor's latest check with TLS saw on this manager replica.",
		[]string{"namespace", "monitor"}, nil)
	monitorIncidentDesc = prometheus.NewDesc("uptime_operator_monitor_incident_open",
		"1 while the monitor has an open incident, else 0.",
		[]string{"namespace", "monitor"}, nil)
	monitorDroppedDesc = prometheus.NewDesc("uptime_operator_monitor_series_dropped_total",
		"Monitors left out of the per-monitor series because more than --monitor-metrics-max monitors exist, each counted when it is first left out.",
		nil, nil)
)

// MonitorSeries exports the per-monitor series (opt-in, --monitor-metrics):
// up per region, response time per region, certificate expiry and open
// incident, labelled with the monitor's namespace and name.
//
// Every manager replica exports them, and each replica exports the same
// monitors: the series that come from the Monitor status (up, incident
// open) are read from the shared cache at each scrape, so every replica
// reports the same values (aggregate them with max); the response-time
// histogram and the certificate come from the results the replica ingested,
// so the histograms add up across replicas (aggregate with sum) and the
// certificate expiry is the newest any replica saw (aggregate with max).
//
// Cardinality is bounded by Max: when more monitors exist, the Max oldest
// (by creation time, then namespace and name, so every replica picks the
// same ones and a new monitor never pushes out an older one) are exported,
// the others are counted in uptime_operator_monitor_series_dropped_total
// and logged. Series of a deleted monitor, and of a region a monitor no
// longer uses (monitor.Regions), are gone from the next scrape: every
// scrape starts from the Monitors in the cache. Cron (heartbeat) monitors
// run in no region, so they have no up or response series.
type MonitorSeries struct {
	// Max is the most monitors exported (DefaultMonitorSeriesMax when 0).
	Max int
	// Monitors calls fn with every Monitor of the cache; fn must not keep
	// or modify them. Set it before the first scrape.
	Monitors func(fn func(*monv1.Monitor))
	// Log receives the line that says monitors are left out.
	Log logr.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu sync.Mutex
	// observed holds the results of exported monitors, by uid.
	observed map[string]*monitorResults
	// exported is the set of uids exported by the last scrape (nil before
	// the first); leftOut those left out by it.
	exported map[string]struct{}
	leftOut  map[string]struct{}
	dropped  uint64
	lastLog  time.Time
}

// monitorResults is what a replica ingested of one monitor.
type monitorResults struct {
	regions map[string]*histogram
	// certNotAfter is the certificate of the latest check with TLS, seen
	// at certAt.
	certNotAfter, certAt time.Time
}

// histogram counts observations per bucket of ResponseBuckets (not
// cumulative) plus their sum.
type histogram struct {
	buckets [len(ResponseBuckets)]uint64
	count   uint64
	sum     float64
}

func (h *histogram) observe(v float64) {
	if i, _ := slices.BinarySearch(ResponseBuckets[:], v); i < len(h.buckets) {
		h.buckets[i]++
	}
	h.count++
	h.sum += v
}

// ObserveResponse records a check of m from region that took d. Checks of
// monitors beyond the limit are not kept.
func (s *MonitorSeries) ObserveResponse(m *monv1.Monitor, region string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.results(string(m.UID))
	if r == nil {
		return
	}
	h := r.regions[region]
	if h == nil {
		if r.regions == nil {
			r.regions = map[string]*histogram{}
		}
		h = &histogram{}
		r.regions[region] = h
	}
	h.observe(d.Seconds())
}

// ObserveCertificate records the expiry of the certificate a check of m at
// at saw; an older check than the newest one recorded changes nothing.
func (s *MonitorSeries) ObserveCertificate(m *monv1.Monitor, notAfter, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.results(string(m.UID))
	if r == nil || at.Before(r.certAt) {
		return
	}
	r.certNotAfter, r.certAt = notAfter, at
}

// results returns the results of uid, nil when the monitor is beyond the
// limit. The first call selects the exported monitors as a scrape would; a
// monitor created since the last selection is kept while fewer than Max
// are exported: it is then among the Max oldest too.
func (s *MonitorSeries) results(uid string) *monitorResults {
	if r := s.observed[uid]; r != nil {
		return r
	}
	if s.exported == nil {
		s.keep(selectMonitors(s.list(), s.max()))
	}
	if _, ok := s.exported[uid]; !ok {
		if _, left := s.leftOut[uid]; left || len(s.exported) >= s.max() {
			return nil
		}
		s.exported[uid] = struct{}{}
	}
	if s.observed == nil {
		s.observed = map[string]*monitorResults{}
	}
	r := &monitorResults{}
	s.observed[uid] = r
	return r
}

// list returns every Monitor of the cache.
func (s *MonitorSeries) list() []*monv1.Monitor {
	var all []*monv1.Monitor
	if s.Monitors != nil {
		s.Monitors(func(m *monv1.Monitor) { all = append(all, m) })
	}
	return all
}

func (s *MonitorSeries) max() int { return cmp.Or(s.Max, DefaultMonitorSeriesMax) }

// Describe implements prometheus.Collector.
func (s *MonitorSeries) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{monitorUpDesc, monitorResponseDesc, monitorCertDesc, monitorIncidentDesc, monitorDroppedDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (s *MonitorSeries) Collect(ch chan<- prometheus.Metric) {
	exported, leftOut := selectMonitors(s.list(), s.max())
	out := make([]prometheus.Metric, 0, 4*len(exported)+1)
	s.mu.Lock()
	s.keep(exported, leftOut)
	for _, m := range exported {
		out = s.appendSeries(out, m)
	}
	out = append(out, prometheus.MustNewConstMetric(monitorDroppedDesc, prometheus.CounterValue, float64(s.dropped)))
	s.mu.Unlock()
	for _, m := range out {
		ch <- m
	}
}

// selectMonitors splits all into the max oldest monitors and the others.
func selectMonitors(all []*monv1.Monitor, max int) (exported, leftOut []*monv1.Monitor) {
	if len(all) <= max {
		return all, nil
	}
	slices.SortFunc(all, func(a, b *monv1.Monitor) int {
		return cmp.Or(a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return all[:max], all[max:]
}

// keep makes exported the monitors of record: results of any other
// monitor (deleted, or pushed beyond the limit) are dropped, monitors
// newly left out are counted and logged. s.mu is held.
func (s *MonitorSeries) keep(exported, leftOut []*monv1.Monitor) {
	s.exported = make(map[string]struct{}, len(exported))
	for _, m := range exported {
		s.exported[string(m.UID)] = struct{}{}
	}
	for uid := range s.observed {
		if _, ok := s.exported[uid]; !ok {
			delete(s.observed, uid)
		}
	}
	left := make(map[string]struct{}, len(leftOut))
	newly := 0
	for _, m := range leftOut {
		uid := string(m.UID)
		left[uid] = struct{}{}
		if _, ok := s.leftOut[uid]; !ok {
			newly++
		}
	}
	s.leftOut = left
	s.dropped += uint64(newly)
	now := s.now()
	if newly > 0 && now.Sub(s.lastLog) >= logLeftOutEvery && s.Log.GetSink() != nil {
		s.lastLog = now
		s.Log.Info("per-monitor metrics left out monitors beyond the limit; raise --monitor-metrics-max to export them",
			"max", s.max(), "monitors", len(exported)+len(leftOut), "leftOut", len(leftOut), "newlyLeftOut", newly)
	}
}

// logLeftOutEvery spaces the lines that say monitors are left out.
const logLeftOutEvery = 10 * time.Minute

func (s *MonitorSeries) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// appendSeries appends the series of m. Histograms of regions m no longer
// uses are dropped. s.mu is held.
func (s *MonitorSeries) appendSeries(out []prometheus.Metric, m *monv1.Monitor) []prometheus.Metric {
	ns, name := m.Namespace, m.Name
	open := 0.0
	if m.Status.OpenIncident != nil {
		open = 1
	}
	out = append(out, prometheus.MustNewConstMetric(monitorIncidentDesc, prometheus.GaugeValue, open, ns, name))
	regions := monitor.Regions(m)
	uses := func(region string) bool { return slices.Contains(regions, region) }
	if !m.Spec.Paused {
		for _, r := range m.Status.Regions {
			if !uses(r.Code) {
				continue
			}
			if up, ok := regionUp(r.Status); ok {
				out = append(out, prometheus.MustNewConstMetric(monitorUpDesc, prometheus.GaugeValue, up, ns, name, r.Code))
			}
		}
	}
	res := s.observed[string(m.UID)]
	if res == nil {
		return out
	}
	if !res.certNotAfter.IsZero() {
		out = append(out, prometheus.MustNewConstMetric(monitorCertDesc, prometheus.GaugeValue,
			float64(res.certNotAfter.Unix()), ns, name))
	}
	for region, h := range res.regions {
		if !uses(region) {
			delete(res.regions, region)
			continue
		}
		out = append(out, prometheus.MustNewConstHistogram(monitorResponseDesc, h.count, h.sum, h.cumulative(), ns, name, region))
	}
	return out
}

// cumulative returns the buckets as Prometheus counts them: each bound
// with the observations at or below it.
func (h *histogram) cumulative() map[float64]uint64 {
	out := make(map[float64]uint64, len(ResponseBuckets))
	var n uint64
	for i, le := range ResponseBuckets {
		n += h.buckets[i]
		out[le] = n
	}
	return out
}

// regionUp is the up value of a region's latest check status; false for
// the statuses that abstain (blocked, unknown) and for none yet.
func regionUp(status string) (float64, bool) {
	switch status {
	case "up", "degraded":
		return 1, true
	case "down":
		return 0, true
	}
	return 0, false
}

// monitorSeries is the MonitorSeries the registry collects, nil while the
// series are off; a manager started again in the same process (tests)
// replaces its predecessor's.
var monitorSeries atomic.Pointer[MonitorSeries]

// monitorSeriesCollector hands the registry's scrape to the MonitorSeries
// set by SetMonitorSeries, so it is registered once.
type monitorSeriesCollector struct{}

func (monitorSeriesCollector) Describe(ch chan<- *prometheus.Desc) { (&MonitorSeries{}).Describe(ch) }

func (monitorSeriesCollector) Collect(ch chan<- prometheus.Metric) {
	if s := monitorSeries.Load(); s != nil {
		s.Collect(ch)
	}
}

// SetMonitorSeries makes the manager's metrics endpoint serve s; nil turns
// the per-monitor series off.
func SetMonitorSeries(s *MonitorSeries) { monitorSeries.Store(s) }
