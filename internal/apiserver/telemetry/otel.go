package telemetry

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
	"k8s.io/utils/clock"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
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

// Store is what the telemetry export endpoints keep in the history store.
type Store interface {
	GetOTelSettings(ctx context.Context, namespace string) (store.OTelSettings, error)
	PutOTelSettings(ctx context.Context, s store.OTelSettings) (store.OTelSettings, error)
	DeleteOTelSettings(ctx context.Context, namespace string) error
	GetOTelDelivery(ctx context.Context, namespace string) (store.OTelDeliveryStatus, error)
}

// Handlers serve /automation/otel: a workspace's OpenTelemetry export
// settings, their delivery status and a test span.
type Handlers struct {
	st    Store
	clock clock.PassiveClock
	// o exports; nil answers 503.
	o *otelexport.Exporter
}

// New returns the handlers; o may be nil (the endpoints then answer 503).
func New(st Store, clk clock.PassiveClock, o *otelexport.Exporter) *Handlers {
	return &Handlers{st: st, clock: clk, o: o}
}

// Routes registers the telemetry export endpoints: Automation key and the
// telemetry-export plan feature; the test span has its own limit.
func (h *Handlers) Routes(rt *core.Router) {
	opts := []core.RouteOpt{core.WithAccess(core.AutomationKey), core.WithFeature(monv1.FeatureTelemetryExport)}
	test := core.WithLimit(core.NewLimiter("otel-test", 10, 15*time.Minute, core.PerWorkspace, ratelimit.JSON))
	rt.Handle(http.MethodGet, "/automation/otel", h.get(), append(opts, core.Doc(apidoc.Op{
		Tag:     "Telemetry export",
		Summary: "Export settings and delivery status",
		Resp:    restapi.OTelExport{},
		Extra:   []int{404, 503},
	}))...)
	rt.Handle(http.MethodPut, "/automation/otel", h.put(), append(opts, core.Doc(apidoc.Op{
		Tag:        "Telemetry export",
		Summary:    "Create or update the export",
		Body:       apidoc.Freeform(""),
		Resp:       restapi.OTelExport{},
		AlsoStatus: []int{201},
		Extra:      []int{503},
	}))...)
	rt.Handle(http.MethodDelete, "/automation/otel", h.delete(), append(opts, core.Doc(apidoc.Op{Tag: "Telemetry export", Summary: "Remove the export", Status: 204, Extra: []int{404, 503}}))...)
	rt.Handle(http.MethodPost, "/automation/otel/test", h.test(), append(opts, test, core.Doc(apidoc.Op{
		Tag:     "Telemetry export",
		Summary: "Send one test span",
		Resp:    restapi.TestResult{},
		Extra:   []int{503},
	}))...)
}

// available answers 503 when the server runs no exporter.
func (h *Handlers) available(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.o == nil {
			core.WriteError(w, http.StatusServiceUnavailable, CodeOTelUnavailable, "the telemetry export is not running on this server")
			return
		}
		next(w, r)
	}
}

