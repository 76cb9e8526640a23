-- What probe agents report with each push about the results they hold back
-- (store.AgentReport), shared by every manager replica so a ProbeRegion's
-- status counts the agents connected to any of them: the backlog each agent
-- still held at its last push (backlog_at orders the writes of replicas that
-- raced), and per region the results delivered late in all.
ALTER TABLE agent_contacts ADD COLUMN IF NOT EXISTS backlog INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agent_contacts ADD COLUMN IF NOT EXISTS backlog_at TIMESTAMPTZ;

CREATE TABLE IF NOT EXISTS region_replays (
 region TEXT PRIMARY KEY,
 results BIGINT NOT NULL,
 last_replay TIMESTAMPTZ NOT NULL
);
