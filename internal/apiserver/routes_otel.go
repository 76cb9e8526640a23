package apiserver

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/otelexport"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// CodeOTelUnavailable answers telemetry export endpoints on a server built
// without an exporter (not a code of the specification).
const CodeOTelUnavailable = "TELEMETRY_EXPORT_UNAVAILABLE"

// redacted replaces header values in responses; sent back unchanged in a
// PUT, it keeps the stored value.
const redacted = "********"

// Bounds of the telemetry export settings.
const (
	maxOTelHeaders     = 20
	maxOTelHeaderValue = 4096
	maxOTelEndpoint    = 2000
	maxOTelServiceName = 255
)

// registerOTelRoutes registers the telemetry export endpoints: Automation
// key and the telemetry-export plan feature; the test span 10 per 15
// minutes per workspace. o may be nil: the endpoints then answer 503.
func (s *Server) registerOTelRoutes(o *otelexport.Exporter) {
	opts := []routeOpt{withAccess(automationKey), withFeature(monv1.FeatureTelemetryExport)}
	test := withLimit(newLimiter("otel-test", 10, 15*time.Minute, perWorkspace, ratelimit.JSON))
	s.handle(http.MethodGet, "/automation/otel", s.getOTel(o), opts...)
	s.handle(http.MethodPut, "/automation/otel", s.putOTel(o), opts...)
	s.handle(http.MethodDelete, "/automation/otel", s.deleteOTel(o), opts...)
	s.handle(http.MethodPost, "/automation/otel/test", s.testOTel(o), append(opts, test)...)
}

func withOTel(o *otelexport.Exporter, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if o == nil {
			writeError(w, http.StatusServiceUnavailable, CodeOTelUnavailable, "the telemetry export is not running on this server")
			return
		}
		h(w, r)
	}
}

func (s *Server) writeOTel(w http.ResponseWriter, r *http.Request, o store.OTelSettings, code int) {
	d, err := s.opts.Store.GetOTelDelivery(r.Context(), o.Namespace)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	headers := make(map[string]string, len(o.Headers))
	for k := range o.Headers {
		headers[k] = redacted
	}
	httpjson.Write(w, code, restapi.OTelExport{Endpoint: o.Endpoint, Protocol: o.Protocol, Headers: headers, ServiceName: o.ServiceName,
		Enabled: o.Enabled, ExportSpans: o.ExportSpans, ExportMetrics: o.ExportMetrics,
		CreatedAt: isoTime(o.CreatedAt), UpdatedAt: isoTime(o.UpdatedAt), Delivery: d})
}

func (s *Server) getOTel(o *otelexport.Exporter) http.HandlerFunc {
	return withOTel(o, func(w http.ResponseWriter, r *http.Request) {
		cur, err := s.opts.Store.GetOTelSettings(r.Context(), CallerFrom(r.Context()).Namespace)
		if errors.Is(err, store.ErrNotFound) {
			writeNotFound(w, "Telemetry export")
			return
		}
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		s.writeOTel(w, r, cur, http.StatusOK)
	})
}

// otelBody is the PUT body; nil fields keep their value (or default on
// create).
type otelBody struct {
	Endpoint      *string            `json:"endpoint"`
	Protocol      *string            `json:"protocol"`
	Headers       *map[string]string `json:"headers"`
	ServiceName   *string            `json:"service_name"`
	Enabled       *bool              `json:"enabled"`
	ExportSpans   *bool              `json:"export_spans"`
	ExportMetrics *bool              `json:"export_metrics"`
}

