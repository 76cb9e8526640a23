-- Subscribers of status pages (email, chat and webhook). Only the SHA-256 of
-- a pending confirmation token is kept.
CREATE TABLE status_page_subscribers (
  id                   TEXT PRIMARY KEY,
  page_uid             TEXT NOT NULL,
  namespace            TEXT NOT NULL DEFAULT '',
  channel              TEXT NOT NULL,
  address              TEXT NOT NULL,
  confirm_token_hash   TEXT,
  confirmation_sent_at TIMESTAMPTZ,
  confirmed_at         TIMESTAMPTZ,
  created_at           TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX status_page_subscribers_address ON status_page_subscribers (page_uid, channel, address);
CREATE UNIQUE INDEX status_page_subscribers_token ON status_page_subscribers (confirm_token_hash);
CREATE INDEX status_page_subscribers_pending ON status_page_subscribers (created_at) WHERE confirmed_at IS NULL;
