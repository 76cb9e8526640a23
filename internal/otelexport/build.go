package otelexport

import (
	"crypto/rand"
	"sort"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Names of what is exported.
const (
	// ScopeName is the instrumentation scope of every span and metric.
	ScopeName = "github.com/uptime-operator/uptime-operator"
	// DefaultServiceName is service.name when the settings name none.
	DefaultServiceName = "uptime-operator"
	// MetricResponseTime is the response-time histogram, in milliseconds.
	MetricResponseTime = "uptime.check.response_time"
	// MetricUp is the gauge: 1 when the latest check of a monitor and region
	// was up or degraded, else 0.
	MetricUp = "uptime.check.up"
)

// Span and data point attribute keys.
const (
	AttrMonitorID    = "monitor.id"
	AttrMonitorName  = "monitor.name"
	AttrRegion       = "region"
	AttrStatus       = "status"
	AttrStatusCode   = "status_code"
	AttrResponseTime = "response_time"
	AttrErrorType    = "error.type"
	AttrErrorMessage = "error.message"
)

// responseBounds are the histogram's bucket bounds, in milliseconds.
var responseBounds = []float64{50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000}

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func integer(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

func resource(ns string, s store.OTelSettings) *resourcepb.Resource {
	name := s.ServiceName
	if name == "" {
		name = DefaultServiceName
	}
	return &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", name), str("uptime.workspace", ns)}}
}

func scope() *commonpb.InstrumentationScope { return &commonpb.InstrumentationScope{Name: ScopeName} }

func nanos(t time.Time) uint64 { return uint64(t.UnixNano()) }

func randomID(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// checkSpan is the span of one check: it ends at the check time and lasts
// the response time; a down check has an error status.
func checkSpan(c store.Check, monitorName string) *tracepb.Span {
	attrs := []*commonpb.KeyValue{
		str(AttrMonitorID, c.MonitorID), str(AttrMonitorName, monitorName), str(AttrRegion, c.Region),
		str(AttrStatus, string(c.Status)), integer(AttrResponseTime, c.ResponseTimeMs),
	}
	if c.StatusCode != nil {
		attrs = append(attrs, integer(AttrStatusCode, int64(*c.StatusCode)))
	}
	if c.ErrorType != "" {
		attrs = append(attrs, str(AttrErrorType, c.ErrorType))
	}
	if c.ErrorMessage != "" {
		attrs = append(attrs, str(AttrErrorMessage, c.ErrorMessage))
	}
	status := &tracepb.Status{}
	switch c.Status {
	case store.StatusDown:
		status.Code, status.Message = tracepb.Status_STATUS_CODE_ERROR, c.ErrorMessage
	case store.StatusUp, store.StatusDegraded:
		status.Code = tracepb.Status_STATUS_CODE_OK
	}
	end := c.CheckedAt
	return &tracepb.Span{
		TraceId: randomID(16), SpanId: randomID(8), Name: "check " + monitorName, Kind: tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: nanos(end.Add(-time.Duration(c.ResponseTimeMs) * time.Millisecond)), EndTimeUnixNano: nanos(end),
		Attributes: attrs, Status: status,
	}
}

// traceRequest is the export request of the spans of checks.
func traceRequest(ns string, s store.OTelSettings, checks []store.Check, names map[string]string) *coltracepb.ExportTraceServiceRequest {
	spans := make([]*tracepb.Span, 0, len(checks))
	for _, c := range checks {
		spans = append(spans, checkSpan(c, nameOf(names, c.MonitorID)))
	}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: resource(ns, s), ScopeSpans: []*tracepb.ScopeSpans{{Scope: scope(), Spans: spans}},
	}}}
}

func nameOf(names map[string]string, id string) string {
	if n := names[id]; n != "" {
		return n
	}
	return id
}

type seriesKey struct{ monitor, region string }

// metricsRequest is the export request of the metrics of checks: per
// monitor and region, a delta histogram of response times over the batch
// and the up gauge of the latest check. It returns the number of data
// points.
func metricsRequest(ns string, s store.OTelSettings, checks []store.Check, names map[string]string) (*colmetricspb.ExportMetricsServiceRequest, int) {
	type series struct {
		first, last time.Time
		latest      store.Check
		count       uint64
		sum         float64
		min, max    float64
		buckets     []uint64
	}
	all := map[seriesKey]*series{}
	for _, c := range checks {
		k := seriesKey{c.MonitorID, c.Region}
		sr := all[k]
		v := float64(c.ResponseTimeMs)
		if sr == nil {
			sr = &series{first: c.CheckedAt, last: c.CheckedAt, latest: c, min: v, max: v, buckets: make([]uint64, len(responseBounds)+1)}
			all[k] = sr
		}
		if c.CheckedAt.Before(sr.first) {
			sr.first = c.CheckedAt
		}
		if !c.CheckedAt.Before(sr.last) {
			sr.last, sr.latest = c.CheckedAt, c
		}
		sr.count++
		sr.sum += v
		sr.min, sr.max = min(sr.min, v), max(sr.max, v)
		sr.buckets[sort.SearchFloat64s(responseBounds, v)]++
	}
	keys := make([]seriesKey, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].monitor != keys[j].monitor {
			return keys[i].monitor < keys[j].monitor
		}
		return keys[i].region < keys[j].region
	})
	var hist []*metricspb.HistogramDataPoint
	var gauge []*metricspb.NumberDataPoint
	for _, k := range keys {
		sr := all[k]
		attrs := []*commonpb.KeyValue{str(AttrMonitorID, k.monitor), str(AttrMonitorName, nameOf(names, k.monitor)), str(AttrRegion, k.region)}
		sum, mn, mx := sr.sum, sr.min, sr.max
		hist = append(hist, &metricspb.HistogramDataPoint{Attributes: attrs, StartTimeUnixNano: nanos(sr.first), TimeUnixNano: nanos(sr.last),
			Count: sr.count, Sum: &sum, Min: &mn, Max: &mx, BucketCounts: sr.buckets, ExplicitBounds: responseBounds})
		up := int64(0)
		if sr.latest.Status == store.StatusUp || sr.latest.Status == store.StatusDegraded {
			up = 1
		}
		gauge = append(gauge, &metricspb.NumberDataPoint{Attributes: attrs, TimeUnixNano: nanos(sr.last),
			Value: &metricspb.NumberDataPoint_AsInt{AsInt: up}})
	}
	req := &colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource: resource(ns, s),
		ScopeMetrics: []*metricspb.ScopeMetrics{{Scope: scope(), Metrics: []*metricspb.Metric{
			{Name: MetricResponseTime, Unit: "ms", Description: "Response time of checks.",
				Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
					AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA, DataPoints: hist}}},
			{Name: MetricUp, Unit: "1", Description: "1 when the latest check was up or degraded, else 0.",
				Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: gauge}}},
		}}},
	}}}
	return req, len(hist) + len(gauge)
}
