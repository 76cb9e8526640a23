package otelexport

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// Defaults of an Exporter.
const (
	// DefaultQueueSize is how many checks wait for export at most; more are
	// dropped.
	DefaultQueueSize = 20000
	// DefaultFlushInterval is the longest a check waits in the queue.
	DefaultFlushInterval = 5 * time.Second
	// DefaultBatchSize is the most checks of one workspace per export.
	DefaultBatchSize = 2000
	// ExportTimeout bounds one export request.
	ExportTimeout = 10 * time.Second
	// settingsTTL is how long a workspace's settings are cached.
	settingsTTL = 30 * time.Second
	// sendConcurrency is how many workspaces are exported to at once.
	sendConcurrency = 4
	userAgent       = "uptime-operator-otlp/1.0"
)

// Exporter queues ingested checks and exports them to each workspace's
// OTLP endpoint. It is a manager Runnable that runs on every replica (each
// exports what it ingested); Export and SendTest may be called before Start.
type Exporter struct {
	// Store holds the settings and the delivery status.
	Store Store
	// Reader lists Monitors for their names (the manager's cache); nil
	// names spans after monitor ids.
	Reader client.Reader
	// AllowPrivateTargets turns the address guard off (tests, in-cluster
	// collectors).
	AllowPrivateTargets bool
	// QueueSize, FlushInterval and BatchSize default to the Default*
	// constants.
	QueueSize     int
	FlushInterval time.Duration
	BatchSize     int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Log receives the exporter's logs.
	Log logr.Logger

	once    sync.Once
	wake    chan struct{}
	client  *http.Client
	dropped atomic.Int64

	mu        sync.Mutex
	queue     map[string][]store.Check
	queued    int
	nsDropped map[string]int64

	cacheMu  sync.Mutex
	settings map[string]cachedSettings
	conns    map[string]*grpc.ClientConn
}

type cachedSettings struct {
	s       store.OTelSettings
	ok      bool
	fetched time.Time
}

// NeedLeaderElection is false: every replica exports the checks it ingests.
func (e *Exporter) NeedLeaderElection() bool { return false }

func (e *Exporter) setup() {
	e.once.Do(func() {
		e.wake = make(chan struct{}, 1)
		e.queue = map[string][]store.Check{}
		e.nsDropped = map[string]int64{}
		e.settings = map[string]cachedSettings{}
		e.conns = map[string]*grpc.ClientConn{}
		guard := netguard.Guard{AllowPrivate: e.AllowPrivateTargets}
		e.client = &http.Client{Timeout: ExportTimeout, Transport: &http.Transport{
			DialContext:           guard.Dialer(ExportTimeout).DialContext,
			TLSClientConfig:       trust.ClientConfig(),
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   ExportTimeout,
			ResponseHeaderTimeout: ExportTimeout,
			MaxIdleConnsPerHost:   2,
			IdleConnTimeout:       90 * time.Second,
		}}
	})
}

func (e *Exporter) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Exporter) log() logr.Logger {
	if e.Log.GetSink() == nil {
		return logr.Discard()
	}
	return e.Log
}

// Export queues a batch of ingested checks of workspace ns. It never blocks:
// checks beyond the queue's capacity are dropped and counted.
func (e *Exporter) Export(_ context.Context, ns string, checks []store.Check) {
	if len(checks) == 0 {
		return
	}
	e.setup()
	size := e.QueueSize
	if size <= 0 {
		size = DefaultQueueSize
	}
	e.mu.Lock()
	room := max(size-e.queued, 0)
	take := min(room, len(checks))
	if take > 0 {
		e.queue[ns] = append(e.queue[ns], checks[:take]...)
		e.queued += take
	}
	if drop := len(checks) - take; drop > 0 {
		e.nsDropped[ns] += int64(drop)
		e.dropped.Add(int64(drop))
	}
	full := e.queued >= size/2
	e.mu.Unlock()
	if full {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

// Dropped is the number of checks dropped because the queue was full.
func (e *Exporter) Dropped() int64 { return e.dropped.Load() }

// Invalidate forgets the cached settings of ns (they were changed).
func (e *Exporter) Invalidate(ns string) {
	e.setup()
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	delete(e.settings, ns)
	for k, c := range e.conns {
		if strings.HasPrefix(k, ns+"\x00") {
			_ = c.Close()
			delete(e.conns, k)
		}
	}
}

// Start exports the queue every FlushInterval (sooner when it fills up)
// until ctx ends, then flushes once more.
func (e *Exporter) Start(ctx context.Context) error {
	e.setup()
	interval := e.FlushInterval
	if interval <= 0 {
		interval = DefaultFlushInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ExportTimeout)
			e.Flush(fctx)
			cancel()
			e.closeConns()
			return nil
		case <-t.C:
		case <-e.wake:
		}
		e.Flush(ctx)
	}
}

