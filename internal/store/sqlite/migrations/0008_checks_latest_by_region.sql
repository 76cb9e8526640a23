-- Every judgement of a monitor reads the newest check of each of its regions
-- (Store.Judge, Store.LatestByRegion); this index makes that one probe per
-- region instead of a walk back through the monitor's history.
CREATE INDEX IF NOT EXISTS checks_monitor_region_time ON checks (monitor_id, region, checked_at DESC);

-- What the engine remembers of a monitor between judgements besides checks
-- and incidents (the open last-mile notice), read and written under the
-- monitor's judgement lock so every manager replica sees the same.
CREATE TABLE IF NOT EXISTS monitor_judgements (
 monitor_id TEXT PRIMARY KEY,
 state TEXT NOT NULL
);
