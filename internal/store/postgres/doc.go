// Package postgres is the store backend for scale and HA replicas, on
// github.com/jackc/pgx/v5 (pgxpool). Check ingest sends each batch (with the
// batches that arrived meanwhile) as one array parameter per column to one
// statement: an INSERT ... SELECT FROM unnest(...) ON CONFLICT DO NOTHING
// whose RETURNING rows feed the rollup upserts, so a retried batch is
// applied once. Outbox leasing uses FOR UPDATE SKIP LOCKED, so
// replicas never lease the same delivery; the unique partial index on open
// incidents makes duplicate incidents impossible across replicas. Timestamps
// are timestamptz (microseconds) and read back in UTC. Migrations are embedded
// SQL files applied at Open under an advisory lock.
package postgres