func (e *Exporter) closeConns() {
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	for k, c := range e.conns {
		_ = c.Close()
		delete(e.conns, k)
	}
}

// Flush exports everything queued now, workspaces in parallel.
func (e *Exporter) Flush(ctx context.Context) {
	e.setup()
	e.mu.Lock()
	queue, dropped := e.queue, e.nsDropped
	e.queue, e.nsDropped, e.queued = map[string][]store.Check{}, map[string]int64{}, 0
	e.mu.Unlock()
	sem := make(chan struct{}, sendConcurrency)
	var wg sync.WaitGroup
	for ns, checks := range queue {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			e.flushNamespace(ctx, ns, checks, dropped[ns])
		}()
	}
	wg.Wait()
	// Drops of workspaces that had nothing queued are still recorded.
	for ns, n := range dropped {
		if _, ok := queue[ns]; !ok {
			e.record(ctx, store.OTelExportResult{Namespace: ns, At: e.now(), Dropped: n}, true)
		}
	}
}

func (e *Exporter) flushNamespace(ctx context.Context, ns string, checks []store.Check, dropped int64) {
	s, ok, err := e.settingsOf(ctx, ns)
	if err != nil {
		e.log().Error(err, "unable to read telemetry export settings", "namespace", ns)
		return
	}
	if !ok || !s.Enabled || (!s.ExportSpans && !s.ExportMetrics) {
		return
	}
	names := e.monitorNames(ctx, ns)
	batch := e.BatchSize
	if batch <= 0 {
		batch = DefaultBatchSize
	}
	for start := 0; start < len(checks); start += batch {
		part := checks[start:min(start+batch, len(checks))]
		res := e.send(ctx, ns, s, part, names)
		if start == 0 {
			res.Dropped = dropped
		}
		e.record(ctx, res, s.Enabled)
	}
}

func (e *Exporter) record(ctx context.Context, r store.OTelExportResult, ok bool) {
	if !ok {
		return
	}
	if err := e.Store.RecordOTelExport(ctx, r); err != nil && !errors.Is(err, store.ErrInvalid) {
		e.log().Error(err, "unable to record telemetry export", "namespace", r.Namespace)
	}
}

// send exports the spans and metrics of checks and reports the outcome.
func (e *Exporter) send(ctx context.Context, ns string, s store.OTelSettings, checks []store.Check, names map[string]string) store.OTelExportResult {
	res := store.OTelExportResult{Namespace: ns, At: e.now()}
	var errs []error
	if s.ExportSpans {
		if err := e.exportTraces(ctx, s, traceRequest(ns, s, checks, names)); err != nil {
			errs = append(errs, err)
		} else {
			res.Spans = int64(len(checks))
		}
	}
	if s.ExportMetrics {
		req, points := metricsRequest(ns, s, checks, names)
		if err := e.exportMetrics(ctx, s, req); err != nil {
			errs = append(errs, err)
		} else {
			res.DataPoints = int64(points)
		}
	}
	if err := errors.Join(errs...); err != nil {
		res.Error = err.Error()
		e.log().V(1).Info("telemetry export failed", "namespace", ns, "error", res.Error)
	}
	return res
}

// SendTest sends one test span with settings s (which need not be enabled
// or saved) and records the outcome when s is the saved configuration.
func (e *Exporter) SendTest(ctx context.Context, s store.OTelSettings, record bool) error {
	e.setup()
	now := e.now()
	code := 200
	c := store.Check{ID: "test", MonitorID: "test", Namespace: s.Namespace, Region: "test", CheckedAt: now,
		Status: store.StatusUp, StatusCode: &code, ResponseTimeMs: 42}
	req := traceRequest(s.Namespace, s, []store.Check{c}, map[string]string{"test": "Test Monitor"})
	err := e.exportTraces(ctx, s, req)
	if record {
		r := store.OTelExportResult{Namespace: s.Namespace, At: now, Spans: 1}
		if err != nil {
			r.Error = err.Error()
		}
		e.record(ctx, r, true)
	}
	return err
}

func (e *Exporter) exportTraces(ctx context.Context, s store.OTelSettings, req *coltracepb.ExportTraceServiceRequest) error {
	if s.Protocol == store.OTelGRPC {
		conn, err := e.conn(s)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(withHeaders(ctx, s.Headers), ExportTimeout)
		defer cancel()
		if _, err := coltracepb.NewTraceServiceClient(conn).Export(ctx, req); err != nil {
			return fmt.Errorf("export spans: %w", err)
		}
		return nil
	}
	return e.post(ctx, s, "/v1/traces", req)
}