// apply validates b and copies it onto cur; prev holds the stored header
// values that a redacted value keeps.
func (b *otelBody) apply(cur *store.OTelSettings, prev map[string]string) []FieldError {
	var errs []FieldError
	if b.Endpoint != nil {
		cur.Endpoint = strings.TrimSpace(*b.Endpoint)
	}
	if b.Protocol != nil {
		cur.Protocol = *b.Protocol
	}
	switch cur.Protocol {
	case store.OTelHTTPProtobuf, store.OTelHTTPJSON, store.OTelGRPC:
	default:
		errs = append(errs, fieldErr("protocol", "must be http/protobuf, http/json or grpc"))
	}
	if u, err := url.Parse(cur.Endpoint); cur.Endpoint == "" {
		errs = append(errs, fieldErr("endpoint", "is required"))
	} else if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || len(cur.Endpoint) > maxOTelEndpoint {
		errs = append(errs, fieldErr("endpoint", "must be an http:// or https:// URL without credentials, up to %d characters", maxOTelEndpoint))
	} else if cur.Protocol == store.OTelGRPC && strings.Trim(u.Path, "/") != "" {
		errs = append(errs, fieldErr("endpoint", "a grpc endpoint is scheme, host and port only"))
	}
	if b.Headers != nil {
		if len(*b.Headers) > maxOTelHeaders {
			errs = append(errs, fieldErr("headers", "at most %d headers", maxOTelHeaders))
		}
		next := make(map[string]string, len(*b.Headers))
		for k, v := range *b.Headers {
			if v == redacted {
				old, ok := prev[k]
				if !ok {
					errs = append(errs, fieldErr("headers."+k, "send the value; %q keeps only a stored one", redacted))
				}
				v = old
			}
			if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) || len(v) > maxOTelHeaderValue {
				errs = append(errs, fieldErr("headers."+k, "must be a valid HTTP header with a value up to %d characters", maxOTelHeaderValue))
			}
			next[k] = v
		}
		cur.Headers = next
	}
	if b.ServiceName != nil {
		cur.ServiceName = strings.TrimSpace(*b.ServiceName)
		if len([]rune(cur.ServiceName)) > maxOTelServiceName {
			errs = append(errs, fieldErr("service_name", "at most %d characters", maxOTelServiceName))
		}
	}
	if b.Enabled != nil {
		cur.Enabled = *b.Enabled
	}
	if b.ExportSpans != nil {
		cur.ExportSpans = *b.ExportSpans
	}
	if b.ExportMetrics != nil {
		cur.ExportMetrics = *b.ExportMetrics
	}
	return errs
}

func (s *Server) putOTel(o *otelexport.Exporter) http.HandlerFunc {
	return withOTel(o, func(w http.ResponseWriter, r *http.Request) {
		ns := CallerFrom(r.Context()).Namespace
		var b otelBody
		if err := decodeJSON(r, &b, true); err != nil {
			s.writeErr(w, r, err)
			return
		}
		cur, err := s.opts.Store.GetOTelSettings(r.Context(), ns)
		created := errors.Is(err, store.ErrNotFound)
		switch {
		case created:
			cur = store.OTelSettings{Namespace: ns, Protocol: store.OTelHTTPProtobuf, ServiceName: otelexport.DefaultServiceName,
				Enabled: true, ExportSpans: true, ExportMetrics: true, Headers: map[string]string{}, CreatedAt: s.clock.Now()}
		case err != nil:
			s.writeErr(w, r, err)
			return
		}
		if errs := b.apply(&cur, cur.Headers); len(errs) > 0 {
			writeValidation(w, errs...)
			return
		}
		cur.UpdatedAt = s.clock.Now()
		saved, err := s.opts.Store.PutOTelSettings(r.Context(), cur)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		o.Invalidate(ns)
		code := http.StatusOK
		if created {
			code = http.StatusCreated
		}
		s.writeOTel(w, r, saved, code)
	})
}

func (s *Server) deleteOTel(o *otelexport.Exporter) http.HandlerFunc {
	return withOTel(o, func(w http.ResponseWriter, r *http.Request) {
		ns := CallerFrom(r.Context()).Namespace
		err := s.opts.Store.DeleteOTelSettings(r.Context(), ns)
		if errors.Is(err, store.ErrNotFound) {
			writeNotFound(w, "Telemetry export")
			return
		}
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		o.Invalidate(ns)
		w.WriteHeader(http.StatusNoContent)
	})
}

// testOTel sends one test span with the saved settings (enabled or not) and
// answers whether the endpoint accepted it.
func (s *Server) testOTel(o *otelexport.Exporter) http.HandlerFunc {
	return withOTel(o, func(w http.ResponseWriter, r *http.Request) {
		cur, err := s.opts.Store.GetOTelSettings(r.Context(), CallerFrom(r.Context()).Namespace)
		if errors.Is(err, store.ErrNotFound) {
			writeNotFound(w, "Telemetry export")
			return
		}
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		if err := o.SendTest(r.Context(), cur, true); err != nil {
			msg := err.Error()
			httpjson.Write(w, http.StatusOK, restapi.TestResult{OK: false, Error: &msg})
			return
		}
		httpjson.Write(w, http.StatusOK, restapi.TestResult{OK: true})
	})
}
