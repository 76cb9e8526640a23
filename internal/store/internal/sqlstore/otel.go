package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

const otelCols = "namespace, endpoint, protocol, headers, service_name, enabled, export_spans, export_metrics, created_at, updated_at"

func (s *otelStore) scanOTel(r interface{ Scan(...any) error }) (store.OTelSettings, error) {
	var o store.OTelSettings
	var headers []byte
	err := r.Scan(&o.Namespace, &o.Endpoint, &o.Protocol, &headers, &o.ServiceName, &o.Enabled, &o.ExportSpans,
		&o.ExportMetrics, s.D.ScanTime(&o.CreatedAt), s.D.ScanTime(&o.UpdatedAt))
	if err != nil {
		return o, err
	}
	o.Headers = map[string]string{}
	if len(headers) > 0 {
		if err := json.Unmarshal(headers, &o.Headers); err != nil {
			return o, fmt.Errorf("decode telemetry export headers: %w", err)
		}
	}
	return o, nil
}

// PutOTelSettings implements store.Store.
func (s *otelStore) PutOTelSettings(ctx context.Context, o store.OTelSettings) (store.OTelSettings, error) {
	if o.Namespace == "" || o.Endpoint == "" || o.Protocol == "" {
		return o, fmt.Errorf("%w: telemetry export needs a namespace, an endpoint and a protocol", store.ErrInvalid)
	}
	if o.UpdatedAt.IsZero() {
		o.UpdatedAt = s.now()
	}
	o.UpdatedAt = store.UTC(o.UpdatedAt)
	if o.CreatedAt.IsZero() {
		o.CreatedAt = o.UpdatedAt
	}
	if o.Headers == nil {
		o.Headers = map[string]string{}
	}
	headers, err := json.Marshal(o.Headers)
	if err != nil {
		return o, fmt.Errorf("encode telemetry export headers: %w", err)
	}
	var out store.OTelSettings
	err = s.B.Write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, "INSERT INTO otel_settings ("+otelCols+") VALUES "+placeholders(10)+`
 ON CONFLICT (namespace) DO UPDATE SET endpoint = excluded.endpoint, protocol = excluded.protocol, headers = excluded.headers,
 service_name = excluded.service_name, enabled = excluded.enabled, export_spans = excluded.export_spans,
 export_metrics = excluded.export_metrics, updated_at = excluded.updated_at`,
			o.Namespace, o.Endpoint, o.Protocol, string(headers), o.ServiceName, o.Enabled, o.ExportSpans, o.ExportMetrics,
			s.D.Time(store.UTC(o.CreatedAt)), s.D.Time(o.UpdatedAt))
		if err != nil {
			return err
		}
		out, err = s.scanOTel(q.QueryRow(ctx, "SELECT "+otelCols+" FROM otel_settings WHERE namespace = ?", o.Namespace))
		return err
	})
	if err != nil {
		return o, fmt.Errorf("put telemetry export settings: %w", err)
	}
	return out, nil
}

// GetOTelSettings implements store.Store.
func (s *otelStore) GetOTelSettings(ctx context.Context, namespace string) (store.OTelSettings, error) {
	o, err := s.scanOTel(s.B.Reader().QueryRow(ctx, "SELECT "+otelCols+" FROM otel_settings WHERE namespace = ?", namespace))
	if err != nil && !isNotFound(err) {
		return o, fmt.Errorf("get telemetry export settings: %w", err)
	}
	return o, err
}

// DeleteOTelSettings implements store.Store.
func (s *otelStore) DeleteOTelSettings(ctx context.Context, namespace string) error {
	return s.B.Write(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, "DELETE FROM otel_settings WHERE namespace = ?", namespace)
		if err != nil {
			return fmt.Errorf("delete telemetry export settings: %w", err)
		}
		if n == 0 {
			return store.ErrNotFound
		}
		if _, err := q.Exec(ctx, "DELETE FROM otel_delivery WHERE namespace = ?", namespace); err != nil {
			return fmt.Errorf("delete telemetry export status: %w", err)
		}
		return nil
	})
}

// RecordOTelExport implements store.Store.
func (s *otelStore) RecordOTelExport(ctx context.Context, r store.OTelExportResult) error {
	if r.Namespace == "" {
		return fmt.Errorf("%w: telemetry export result needs a namespace", store.ErrInvalid)
	}
	if r.At.IsZero() {
		r.At = s.now()
	}
	at := s.D.Time(store.UTC(r.At))
	var okAt, errAt any
	var spans, points, ok, failed int64
	if r.Error == "" {
		okAt, spans, points, ok = at, r.Spans, r.DataPoints, 1
	} else {
		errAt, failed = at, 1
	}
	err := s.B.Write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO otel_delivery (namespace, last_success_at, last_error_at, last_error, spans_exported,
 points_exported, exports_ok, exports_failed, dropped_checks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
 ON CONFLICT (namespace) DO UPDATE SET
 last_success_at = COALESCE(excluded.last_success_at, otel_delivery.last_success_at),
 last_error_at = COALESCE(excluded.last_error_at, otel_delivery.last_error_at),
 last_error = CASE WHEN excluded.last_error_at IS NULL THEN otel_delivery.last_error ELSE excluded.last_error END,
 spans_exported = otel_delivery.spans_exported + excluded.spans_exported,
 points_exported = otel_delivery.points_exported + excluded.points_exported,
 exports_ok = otel_delivery.exports_ok + excluded.exports_ok,
 exports_failed = otel_delivery.exports_failed + excluded.exports_failed,
 dropped_checks = otel_delivery.dropped_checks + excluded.dropped_checks`,
			r.Namespace, okAt, errAt, r.Error, spans, points, ok, failed, r.Dropped)
		return err
	})
	if err != nil {
		return fmt.Errorf("record telemetry export: %w", err)
	}
	return nil
}

// GetOTelDelivery implements store.Store.
func (s *otelStore) GetOTelDelivery(ctx context.Context, namespace string) (store.OTelDeliveryStatus, error) {
	var d store.OTelDeliveryStatus
	err := s.B.Reader().QueryRow(ctx, `SELECT last_success_at, last_error_at, last_error, spans_exported, points_exported,
 exports_ok, exports_failed, dropped_checks FROM otel_delivery WHERE namespace = ?`, namespace).
		Scan(s.D.ScanNullTime(&d.LastSuccessAt), s.D.ScanNullTime(&d.LastErrorAt), &d.LastError, &d.SpansExported,
			&d.PointsExported, &d.SuccessfulCalls, &d.FailedExports, &d.DroppedChecks)
	switch {
	case isNotFound(err):
		return store.OTelDeliveryStatus{}, nil
	case err != nil:
		return d, fmt.Errorf("get telemetry export status: %w", err)
	}
	return d, nil
}
