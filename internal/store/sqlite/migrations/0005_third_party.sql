-- Third-party status: subscriptions, the poller's per-provider state and the
-- services shown on status pages.

CREATE TABLE third_party_subscriptions (
  id                 TEXT PRIMARY KEY,
  namespace          TEXT NOT NULL,
  provider_id        TEXT NOT NULL,
  component_ids      TEXT NOT NULL DEFAULT '[]',
  keywords           TEXT NOT NULL DEFAULT '[]',
  notify             BOOLEAN NOT NULL DEFAULT TRUE,
  notify_maintenance BOOLEAN NOT NULL DEFAULT FALSE,
  min_severity       TEXT NOT NULL DEFAULT 'minor',
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL,
  UNIQUE (namespace, provider_id)
);
CREATE INDEX third_party_subscriptions_provider ON third_party_subscriptions (provider_id);

CREATE TABLE third_party_state (
  provider_id   TEXT PRIMARY KEY,
  etag          TEXT NOT NULL DEFAULT '',
  last_modified TEXT NOT NULL DEFAULT '',
  snapshot      TEXT,
  polled_at     INTEGER NOT NULL,
  changed_at    INTEGER,
  error         TEXT NOT NULL DEFAULT ''
);

CREATE TABLE third_party_pages (
  page_uid   TEXT PRIMARY KEY,
  namespace  TEXT NOT NULL,
  services   TEXT NOT NULL DEFAULT '[]',
  updated_at INTEGER NOT NULL
);
