package store

import (
	"context"
	"time"
)

// OTLP protocols of the telemetry export.
const (
	OTelHTTPProtobuf = "http/protobuf"
	OTelHTTPJSON     = "http/json"
	OTelGRPC         = "grpc"
)

// OTelSettings is a workspace's telemetry export: where check results are
// sent as OpenTelemetry spans and metrics.
type OTelSettings struct {
	Namespace string `json:"namespace"`
	// Endpoint is the OTLP endpoint: the base URL of an OTLP/HTTP receiver
	// (/v1/traces and /v1/metrics are appended) or the address of an OTLP/gRPC
	// one (http:// for plaintext, https:// for TLS).
	Endpoint string `json:"endpoint"`
	// Protocol is OTelHTTPProtobuf, OTelHTTPJSON or OTelGRPC.
	Protocol string `json:"protocol"`
	// Headers are sent with every export; their values are secrets.
	Headers     map[string]string `json:"headers"`
	ServiceName string            `json:"service_name"`
	Enabled     bool              `json:"enabled"`
	// ExportSpans sends one span per check; ExportMetrics sends the
	// response-time histogram and the up gauge.
	ExportSpans   bool      `json:"export_spans"`
	ExportMetrics bool      `json:"export_metrics"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// OTelExportResult is the outcome of one export to a workspace's endpoint.
type OTelExportResult struct {
	Namespace string
	At        time.Time
	// Spans and DataPoints were sent (counted on success only).
	Spans, DataPoints int64
	// Dropped checks never reached the endpoint (a full queue).
	Dropped int64
	// Error is why the export failed, empty on success.
	Error string
}

// OTelDeliveryStatus is the delivery status of a workspace's export.
type OTelDeliveryStatus struct {
	LastSuccessAt   *time.Time `json:"last_success_at"`
	LastErrorAt     *time.Time `json:"last_error_at"`
	LastError       string     `json:"last_error"`
	SpansExported   int64      `json:"spans_exported"`
	PointsExported  int64      `json:"data_points_exported"`
	FailedExports   int64      `json:"failed_exports"`
	DroppedChecks   int64      `json:"dropped_checks"`
	SuccessfulCalls int64      `json:"successful_exports"`
}

// OTelStore keeps telemetry export settings and delivery status.
type OTelStore interface {
	// PutOTelSettings creates or replaces s.Namespace's settings (CreatedAt
	// kept from the stored row, UpdatedAt set to now when zero).
	PutOTelSettings(ctx context.Context, s OTelSettings) (OTelSettings, error)
	// GetOTelSettings returns a workspace's settings or ErrNotFound.
	GetOTelSettings(ctx context.Context, namespace string) (OTelSettings, error)
	// DeleteOTelSettings removes a workspace's settings and delivery status;
	// ErrNotFound when there were none.
	DeleteOTelSettings(ctx context.Context, namespace string) error
	// RecordOTelExport adds the outcome of one export to the workspace's
	// delivery status.
	RecordOTelExport(ctx context.Context, r OTelExportResult) error
	// GetOTelDelivery returns a workspace's delivery status (zero when
	// nothing was exported yet).
	GetOTelDelivery(ctx context.Context, namespace string) (OTelDeliveryStatus, error)
}
