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

-- The last contact of each probe agent with any manager replica, so every
-- replica knows which regions have an agent online (the quorum waits for
-- those during a monitor's warm-up) whichever replica the agent reaches.
CREATE TABLE IF NOT EXISTS agent_contacts (
 region TEXT NOT NULL,
 agent TEXT NOT NULL,
 last_contact INTEGER NOT NULL,
 PRIMARY KEY (region, agent)
);
