package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/internal/sqlstore"
)

// Check ingest is group-committed, like the SQLite writer: batches that
// arrive while one is being merged are merged together next, in one
// statement. Concurrent batches would otherwise update the same
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

// InsertChecks stores the batch and its rollups in one statement (see
// ingestSQL), together with batches that arrived meanwhile.
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

// merge stores checks and their rollups in one statement (ingestSQL, one
// round trip: a statement is its own transaction) and returns the ids that
// were new. The rows go as one array parameter per column in pgx's binary
// format; a COPY into a staging table took five round trips (begin, create
// the table, copy, merge, commit) and emptied the table at every commit.
func (s *Store) merge(ctx context.Context, checks []store.Check) (map[string]bool, error) {
	n := len(checks)
	var (
		ids, monitors, namespaces = make([]string, n), make([]string, n), make([]string, n)
		regions, statuses         = make([]string, n), make([]string, n)
		checkedAt                 = make([]time.Time, n)
		codes                     = make([]*int64, n)
		rts                       = make([]int64, n)
		errTypes, errMsgs, detail = make([]*string, n), make([]*string, n), make([]*string, n)
	)
	for i := range checks {
		c := &checks[i]
		ids[i], monitors[i], namespaces[i], regions[i] = c.ID, c.MonitorID, c.Namespace, c.Region
		checkedAt[i], statuses[i], rts[i] = c.CheckedAt, string(c.Status), c.ResponseTimeMs
		if c.StatusCode != nil {
			code := int64(*c.StatusCode)
			codes[i] = &code
		}
		if c.ErrorType != "" {
			errTypes[i] = &c.ErrorType
		}
		if c.ErrorMessage != "" {
			errMsgs[i] = &c.ErrorMessage
		}
		if len(c.Details) > 0 {
			d := string(c.Details)
			detail[i] = &d
		}
	}
	rows, err := s.pool.Query(ctx, ingestSQL, ids, monitors, namespaces, regions, checkedAt, statuses, codes, rts, errTypes, errMsgs, detail)
	if err != nil {
		return nil, fmt.Errorf("insert checks: %w", err)
	}
	fresh := make(map[string]bool, n)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("insert checks: %w", err)
		}
		fresh[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("insert checks: %w", err)
	}
	return fresh, nil
}
