-- Timestamps are timestamptz (microsecond precision); rollup buckets are
-- BIGINT Unix seconds. Lists and documents are jsonb.

CREATE TABLE checks (
  id               TEXT PRIMARY KEY,
  monitor_id       TEXT NOT NULL,
  namespace        TEXT NOT NULL DEFAULT '',
  region           TEXT NOT NULL DEFAULT '',
  checked_at       TIMESTAMPTZ NOT NULL,
  status           TEXT NOT NULL,
  status_code      BIGINT,
  response_time_ms BIGINT NOT NULL DEFAULT 0,
  error_type       TEXT,
  error_message    TEXT,
  details          JSONB
);
CREATE INDEX checks_monitor_time ON checks (monitor_id, checked_at DESC);
CREATE INDEX checks_time ON checks (checked_at);

CREATE TABLE rollups (
  monitor_id TEXT NOT NULL,
  region     TEXT NOT NULL,
  step       BIGINT NOT NULL,
  bucket     BIGINT NOT NULL,
  up         BIGINT NOT NULL DEFAULT 0,
  down       BIGINT NOT NULL DEFAULT 0,
  degraded   BIGINT NOT NULL DEFAULT 0,
  blocked    BIGINT NOT NULL DEFAULT 0,
  unknown    BIGINT NOT NULL DEFAULT 0,
  rt_sum     BIGINT NOT NULL DEFAULT 0,
  rt_min     BIGINT,
  rt_max     BIGINT,
  PRIMARY KEY (monitor_id, step, bucket, region)
);

CREATE TABLE incidents (
  id                 TEXT PRIMARY KEY,
  namespace          TEXT NOT NULL DEFAULT '',
  monitor_id         TEXT NOT NULL,
  monitor_name       TEXT NOT NULL DEFAULT '',
  monitor_url        TEXT NOT NULL DEFAULT '',
  monitor_type       TEXT NOT NULL DEFAULT '',
  started_at         TIMESTAMPTZ NOT NULL,
  resolved_at        TIMESTAMPTZ,
  alert_suppressed   BOOLEAN NOT NULL DEFAULT FALSE,
  suppression_reason TEXT NOT NULL DEFAULT '',
  is_flapping        BOOLEAN NOT NULL DEFAULT FALSE,
  confirmations      BIGINT NOT NULL DEFAULT 0,
  confirming_regions JSONB NOT NULL DEFAULT '[]'::jsonb,
  regions_total      BIGINT NOT NULL DEFAULT 0,
  acknowledged_at    TIMESTAMPTZ,
  acknowledged_by    TEXT NOT NULL DEFAULT '',
  snoozed_until      TIMESTAMPTZ,
  resolved_manually  BOOLEAN NOT NULL DEFAULT FALSE,
  cause              TEXT NOT NULL DEFAULT '',
  issue_url          TEXT NOT NULL DEFAULT '',
  postmortem         TEXT NOT NULL DEFAULT '',
  runbook            JSONB
);
-- One open incident per monitor: the guarantee that racing writers cannot
-- open duplicates.
CREATE UNIQUE INDEX incidents_one_open ON incidents (monitor_id) WHERE resolved_at IS NULL;
CREATE INDEX incidents_ns_started ON incidents (namespace, started_at DESC);
CREATE INDEX incidents_monitor_started ON incidents (monitor_id, started_at DESC);

CREATE TABLE incident_events (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  incident_id TEXT NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  kind        TEXT NOT NULL,
  at          TIMESTAMPTZ NOT NULL,
  data        JSONB
);
CREATE INDEX incident_events_incident ON incident_events (incident_id, at, id);

CREATE TABLE incident_notes (
  id          TEXT PRIMARY KEY,
  incident_id TEXT NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  body        TEXT NOT NULL,
  public      BOOLEAN NOT NULL DEFAULT FALSE,
  author      TEXT NOT NULL DEFAULT '',
  created_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX incident_notes_incident ON incident_notes (incident_id, created_at);

CREATE TABLE outbox_events (
  id         TEXT PRIMARY KEY,
  namespace  TEXT NOT NULL DEFAULT '',
  kind       TEXT NOT NULL,
  payload    JSONB NOT NULL,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX outbox_events_created ON outbox_events (created_at);

CREATE TABLE deliveries (
  id              TEXT PRIMARY KEY,
  event_id        TEXT NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
  channel_id      TEXT NOT NULL,
  status          TEXT NOT NULL,
  attempts        BIGINT NOT NULL DEFAULT 0,
  next_attempt_at TIMESTAMPTZ NOT NULL,
  leased_by       TEXT NOT NULL DEFAULT '',
  lease_until     TIMESTAMPTZ,
  last_error      TEXT NOT NULL DEFAULT '',
  created_at      TIMESTAMPTZ NOT NULL,
  updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (status, next_attempt_at);
CREATE INDEX deliveries_event ON deliveries (event_id);
CREATE INDEX deliveries_channel ON deliveries (channel_id, created_at DESC);

CREATE TABLE delivery_attempts (
  delivery_id TEXT NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  attempt     BIGINT NOT NULL,
  at          TIMESTAMPTZ NOT NULL,
  status_code BIGINT NOT NULL DEFAULT 0,
  excerpt     TEXT NOT NULL DEFAULT '',
  error       TEXT NOT NULL DEFAULT '',
  latency_ms  BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (delivery_id, attempt)
);

CREATE TABLE deploy_events (
  id           TEXT PRIMARY KEY,
  namespace    TEXT NOT NULL DEFAULT '',
  service_name TEXT NOT NULL,
  environment  TEXT NOT NULL DEFAULT '',
  version      TEXT NOT NULL DEFAULT '',
  source       TEXT NOT NULL DEFAULT '',
  deployed_at  TIMESTAMPTZ NOT NULL,
  metadata     JSONB,
  created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX deploy_events_ns ON deploy_events (namespace, deployed_at DESC);

CREATE TABLE dns_records (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  monitor_id  TEXT NOT NULL,
  observed_at TIMESTAMPTZ NOT NULL,
  record_type TEXT NOT NULL,
  answers     JSONB NOT NULL,
  changed     BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX dns_records_monitor_type ON dns_records (monitor_id, record_type, observed_at DESC);
CREATE INDEX dns_records_monitor ON dns_records (monitor_id, observed_at DESC);

CREATE TABLE pause_windows (
  monitor_id TEXT NOT NULL,
  paused_at  TIMESTAMPTZ NOT NULL,
  resumed_at TIMESTAMPTZ,
  PRIMARY KEY (monitor_id, paused_at)
);
CREATE UNIQUE INDEX pause_windows_open ON pause_windows (monitor_id) WHERE resumed_at IS NULL;

CREATE TABLE heartbeats (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  monitor_id  TEXT NOT NULL,
  at          TIMESTAMPTZ NOT NULL,
  ok          BOOLEAN NOT NULL,
  duration_ms BIGINT,
  status_code BIGINT
);
CREATE INDEX heartbeats_monitor ON heartbeats (monitor_id, at DESC);

CREATE TABLE api_key_usage (
  key_id       TEXT PRIMARY KEY,
  last_used_at TIMESTAMPTZ NOT NULL
);
