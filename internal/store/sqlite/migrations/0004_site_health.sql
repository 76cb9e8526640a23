-- Website health: sites, crawl runs and the issues they found.

CREATE TABLE health_sites (
  id                     TEXT PRIMARY KEY,
  namespace              TEXT NOT NULL,
  name                   TEXT NOT NULL,
  url                    TEXT NOT NULL,
  max_pages              INTEGER NOT NULL,
  max_depth              INTEGER NOT NULL,
  check_external_links   BOOLEAN NOT NULL DEFAULT FALSE,
  perf_audit_enabled     BOOLEAN NOT NULL DEFAULT FALSE,
  perf_audit_urls        TEXT NOT NULL DEFAULT '[]',
  perf_audit_form_factor TEXT NOT NULL DEFAULT 'mobile',
  schedule               TEXT NOT NULL,
  notify_on_issues       BOOLEAN NOT NULL DEFAULT FALSE,
  score_drop_thresh      INTEGER NOT NULL,
  is_active              BOOLEAN NOT NULL DEFAULT TRUE,
  created_at             INTEGER NOT NULL,
  updated_at             INTEGER NOT NULL
);
CREATE INDEX health_sites_namespace ON health_sites (namespace, created_at);

CREATE TABLE health_runs (
  id          TEXT PRIMARY KEY,
  site_id     TEXT NOT NULL REFERENCES health_sites (id) ON DELETE CASCADE,
  namespace   TEXT NOT NULL,
  run_trigger TEXT NOT NULL,
  status      TEXT NOT NULL,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER,
  score       INTEGER,
  summary     TEXT,
  error       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX health_runs_site ON health_runs (site_id, started_at DESC);

CREATE TABLE health_issues (
  run_id     TEXT NOT NULL REFERENCES health_runs (id) ON DELETE CASCADE,
  seq        INTEGER NOT NULL,
  kind       TEXT NOT NULL,
  url        TEXT NOT NULL,
  source_url TEXT NOT NULL DEFAULT '',
  detail     TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, seq)
);
