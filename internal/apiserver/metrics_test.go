package apiserver

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/uptime-operator/uptime-operator/internal/metrics"
)

func counterValue(t *testing.T, route, method, code string) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.APIRequests.WithLabelValues(route, method, code).(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func histogramCount(t *testing.T, route, method string) uint64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.APIRequestDuration.WithLabelValues(route, method).(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

func inFlight(t *testing.T) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.APIRequestsInFlight.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// testRouter mimics the API's router: parameters, a wildcard, a sub-router,
// its own NotFound and MethodNotAllowed handlers.
func testRouter(t *testing.T) chi.Router {
	rt := chi.NewRouter()
	rt.NotFound(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) })
	rt.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) })
	rt.Get("/monitors/{id}", func(w http.ResponseWriter, r *http.Request) {
		if chi.URLParam(r, "id") == "" {
			t.Error("URL parameter id is empty behind Instrument")
		}
		w.WriteHeader(http.StatusOK)
	})
	rt.Post("/monitors", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusCreated) })
	rt.Get("/quiet", func(http.ResponseWriter, *http.Request) {}) // writes nothing: 200
	rt.Get("/automation/monitors/*", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) })
	rt.Get("/panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
	rt.Get("/stream", func(w http.ResponseWriter, _ *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the wrapped ResponseWriter lost http.Flusher")
		}
		_, _ = w.Write([]byte("x"))
	})
	rt.Route("/incidents/{id}", func(r chi.Router) {
		r.Get("/notes", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) })
	})
	return rt
}

func TestInstrumentLabelsByRoutePattern(t *testing.T) {
	// The manager wraps the API router from outside, behind a ServeMux, as
	// the root of the direct listener does.
	mux := http.NewServeMux()
	mux.Handle("/", testRouter(t))
	h := Instrument(mux)

	cases := []struct {
		method, path, route, code string
	}{
		{http.MethodGet, "/monitors/0b6c1f5e", "/monitors/{id}", "200"},
		{http.MethodGet, "/monitors/another-id", "/monitors/{id}", "200"},
		{http.MethodPost, "/monitors", "/monitors", "201"},
		{http.MethodGet, "/quiet", "/quiet", "200"},
		{http.MethodGet, "/automation/monitors/team/a/b", "/automation/monitors/*", "404"},
		{http.MethodGet, "/incidents/42/notes", "/incidents/{id}/notes", "202"},
		{http.MethodGet, "/stream", "/stream", "200"},
		{http.MethodGet, "/no/such/path", unmatchedRoute, "404"},
		{"BREW", "/monitors", unmatchedRoute, "405"},
	}
	type key struct{ route, method, code string }
	want := map[key]float64{}
	wantHist := map[[2]string]uint64{}
	for _, c := range cases {
		m := methodLabel(c.method)
		k := key{c.route, m, c.code}
		if _, ok := want[k]; !ok {
			want[k] = counterValue(t, c.route, m, c.code)
			wantHist[[2]string{c.route, m}] = histogramCount(t, c.route, m)
		}
		want[k]++
		wantHist[[2]string{c.route, m}]++
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if got := strconv.Itoa(rec.Code); got != c.code {
			t.Errorf("%s %s: status %s, want %s", c.method, c.path, got, c.code)
		}
	}
	for k, v := range want {
		if got := counterValue(t, k.route, k.method, k.code); got != v {
			t.Errorf("api_requests_total{route=%q,method=%q,code=%q} = %v, want %v", k.route, k.method, k.code, got, v)
		}
	}
	for k, v := range wantHist {
		if got := histogramCount(t, k[0], k[1]); got != v {
			t.Errorf("api_request_duration_seconds_count{route=%q,method=%q} = %d, want %d", k[0], k[1], got, v)
		}
	}
	// The raw path never becomes a label.
	if got := counterValue(t, "/monitors/0b6c1f5e", http.MethodGet, "200"); got != 0 {
		t.Errorf("a raw path was used as the route label (%v requests)", got)
	}
	if got := inFlight(t); got != 0 {
		t.Errorf("in-flight gauge = %v after every request returned, want 0", got)
	}
}

func TestInstrumentUnderParentRouter(t *testing.T) {
	// Mounted in a parent chi router, Instrument must reuse the parent's
	// routing context: the sub-router routes on the mount-relative path and
	// the pattern includes the mount point.
	parent := chi.NewRouter()
	parent.Mount("/api", Instrument(testRouter(t)))
	before := counterValue(t, "/api/monitors/{id}", http.MethodGet, "200")
	rec := httptest.NewRecorder()
	parent.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/monitors/x", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200 (routing broke under a parent router)", rec.Code)
	}
	if got := counterValue(t, "/api/monitors/{id}", http.MethodGet, "200"); got != before+1 {
		t.Errorf("api_requests_total{route=/api/monitors/{id}} = %v, want %v", got, before+1)
	}
}

func TestInstrumentCountsPanicsAs500(t *testing.T) {
	h := Instrument(testRouter(t))
	before := counterValue(t, "/panic", http.MethodGet, "500")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Instrument swallowed the handler's panic")
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/panic", nil))
	}()
	if got := counterValue(t, "/panic", http.MethodGet, "500"); got != before+1 {
		t.Errorf("a panicking request counted %v times as 500, want 1", got-before)
	}
	if got := inFlight(t); got != 0 {
		t.Errorf("in-flight gauge = %v after a panic, want 0", got)
	}
}

func TestInstrumentServerHandler(t *testing.T) {
	// The API's own router: /healthz is a plain chi route.
	h := Instrument(New(Options{}).Handler())
	before := counterValue(t, "/healthz", http.MethodGet, "200")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "ok" {
		t.Fatalf("GET /healthz = %d %q", rec.Code, rec.Body.String())
	}
	if got := counterValue(t, "/healthz", http.MethodGet, "200"); got != before+1 {
		t.Errorf("api_requests_total{route=/healthz} = %v, want %v", got, before+1)
	}
	unmatched := counterValue(t, unmatchedRoute, http.MethodGet, "404")
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/definitely/not/a/route", nil))
	if got := counterValue(t, unmatchedRoute, http.MethodGet, "404"); got != unmatched+1 {
		t.Errorf("an unknown path counted %v times as unmatched 404, want 1", got-unmatched)
	}
}
