package alerting

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// benchChannels are webhook channels to one HTTPS receiver.
func benchChannels(n int, url string) ([]client.Object, []string) {
	var objs []client.Object
	var ids []string
	for i := range n {
		ch, s := webhookChannel(fmt.Sprintf("hook%d", i), url)
		objs = append(objs, ch, s)
		ids = append(ids, string(ch.UID))
	}
	return objs, ids
}

// benchClient trusts the test server and keeps enough idle connections for
// the worker's parallel channels.
func benchClient(srv *httptest.Server) *http.Client {
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: tr}
}

func benchStore(b *testing.B) store.Store {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "store.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st
}

// BenchmarkDeliveries measures signed webhook deliveries per second through
// the real Worker and SQLite store to a local HTTPS receiver that answers
// 200: leasing, signing, sending and recording every attempt (channel
// status goes to a fake API client). Target: at least 2,000/s.
func BenchmarkDeliveries(b *testing.B) {
	var got atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	objs, chans := benchChannels(16, srv.URL)
	st := benchStore(b)
	h := &harness{st: st, k8s: fakeClient(objs...)}
	p, _ := alertevent.NewIncidentPayload(alertevent.MonitorDown, alertevent.IncidentFacts{MonitorName: "API", IncidentID: uuid.NewString(), StartedAt: time.Now()})
	ctx := context.Background()
	var evs []store.OutboxEvent
	for i := 0; i < b.N; i += len(chans) {
		ev, _ := newEvent("team", alertevent.MonitorDown, p, chans[:min(len(chans), b.N-i)])
		evs = append(evs, ev)
	}
	for batch := range slices.Chunk(evs, 256) {
		if err := st.EnqueueEvents(ctx, batch...); err != nil {
			b.Fatal(err)
		}
	}
	w := &Worker{Store: st, Client: h.k8s, Owner: "bench", HTTPClient: benchClient(srv),
		BatchSize: 128, PollInterval: 5 * time.Millisecond}
	b.ResetTimer()
	start := time.Now()
	stop := (&harness{}).run(w)
	for got.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	for {
		ds, err := st.ListDeliveries(ctx, store.DeliveryQuery{Status: store.DeliveryPending, Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(ds) == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
}

// BenchmarkOpenToFirstAttempt measures the delay from an incident opening
// (the engine's path: the router builds the down event, the store opens the
// incident with it, the adapter kicks the worker) to the first delivery
// attempt reaching the receiver, with incidents opening every 2 ms and the
// worker's idle poll at its 1 s default. Target: p99 at most 1 s.
func BenchmarkOpenToFirstAttempt(b *testing.B) {
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			IncidentID string `json:"incident_id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&p)
		mu.Lock()
		if _, ok := arrived[p.IncidentID]; !ok {
			arrived[p.IncidentID] = time.Now()
		}
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	objs, _ := benchChannels(1, srv.URL)
	st := benchStore(b)
	k8s := fakeClient(objs...)
	w := &Worker{Store: st, Client: k8s, Owner: "bench", HTTPClient: benchClient(srv)}
	stop := (&harness{}).run(w)
	defer stop()
	alerts := EngineAlerts{Router: &Router{Reader: k8s}, Kick: w.Kick}
	ctx := context.Background()
	opened := make(map[string]time.Time, b.N)

	b.ResetTimer()
	for i := range b.N {
		m := monitor(fmt.Sprintf("m%d", i), "")
		inc := store.Incident{ID: uuid.NewString(), Namespace: "team", MonitorID: string(m.UID), StartedAt: time.Now()}
		t0 := time.Now()
		evs, err := alerts.IncidentEvents(ctx, alertevent.MonitorDown, m, inc, alertevent.Decision{Reason: "timeout"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.OpenIncident(ctx, inc, evs...); err != nil {
			b.Fatal(err)
		}
		opened[inc.ID] = t0
		time.Sleep(2 * time.Millisecond)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		n := len(arrived)
		mu.Unlock()
		if n >= b.N {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d incidents reached the receiver", n, b.N)
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	lat := make([]time.Duration, 0, b.N)
	for id, t0 := range opened {
		lat = append(lat, arrived[id].Sub(t0))
	}
	slices.Sort(lat)
	pct := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
