-- Rollup buckets are updated in place as checks arrive (every check of a
-- batch touches its minute, hour and day bucket). Leaving a third of each
-- page free lets PostgreSQL keep the new row versions on the same page (HOT
-- updates), so no index entry is written per update.
ALTER TABLE rollups SET (fillfactor = 70);