func (e *Exporter) exportMetrics(ctx context.Context, s store.OTelSettings, req *colmetricspb.ExportMetricsServiceRequest) error {
	if s.Protocol == store.OTelGRPC {
		conn, err := e.conn(s)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(withHeaders(ctx, s.Headers), ExportTimeout)
		defer cancel()
		if _, err := colmetricspb.NewMetricsServiceClient(conn).Export(ctx, req); err != nil {
			return fmt.Errorf("export metrics: %w", err)
		}
		return nil
	}
	return e.post(ctx, s, "/v1/metrics", req)
}

func withHeaders(ctx context.Context, h map[string]string) context.Context {
	if len(h) == 0 {
		return ctx
	}
	md := metadata.MD{}
	for k, v := range h {
		md.Set(strings.ToLower(k), v)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// post sends an OTLP/HTTP request to the endpoint's path.
func (e *Exporter) post(ctx context.Context, s store.OTelSettings, path string, msg proto.Message) error {
	var body []byte
	var err error
	ctype := "application/x-protobuf"
	if s.Protocol == store.OTelHTTPJSON {
		ctype = "application/json"
		body, err = MarshalJSON(msg)
	} else {
		body, err = proto.Marshal(msg)
	}
	if err != nil {
		return fmt.Errorf("encode OTLP request: %w", err)
	}
	target := strings.TrimRight(s.Endpoint, "/") + path
	ctx, cancel := context.WithTimeout(ctx, ExportTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build OTLP request: %w", err)
	}
	for k, v := range s.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("User-Agent", userAgent)
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("post %s: %w", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("post %s: endpoint answered %d: %s", path, resp.StatusCode, strings.TrimSpace(string(excerpt)))
	}
	return nil
}

// conn returns the cached gRPC connection of s's endpoint.
func (e *Exporter) conn(s store.OTelSettings) (*grpc.ClientConn, error) {
	key := s.Namespace + "\x00" + s.Endpoint
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	if c := e.conns[key]; c != nil {
		return c, nil
	}
	u, err := url.Parse(s.Endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("grpc endpoint %q: want http://host:port or https://host:port", s.Endpoint)
	}
	creds := insecure.NewCredentials()
	if u.Scheme == "https" {
		creds = credentials.NewTLS(trust.ClientConfig())
	}
	guard := netguard.Guard{AllowPrivate: e.AllowPrivateTargets}
	dialer := guard.Dialer(ExportTimeout)
	c, err := grpc.NewClient("passthrough:///"+u.Host, grpc.WithTransportCredentials(creds), grpc.WithUserAgent(userAgent),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", addr)
		}))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", s.Endpoint, err)
	}
	e.conns[key] = c
	return c, nil
}

// settingsOf returns the cached settings of ns; ok is false when there are
// none.
func (e *Exporter) settingsOf(ctx context.Context, ns string) (store.OTelSettings, bool, error) {
	now := e.now()
	e.cacheMu.Lock()
	c, hit := e.settings[ns]
	e.cacheMu.Unlock()
	if hit && now.Sub(c.fetched) < settingsTTL && !now.Before(c.fetched) {
		return c.s, c.ok, nil
	}
	s, err := e.Store.GetOTelSettings(ctx, ns)
	ok := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return s, false, err
	}
	e.cacheMu.Lock()
	e.settings[ns] = cachedSettings{s: s, ok: ok, fetched: now}
	e.cacheMu.Unlock()
	return s, ok, nil
}

// monitorNames maps the monitor UIDs of ns to their display names.
func (e *Exporter) monitorNames(ctx context.Context, ns string) map[string]string {
	names := map[string]string{}
	if e.Reader == nil {
		return names
	}
	var list monv1.MonitorList
	if err := e.Reader.List(ctx, &list, client.InNamespace(ns)); err != nil {
		e.log().V(1).Info("unable to list monitors for span names", "namespace", ns, "error", err.Error())
		return names
	}
	for _, m := range list.Items {
		n := m.Spec.Name
		if n == "" {
			n = m.Name
		}
		names[string(m.UID)] = n
	}
	return names
}

// MarshalJSON encodes an OTLP message as OTLP/JSON: protobuf JSON with enum
// numbers, and trace and span ids as hex strings rather than base64.
func MarshalJSON(msg proto.Message) ([]byte, error) {
	raw, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(msg)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	hexIDs(doc)
	return json.Marshal(doc)
}

func hexIDs(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if s, ok := x.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
				if b, err := base64.StdEncoding.DecodeString(s); err == nil {
					t[k] = hex.EncodeToString(b)
				}
				continue
			}
			hexIDs(x)
		}
	case []any:
		for _, x := range t {
			hexIDs(x)
		}
	}
}
