package otelexport

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// receiver is a local OTLP/HTTP receiver that decodes protobuf bodies.
type receiver struct {
	mu      sync.Mutex
	traces  []*coltracepb.ExportTraceServiceRequest
	metrics []*colmetricspb.ExportMetricsServiceRequest
	headers []http.Header
	bodies  []string
	status  int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.headers = append(rc.headers, r.Header.Clone())
	rc.bodies = append(rc.bodies, string(body))
	if rc.status != 0 {
		w.WriteHeader(rc.status)
		return
	}
	if r.Header.Get("Content-Type") != "application/x-protobuf" {
		return
	}
	switch r.URL.Path {
	case "/otlp/v1/traces":
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.traces = append(rc.traces, &req)
	case "/otlp/v1/metrics":
		var req colmetricspb.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.metrics = append(rc.metrics, &req)
	default:
		http.NotFound(w, r)
	}
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.Key] = v.IntValue
		}
	}
	return out
}

func newStore(t *testing.T) store.Store {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

var at = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func checks() []store.Check {
	ok, bad := 200, 503
	return []store.Check{
		{ID: "1", MonitorID: "m1", Namespace: "team", Region: "eu", CheckedAt: at, Status: store.StatusUp, StatusCode: &ok, ResponseTimeMs: 120},
		{ID: "2", MonitorID: "m1", Namespace: "team", Region: "eu", CheckedAt: at.Add(time.Minute), Status: store.StatusDown, StatusCode: &bad,
			ResponseTimeMs: 800, ErrorType: "http_status", ErrorMessage: "status 503"},
		{ID: "3", MonitorID: "m2", Namespace: "team", Region: "us", CheckedAt: at, Status: store.StatusDegraded, ResponseTimeMs: 3000},
	}
}

func TestExportHTTPProtobuf(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	st := newStore(t)
	ctx := context.Background()
	_, err := st.PutOTelSettings(ctx, store.OTelSettings{Namespace: "team", Endpoint: srv.URL + "/otlp", Protocol: store.OTelHTTPProtobuf,
		Headers: map[string]string{"X-Api-Key": "secret"}, ServiceName: "shop-uptime", Enabled: true, ExportSpans: true, ExportMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	e := &Exporter{Store: st, AllowPrivateTargets: true}
	e.Export(ctx, "team", checks())
	e.Export(ctx, "nobody", checks()) // no settings: nothing is sent
	e.Flush(ctx)

	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.traces) != 1 || len(rc.metrics) != 1 {
		t.Fatalf("received %d trace and %d metric requests", len(rc.traces), len(rc.metrics))
	}
	for _, h := range rc.headers {
		if h.Get("X-Api-Key") != "secret" {
			t.Fatalf("header not sent: %v", h)
		}
	}
	rs := rc.traces[0].ResourceSpans[0]
	if res := attrs(rs.Resource.Attributes); res["service.name"] != "shop-uptime" || res["uptime.workspace"] != "team" {
		t.Fatalf("resource = %v", res)
	}
	spans := rs.ScopeSpans[0].Spans
	if len(spans) != 3 {
		t.Fatalf("spans = %d", len(spans))
	}
	down := spans[1]
	a := attrs(down.Attributes)
	if down.Name != "check m1" || a["region"] != "eu" || a["status"] != "down" || a["status_code"] != int64(503) || a["response_time"] != int64(800) ||
		down.Status.Code != tracepb.Status_STATUS_CODE_ERROR || down.Status.Message != "status 503" {
		t.Fatalf("down span = %v %v", down.Name, a)
	}
	if time.Duration(down.EndTimeUnixNano-down.StartTimeUnixNano) != 800*time.Millisecond || len(down.TraceId) != 16 || len(down.SpanId) != 8 {
		t.Fatalf("span timing or ids: %v", down)
	}
	if spans[0].Status.Code != tracepb.Status_STATUS_CODE_OK {
		t.Fatalf("up span status = %v", spans[0].Status)
	}
	ms := rc.metrics[0].ResourceMetrics[0].ScopeMetrics[0].Metrics
	if len(ms) != 2 || ms[0].Name != MetricResponseTime || ms[1].Name != MetricUp {
		t.Fatalf("metrics = %v", ms)
	}
	hist := ms[0].GetHistogram().DataPoints
	if len(hist) != 2 || hist[0].Count != 2 || hist[0].GetSum() != 920 || attrs(hist[0].Attributes)["region"] != "eu" {
		t.Fatalf("histogram = %v", hist)
	}
	gauge := ms[1].GetGauge().DataPoints
	if gauge[0].GetAsInt() != 0 || gauge[1].GetAsInt() != 1 {
		t.Fatalf("up gauge: m1 (latest down) = %d, m2 (degraded) = %d", gauge[0].GetAsInt(), gauge[1].GetAsInt())
	}
	d, err := st.GetOTelDelivery(ctx, "team")
	if err != nil || d.SpansExported != 3 || d.PointsExported != 4 || d.LastSuccessAt == nil || d.LastError != "" {
		t.Fatalf("delivery = %+v, %v", d, err)
	}
}

func TestExportHTTPJSONAndFailures(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	st := newStore(t)
	ctx := context.Background()
	s, err := st.PutOTelSettings(ctx, store.OTelSettings{Namespace: "team", Endpoint: srv.URL + "/otlp", Protocol: store.OTelHTTPJSON,
		Enabled: true, ExportSpans: true})
	if err != nil {
		t.Fatal(err)
	}
	e := &Exporter{Store: st, AllowPrivateTargets: true, QueueSize: 4}
	if err := e.SendTest(ctx, s, true); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	var doc struct {
		ResourceSpans []struct {
			ScopeSpans []struct {
				Spans []struct {
					TraceID string `json:"traceId"`
					SpanID  string `json:"spanId"`
					Name    string `json:"name"`
					Kind    int    `json:"kind"`
				} `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	if err := json.Unmarshal([]byte(rc.bodies[0]), &doc); err != nil {
		t.Fatal(err)
	}
	sp := doc.ResourceSpans[0].ScopeSpans[0].Spans[0]
	if _, err := hex.DecodeString(sp.TraceID); err != nil || len(sp.TraceID) != 32 || len(sp.SpanID) != 16 || sp.Name != "check Test Monitor" || sp.Kind != 3 {
		t.Fatalf("OTLP/JSON span = %+v (%s)", sp, rc.bodies[0])
	}
	if ct := rc.headers[0].Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	rc.status = http.StatusServiceUnavailable
	rc.mu.Unlock()

	// A failing endpoint is recorded; a full queue drops and counts.
	e.Export(ctx, "team", append(checks(), checks()...))
	if e.Dropped() != 2 {
		t.Fatalf("dropped = %d, want 2", e.Dropped())
	}
	e.Flush(ctx)
	d, err := st.GetOTelDelivery(ctx, "team")
	if err != nil || d.FailedExports != 1 || d.DroppedChecks != 2 || d.SpansExported != 1 {
		t.Fatalf("delivery after a failing export = %+v, %v", d, err)
	}
	if d.LastError == "" || d.LastErrorAt == nil {
		t.Fatalf("last error not recorded: %+v", d)
	}
}

// grpcReceiver is a local OTLP/gRPC receiver.
type grpcReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	colmetricspb.UnimplementedMetricsServiceServer
	mu      sync.Mutex
	spans   int
	points  int
	headers []string
}

func (g *grpcReceiver) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.headers = append(g.headers, md.Get("authorization")...)
	g.spans += len(req.ResourceSpans[0].ScopeSpans[0].Spans)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type metricsReceiver struct {
	colmetricspb.UnimplementedMetricsServiceServer
	g *grpcReceiver
}

func (m metricsReceiver) Export(_ context.Context, req *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	m.g.mu.Lock()
	defer m.g.mu.Unlock()
	m.g.points += len(req.ResourceMetrics[0].ScopeMetrics[0].Metrics[1].GetGauge().DataPoints)
	return &colmetricspb.ExportMetricsServiceResponse{}, nil
}

func TestExportGRPC(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &grpcReceiver{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, g)
	colmetricspb.RegisterMetricsServiceServer(srv, metricsReceiver{g: g})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	st := newStore(t)
	ctx := context.Background()
	if _, err := st.PutOTelSettings(ctx, store.OTelSettings{Namespace: "team", Endpoint: "http://" + lis.Addr().String(), Protocol: store.OTelGRPC,
		Headers: map[string]string{"Authorization": "Bearer t"}, Enabled: true, ExportSpans: true, ExportMetrics: true}); err != nil {
		t.Fatal(err)
	}
	e := &Exporter{Store: st, AllowPrivateTargets: true}
	e.Export(ctx, "team", checks())
	e.Flush(ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.spans != 3 || g.points != 2 || len(g.headers) != 1 || g.headers[0] != "Bearer t" {
		t.Fatalf("gRPC receiver got %d spans, %d up points, headers %v", g.spans, g.points, g.headers)
	}
	e.closeConns()
}

func TestGuardBlocksPrivateEndpoints(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	e := &Exporter{Store: newStore(t)}
	err := e.SendTest(context.Background(), store.OTelSettings{Namespace: "team", Endpoint: srv.URL, Protocol: store.OTelHTTPProtobuf}, false)
	if err == nil {
		t.Fatal("export to a loopback endpoint passed the address guard")
	}
}
