// Package postgres is the store backend for scale and HA replicas, on
// github.com/jackc/pgx/v5 (pgxpool). Check ingest COPYs each batch (with the
// batches that arrived meanwhile) into checks and its rollup increments per
// monitor, region and minute into rollup_deltas, in one transaction; a batch
// with a known id (a retry) is merged again by one INSERT ... ON CONFLICT DO
// NOTHING statement instead, so it is applied once. A compactor folds the
// deltas into rollups in the background; readers sum both (compact.go).
// Outbox leasing uses FOR UPDATE SKIP LOCKED, so replicas never lease the
// same delivery; the unique partial index on open
// incidents makes duplicate incidents impossible across replicas. Timestamps
// are timestamptz (microseconds) and read back in UTC. Migrations are embedded
// SQL files applied at Open under an advisory lock.
package postgres
