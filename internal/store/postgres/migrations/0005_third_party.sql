-- Third-party status: subscriptions, the poller's per-provider state and the
-- services shown on status pages.

CREATE TABLE third_party_subscriptions (
  id                 TEXT PRIMARY KEY,
  namespace          TEXT NOT NULL,
  provider_id        TEXT NOT NULL,
  component_ids      JSONB NOT NULL DEFAULT '[]'::jsonb,
  keywords           JSONB NOT NULL DEFAULT '[]'::jsonb,
  notify             BOOLEAN NOT NULL DEFAULT TRUE,
  notify_maintenance BOOLEAN NOT NULL DEFAULT FALSE,
  min_severity       TEXT NOT NULL DEFAULT 'minor',
  created_at         TIMESTAMPTZ NOT NULL,
  updated_at         TIMESTAMPTZ NOT NULL,
  UNIQUE (namespace, provider_id)
);
CREATE INDEX third_party_subscriptions_provider ON third_party_subscriptions (provider_id);

CREATE TABLE third_party_state (
  provider_id   TEXT PRIMARY KEY,
  etag          TEXT NOT NULL DEFAULT '',
  last_modified TEXT NOT NULL DEFAULT '',
  snapshot      JSONB,
  polled_at     TIMESTAMPTZ NOT NULL,
  changed_at    TIMESTAMPTZ,
  error         TEXT NOT NULL DEFAULT ''
);

CREATE TABLE third_party_pages (
  page_uid   TEXT PRIMARY KEY,
  namespace  TEXT NOT NULL,
  services   JSONB NOT NULL DEFAULT '[]'::jsonb,
  updated_at TIMESTAMPTZ NOT NULL
);
