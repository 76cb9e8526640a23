-- The generations of each monitor (store.GenerationStore): history rows are
-- keyed by the Monitor's metadata.uid, which changes when the object is
-- deleted and created again; this table remembers which namespace, name,
-- spec.key and type a UID had, so the next generation can adopt its history, and
-- when it was deleted (retired_at), so history nobody adopts is pruned.
CREATE TABLE monitor_generations (
  uid        TEXT PRIMARY KEY,
  namespace  TEXT NOT NULL,
  name       TEXT NOT NULL,
  spec_key   TEXT NOT NULL DEFAULT '',
  type       TEXT NOT NULL DEFAULT '',
  claimed_at INTEGER NOT NULL,
  retired_at INTEGER
);
CREATE INDEX monitor_generations_name ON monitor_generations (namespace, name);
CREATE INDEX monitor_generations_spec_key ON monitor_generations (namespace, spec_key) WHERE spec_key <> '';
CREATE INDEX monitor_generations_retired ON monitor_generations (retired_at) WHERE retired_at IS NOT NULL;