func (h *Handlers) write(w http.ResponseWriter, r *http.Request, o store.OTelSettings, code int) {
	d, err := h.st.GetOTelDelivery(r.Context(), o.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	headers := make(map[string]string, len(o.Headers))
	for k := range o.Headers {
		headers[k] = redacted
	}
	httpjson.Write(w, code, restapi.OTelExport{Endpoint: o.Endpoint, Protocol: o.Protocol, Headers: headers, ServiceName: o.ServiceName,
		Enabled: o.Enabled, ExportSpans: o.ExportSpans, ExportMetrics: o.ExportMetrics,
		CreatedAt: core.ISOTime(o.CreatedAt), UpdatedAt: core.ISOTime(o.UpdatedAt), Delivery: restapi.OTelDeliveryStatus(d)})
}

func (h *Handlers) get() http.HandlerFunc {
	return h.available(func(w http.ResponseWriter, r *http.Request) {
		cur, err := h.st.GetOTelSettings(r.Context(), core.CallerFrom(r.Context()).Namespace)
		if errors.Is(err, store.ErrNotFound) {
			core.WriteNotFound(w, "Telemetry export")
			return
		}
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		h.write(w, r, cur, http.StatusOK)
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
func (b *otelBody) apply(cur *store.OTelSettings, prev map[string]string) []core.FieldError {
	var errs []core.FieldError
	if b.Endpoint != nil {
		cur.Endpoint = strings.TrimSpace(*b.Endpoint)
	}
	if b.Protocol != nil {
		cur.Protocol = *b.Protocol
	}
	switch cur.Protocol {
	case store.OTelHTTPProtobuf, store.OTelHTTPJSON, store.OTelGRPC:
	default:
		errs = append(errs, core.FieldErr("protocol", "must be http/protobuf, http/json or grpc"))
	}
	if u, err := url.Parse(cur.Endpoint); cur.Endpoint == "" {
		errs = append(errs, core.FieldErr("endpoint", "is required"))
	} else if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || len(cur.Endpoint) > maxOTelEndpoint {
		errs = append(errs, core.FieldErr("endpoint", "must be an http:// or https:// URL without credentials, up to %d characters", maxOTelEndpoint))
	} else if cur.Protocol == store.OTelGRPC && strings.Trim(u.Path, "/") != "" {
		errs = append(errs, core.FieldErr("endpoint", "a grpc endpoint is scheme, host and port only"))
	}
	if b.Headers != nil {
		if len(*b.Headers) > maxOTelHeaders {
			errs = append(errs, core.FieldErr("headers", "at most %d headers", maxOTelHeaders))
		}
		next := make(map[string]string, len(*b.Headers))
		for k, v := range *b.Headers {
			if v == redacted {
				old, ok := prev[k]
				if !ok {
					errs = append(errs, core.FieldErr("headers."+k, "send the value; %q keeps only a stored one", redacted))
				}
				v = old
			}
			if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) || len(v) > maxOTelHeaderValue {
				errs = append(errs, core.FieldErr("headers."+k, "must be a valid HTTP header with a value up to %d characters", maxOTelHeaderValue))
			}
			next[k] = v
		}
		cur.Headers = next
	}
	if b.ServiceName != nil {
		cur.ServiceName = strings.TrimSpace(*b.ServiceName)
		if len([]rune(cur.ServiceName)) > maxOTelServiceName {
			errs = append(errs, core.FieldErr("service_name", "at most %d characters", maxOTelServiceName))
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

func (h *Handlers) put() http.HandlerFunc {
	return h.available(func(w http.ResponseWriter, r *http.Request) {
		ns := core.CallerFrom(r.Context()).Namespace
		var b otelBody
		if err := core.DecodeJSON(r, &b, true); err != nil {
			core.WriteErr(w, r, err)
			return
		}
		cur, err := h.st.GetOTelSettings(r.Context(), ns)
		created := errors.Is(err, store.ErrNotFound)
		switch {
		case created:
			cur = store.OTelSettings{Namespace: ns, Protocol: store.OTelHTTPProtobuf, ServiceName: otelexport.DefaultServiceName,
				Enabled: true, ExportSpans: true, ExportMetrics: true, Headers: map[string]string{}, CreatedAt: h.clock.Now()}
		case err != nil:
			core.WriteErr(w, r, err)
			return
		}
		if errs := b.apply(&cur, cur.Headers); len(errs) > 0 {
			core.WriteValidation(w, errs...)
			return
		}
		cur.UpdatedAt = h.clock.Now()
		saved, err := h.st.PutOTelSettings(r.Context(), cur)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		h.o.Invalidate(ns)
		code := http.StatusOK
		if created {
			code = http.StatusCreated
		}
		h.write(w, r, saved, code)
	})
}

func (h *Handlers) delete() http.HandlerFunc {
	return h.available(func(w http.ResponseWriter, r *http.Request) {
		ns := core.CallerFrom(r.Context()).Namespace
		err := h.st.DeleteOTelSettings(r.Context(), ns)
		if errors.Is(err, store.ErrNotFound) {
			core.WriteNotFound(w, "Telemetry export")
			return
		}
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		h.o.Invalidate(ns)
		w.WriteHeader(http.StatusNoContent)
	})
}

// test sends one test span with the saved settings (enabled or not) and
// answers whether the endpoint accepted it.
func (h *Handlers) test() http.HandlerFunc {
	return h.available(func(w http.ResponseWriter, r *http.Request) {
		cur, err := h.st.GetOTelSettings(r.Context(), core.CallerFrom(r.Context()).Namespace)
		if errors.Is(err, store.ErrNotFound) {
			core.WriteNotFound(w, "Telemetry export")
			return
		}
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		if err := h.o.SendTest(r.Context(), cur, true); err != nil {
			msg := err.Error()
			httpjson.Write(w, http.StatusOK, restapi.TestResult{OK: false, Error: &msg})
			return
		}
		httpjson.Write(w, http.StatusOK, restapi.TestResult{OK: true})
	})
}
