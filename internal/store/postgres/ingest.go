package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/internal/sqlstore"
)

// Check ingest is group-committed, like the SQLite writer: batches that
// arrive while one is being merged are merged together next, in one COPY
// and one statement. Concurrent batches would otherwise update the same
// rollup rows (every batch touches the minute, hour and day bucket of each
// monitor and region in it) and wait on each other's row locks.

const (
	// maxIngestGroup bounds the checks merged in one transaction.
	maxIngestGroup = 8000
	// maxIngestQueue bounds the batches waiting for the ingester.
	maxIngestQueue = 64
)

type ingestReq struct {
	batch []store.Check
	done  chan ingestResult
}

type ingestResult struct {
	inserted int
	err      error
}

// InsertChecks streams the batch with COPY into a temporary staging table and
// merges it in one statement (see ingestSQL), together with batches that
// arrived meanwhile.
func (s *Store) InsertChecks(ctx context.Context, checks []store.Check) (int, error) {
	batch, err := sqlstore.PrepareChecks(checks)
	if err != nil {
		return 0, err
	}
	if len(batch) == 0 {
		return 0, nil
	}
	r := &ingestReq{batch: batch, done: make(chan ingestResult, 1)}
	select {
	case s.ingest <- r:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-s.quit:
		return 0, errors.New("postgres store is closed")
	}
	// Once queued the batch is committed or rolled back; wait for the
	// outcome so a committed batch is never reported as failed.
	res := <-r.done
	return res.inserted, res.err
}

// ingester merges queued batches until the store closes, then drains the
// queue.
func (s *Store) ingester() {
	defer close(s.done)
	for {
		var first *ingestReq
		select {
		case first = <-s.ingest:
		case <-s.quit:
			for {
				select {
				case r := <-s.ingest:
					s.mergeGroup([]*ingestReq{r})
				default:
					return
				}
			}
		}
		group, n := []*ingestReq{first}, len(first.batch)
	drain:
		for n < maxIngestGroup {
			select {
			case r := <-s.ingest:
				group, n = append(group, r), n+len(r.batch)
			default:
				break drain
			}
		}
		s.mergeGroup(group)
	}
}

// mergeGroup stores the batches of group in one transaction and tells each
// how many of its checks were new. When the group fails, each batch is
// tried alone, so one bad batch fails only its own caller.
func (s *Store) mergeGroup(group []*ingestReq) {
	var all []store.Check
	for _, r := range group {
		all = append(all, r.batch...)
	}
	ctx := context.Background()
	fresh, err := s.merge(ctx, all)
	if err != nil && len(group) > 1 {
		for _, r := range group {
			s.mergeGroup([]*ingestReq{r})
		}
		return
	}
	for _, r := range group {
		res := ingestResult{err: err}
		for _, c := range r.batch {
			if fresh[c.ID] {
				res.inserted++
				delete(fresh, c.ID) // an id in two batches is new for the first
			}
		}
		r.done <- res
	}
}

// merge runs one COPY and merge of checks and returns the ids that were new.
func (s *Store) merge(ctx context.Context, checks []store.Check) (map[string]bool, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("insert checks: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // no-op after commit
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE IF NOT EXISTS checks_staging (LIKE checks) ON COMMIT DELETE ROWS"); err != nil {
		return nil, fmt.Errorf("create staging table: %w", err)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"checks_staging"}, copyCols, pgx.CopyFromSlice(len(checks), func(i int) ([]any, error) {
		c := &checks[i]
		var code, details, errType, errMsg any
		if c.StatusCode != nil {
			code = int64(*c.StatusCode)
		}
		if len(c.Details) > 0 {
			details = string(c.Details)
		}
		if c.ErrorType != "" {
			errType = c.ErrorType
		}
		if c.ErrorMessage != "" {
			errMsg = c.ErrorMessage
		}
		return []any{c.ID, c.MonitorID, c.Namespace, c.Region, c.CheckedAt, string(c.Status), code,
			c.ResponseTimeMs, errType, errMsg, details}, nil
	}))
	if err != nil {
		return nil, fmt.Errorf("copy checks: %w", err)
	}
	rows, err := tx.Query(ctx, ingestSQL)
	if err != nil {
		return nil, fmt.Errorf("merge checks: %w", err)
	}
	fresh := make(map[string]bool, len(checks))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("merge checks: %w", err)
		}
		fresh[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("merge checks: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit checks: %w", err)
	}
	return fresh, nil
}
