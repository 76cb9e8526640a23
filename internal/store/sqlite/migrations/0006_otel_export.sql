-- Telemetry export: per-workspace OTLP settings and delivery status.

CREATE TABLE otel_settings (
  namespace      TEXT PRIMARY KEY,
  endpoint       TEXT NOT NULL,
  protocol       TEXT NOT NULL,
  headers        TEXT NOT NULL DEFAULT '{}',
  service_name   TEXT NOT NULL DEFAULT '',
  enabled        BOOLEAN NOT NULL DEFAULT TRUE,
  export_spans   BOOLEAN NOT NULL DEFAULT TRUE,
  export_metrics BOOLEAN NOT NULL DEFAULT TRUE,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
);

CREATE TABLE otel_delivery (
  namespace        TEXT PRIMARY KEY,
  last_success_at  INTEGER,
  last_error_at    INTEGER,
  last_error       TEXT NOT NULL DEFAULT '',
  spans_exported   INTEGER NOT NULL DEFAULT 0,
  points_exported  INTEGER NOT NULL DEFAULT 0,
  exports_ok       INTEGER NOT NULL DEFAULT 0,
  exports_failed   INTEGER NOT NULL DEFAULT 0,
  dropped_checks   INTEGER NOT NULL DEFAULT 0
);
