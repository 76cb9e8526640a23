-- Certificate and domain expiry notices, AI incident assist.

CREATE TABLE cert_observations (
  monitor_id  TEXT NOT NULL,
  region      TEXT NOT NULL,
  observed_at INTEGER NOT NULL,
  not_after   INTEGER NOT NULL,
  issuer      TEXT NOT NULL DEFAULT '',
  subject     TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (monitor_id, region)
);

CREATE TABLE domain_expiry (
  domain     TEXT PRIMARY KEY,
  checked_at INTEGER NOT NULL,
  expires_at INTEGER,
  registrar  TEXT NOT NULL DEFAULT '',
  error      TEXT NOT NULL DEFAULT ''
);

CREATE TABLE expiry_notices (
  monitor_id TEXT NOT NULL,
  kind       TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  stage      TEXT NOT NULL,
  sent_at    INTEGER NOT NULL,
  PRIMARY KEY (monitor_id, kind, expires_at, stage)
);

CREATE TABLE ai_content (
  incident_id TEXT NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  kind        TEXT NOT NULL,
  namespace   TEXT NOT NULL DEFAULT '',
  body        TEXT NOT NULL,
  model       TEXT NOT NULL DEFAULT '',
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (incident_id, kind)
);

CREATE TABLE ai_drafts (
  id          TEXT PRIMARY KEY,
  namespace   TEXT NOT NULL DEFAULT '',
  incident_id TEXT NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  phase       TEXT NOT NULL,
  body        TEXT NOT NULL,
  guidance    TEXT NOT NULL DEFAULT '',
  model       TEXT NOT NULL DEFAULT '',
  status      TEXT NOT NULL,
  note_id     TEXT NOT NULL DEFAULT '',
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);
CREATE INDEX ai_drafts_incident ON ai_drafts (incident_id, created_at DESC);

CREATE TABLE ai_usage (
  namespace TEXT NOT NULL,
  period    TEXT NOT NULL,
  used      INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (namespace, period)
);
