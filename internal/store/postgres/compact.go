package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store/internal/sqlstore"
)

// Ingest appends each batch's rollup increments to rollup_deltas instead of
// updating the rollup rows in place: an upsert locks and rewrites the minute,
// hour and day row of every monitor and region in the batch (three row
// versions per monitor per batch, and replicas ingesting at once wait on each
// other's row locks), where an append of one row per monitor, region and
// minute costs about a third and locks nothing. The compactor of every
// replica folds the deltas into rollups in the background; readers sum both
// (rollups_all), so no figure depends on whether it has run.

const (
	// defaultCompactEvery is how often a replica folds the pending deltas;
	// between two runs rollup_deltas holds about that long of ingest.
	defaultCompactEvery = time.Second
	// compactBatch bounds the deltas folded in one transaction.
	compactBatch = 20000
)

// compactSQL moves up to $1 deltas into rollups in one statement, so a
// reader (one statement, one snapshot) sees every delta either pending or
// folded, never both or neither. FOR UPDATE SKIP LOCKED lets the
// compactors of several replicas take disjoint deltas; the upserts go in
// key order, as LoadRollups', so two of them never deadlock.
const compactSQL = `WITH d AS (
  DELETE FROM rollup_deltas WHERE ctid = ANY (ARRAY(SELECT ctid FROM rollup_deltas LIMIT $1 FOR UPDATE SKIP LOCKED))
  RETURNING monitor_id, region, bucket, up, down, degraded, blocked, unknown, rt_sum, rt_min, rt_max
), agg AS (
  SELECT d.monitor_id, d.region, s.step, d.bucket - ((d.bucket % s.step) + s.step) % s.step AS bucket,
    sum(up)::bigint AS up, sum(down)::bigint AS down, sum(degraded)::bigint AS degraded, sum(blocked)::bigint AS blocked,
    sum(unknown)::bigint AS unknown, sum(rt_sum)::bigint AS rt_sum, min(rt_min) AS rt_min, max(rt_max) AS rt_max
  FROM d CROSS JOIN (VALUES (60::bigint), (3600::bigint), (86400::bigint)) AS s(step)
  GROUP BY 1, 2, 3, 4
), up AS (
  INSERT INTO rollups (monitor_id, region, step, bucket, up, down, degraded, blocked, unknown, rt_sum, rt_min, rt_max)
  SELECT * FROM agg ORDER BY monitor_id, step, bucket, region` + sqlstore.RollupUpsertConflict + `
  RETURNING 1
)
SELECT count(*) FROM d`

// Compact folds the pending rollup deltas into rollups, except those another
// compaction is folding at the same time, and returns how many it folded. The compactor calls it every Options.CompactEvery;
// calling it besides is safe (tests, a replica shutting down).
func (s *Store) Compact(ctx context.Context) (int64, error) {
	var total int64
	for {
		var n int64
		if err := s.pool.QueryRow(ctx, compactSQL, compactBatch).Scan(&n); err != nil {
			return total, fmt.Errorf("compact rollups: %w", err)
		}
		total += n
		if n < compactBatch {
			return total, nil
		}
	}
}

// compactor runs Compact every period until the store closes. A failed
// run is retried at the next tick; the deltas wait in the meantime, and
// reads stay exact.
func (s *Store) compactor(every time.Duration) {
	defer close(s.compacted)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if _, err := s.Compact(ctx); err != nil {
			slog.Warn("postgres store: rollup compaction failed, retrying", "err", err)
		}
		cancel()
	}
}

// PruneRollups implements store.Store: it folds the pending deltas first, so
// the buckets it deletes include them (a minute delta also feeds its hour and
// day bucket, which may be kept).
func (s *Store) PruneRollups(ctx context.Context, step time.Duration, olderThan time.Time) (int64, error) {
	if _, err := s.Compact(ctx); err != nil {
		return 0, fmt.Errorf("prune rollups: %w", err)
	}
	return s.Store.PruneRollups(ctx, step, olderThan)
}
