-- The failure screenshots of browser checks (store.Check.Screenshot), apart
-- from checks so their rows stay small; pruned with the checks they belong
-- to (checked_at) and deleted with the monitor's history.
CREATE TABLE IF NOT EXISTS check_screenshots (
 check_id   TEXT PRIMARY KEY,
 monitor_id TEXT NOT NULL,
 checked_at INTEGER NOT NULL,
 image      BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS check_screenshots_monitor ON check_screenshots (monitor_id);
CREATE INDEX IF NOT EXISTS check_screenshots_time ON check_screenshots (checked_at);
