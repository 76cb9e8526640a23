-- Confirmation state of alert email recipients: one row per address (kept
-- lower-case) of a namespace once a confirmation was sent. Only the SHA-256
-- of the pending confirmation token is kept.
CREATE TABLE alert_recipients (
  namespace            TEXT NOT NULL,
  email                TEXT NOT NULL,
  confirm_token_hash   TEXT,
  confirmation_sent_at TIMESTAMPTZ,
  confirmations_sent   INTEGER NOT NULL DEFAULT 0,
  confirmed_at         TIMESTAMPTZ,
  PRIMARY KEY (namespace, email)
);
CREATE UNIQUE INDEX alert_recipients_token ON alert_recipients (confirm_token_hash);
