package apiserver

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/uptime-operator/uptime-operator/internal/metrics"
)

// unmatchedRoute labels requests that matched no route (404s of unknown
// paths, methods chi does not know), so scanners cannot grow the label set.
const unmatchedRoute = "unmatched"

// Instrument counts the requests h serves in
// uptime_operator_api_requests_total{route,method,code} and observes their
// latency in uptime_operator_api_request_duration_seconds{route,method}.
//
// The route label is chi's route pattern ("/monitors/{id}"), read after h
// returns. Instrument may wrap the chi router from outside (as the manager
// does, behind an http.ServeMux or the aggregated door): when the request
// carries no chi routing context yet, Instrument adds one, which the router
// then fills in instead of a pooled one of its own. When a parent chi router
// already routes the request, its context is used as it is.
func Instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rctx := chi.RouteContext(r.Context())
		if rctx == nil {
			rctx = chi.NewRouteContext()
			r = r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, rctx))
		}
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		start := time.Now()
		metrics.APIRequestsInFlight.Inc()
		completed := false
		defer func() {
			metrics.APIRequestsInFlight.Dec()
			code := ww.Status()
			switch {
			case !completed:
				// The handler panicked; net/http answers 500 (or aborts).
				code = http.StatusInternalServerError
			case code == 0:
				code = http.StatusOK
			}
			route := rctx.RoutePattern()
			if route == "" {
				route = unmatchedRoute
			}
			method := methodLabel(r.Method)
			metrics.APIRequests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
			metrics.APIRequestDuration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
		}()
		h.ServeHTTP(ww, r)
		completed = true
	})
}

// methodLabel keeps the method label to the methods the API knows.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}
