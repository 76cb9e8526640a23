-- Telemetry export: per-workspace OTLP settings and delivery status.

CREATE TABLE otel_settings (
  namespace      TEXT PRIMARY KEY,
  endpoint       TEXT NOT NULL,
  protocol       TEXT NOT NULL,
  headers        JSONB NOT NULL DEFAULT '{}'::jsonb,
  service_name   TEXT NOT NULL DEFAULT '',
  enabled        BOOLEAN NOT NULL DEFAULT TRUE,
  export_spans   BOOLEAN NOT NULL DEFAULT TRUE,
  export_metrics BOOLEAN NOT NULL DEFAULT TRUE,
  created_at     TIMESTAMPTZ NOT NULL,
  updated_at     TIMESTAMPTZ NOT NULL
);

CREATE TABLE otel_delivery (
  namespace        TEXT PRIMARY KEY,
  last_success_at  TIMESTAMPTZ,
  last_error_at    TIMESTAMPTZ,
  last_error       TEXT NOT NULL DEFAULT '',
  spans_exported   BIGINT NOT NULL DEFAULT 0,
  points_exported  BIGINT NOT NULL DEFAULT 0,
  exports_ok       BIGINT NOT NULL DEFAULT 0,
  exports_failed   BIGINT NOT NULL DEFAULT 0,
  dropped_checks   BIGINT NOT NULL DEFAULT 0
);
