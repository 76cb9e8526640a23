-- Check ingest no longer updates the rollup rows in place: each batch appends
-- its increments per monitor, region and minute to rollup_deltas (an insert,
-- no row lock, so replicas never wait on each other), and a compactor on every
-- replica folds them into the minute, hour and day rows of rollups in the
-- background. Readers sum both through rollups_all, so the figures are exact
-- whether or not a delta has been compacted yet: the compactor deletes a delta
-- and adds it to rollups in one transaction, and one statement sees either.
CREATE TABLE rollup_deltas (
  monitor_id TEXT NOT NULL,
  region     TEXT NOT NULL,
  bucket     BIGINT NOT NULL, -- the minute (Unix seconds)
  up         BIGINT NOT NULL DEFAULT 0,
  down       BIGINT NOT NULL DEFAULT 0,
  degraded   BIGINT NOT NULL DEFAULT 0,
  blocked    BIGINT NOT NULL DEFAULT 0,
  unknown    BIGINT NOT NULL DEFAULT 0,
  rt_sum     BIGINT NOT NULL DEFAULT 0,
  rt_min     BIGINT,
  rt_max     BIGINT
);
-- Readers look up the deltas of one monitor; the table stays small (seconds
-- of ingest), so the monitor alone is selective enough.
CREATE INDEX rollup_deltas_monitor ON rollup_deltas (monitor_id);
-- Every row is deleted within seconds of its insert: vacuum it often.
ALTER TABLE rollup_deltas SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000,
  autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 10000);

-- What every rollup read selects from: the compacted rows, and each pending
-- minute delta as its minute, hour and day bucket (floor division, as
-- store.Bucket). Filters on monitor_id and region reach both tables' indexes.
CREATE VIEW rollups_all AS
  SELECT monitor_id, region, step, bucket, up, down, degraded, blocked, unknown, rt_sum, rt_min, rt_max FROM rollups
  UNION ALL
  SELECT d.monitor_id, d.region, s.step, d.bucket - ((d.bucket % s.step) + s.step) % s.step,
    d.up, d.down, d.degraded, d.blocked, d.unknown, d.rt_sum, d.rt_min, d.rt_max
  FROM rollup_deltas d CROSS JOIN (VALUES (60::bigint), (3600::bigint), (86400::bigint)) AS s(step);
