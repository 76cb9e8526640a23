package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/internal/sqlstore"
)

// Check ingest is group-committed, like the SQLite writer: batches that
// arrive while one is being merged are merged together next, in one
// transaction, which pays the round trips and the commit once and folds
// their rollup increments into fewer delta rows.

const (
	// maxIngestGroup bounds the checks merged in one transaction.
	maxIngestGroup = 8000
	// maxIngestQueue bounds the batches waiting for the ingesters.
	maxIngestQueue = 64
	// ingestWorkers is how many groups are merged at once. Ingest locks no
	// shared row (rollup increments are appended, see compact.go), so two
	// transactions proceed in parallel on the server.
	ingestWorkers = 2
)

type ingestReq struct {
	batch []store.Check
	done  chan ingestResult
}

type ingestResult struct {
	inserted int
	err      error
}

// InsertChecks stores the batch and its rollup increments in one transaction
// (see merge), together with batches that arrived meanwhile.
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
	if res.err != nil {
		return 0, res.err
	}
	// Screenshots (rare: failed browser checks) go in a statement of their
	// own after the COPY; a retried batch stores each once.
	if err := s.InsertScreenshots(ctx, batch); err != nil {
		return res.inserted, err
	}
	return res.inserted, nil
}

// ingester merges queued batches until the store closes, then drains the
// queue; ingestWorkers of them run.
func (s *Store) ingester() {
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

// merge stores checks and their rollup increments in one transaction and
// returns the ids that were new. The common case, a batch none of whose ids
// is known, is two COPYs: the checks into checks and their increments per
// monitor, region and minute into rollup_deltas (folded into rollups by the
// compactor, see compact.go). COPY cannot skip known ids, so a batch with one
// (an agent retrying after a lost acknowledgement, or two replicas sent the
// same result) fails with a unique violation and is merged again by
// knownSQL, which skips them.
func (s *Store) merge(ctx context.Context, checks []store.Check) (map[string]bool, error) {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"checks"}, checkCols, pgx.CopyFromSlice(len(checks), func(i int) ([]any, error) {
			return checkRow(&checks[i]), nil
		})); err != nil {
			return fmt.Errorf("copy checks: %w", err)
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"rollup_deltas"}, deltaCols, pgx.CopyFromRows(minuteDeltas(checks))); err != nil {
			return fmt.Errorf("copy rollup deltas: %w", err)
		}
		return nil
	})
	if err == nil {
		fresh := make(map[string]bool, len(checks))
		for i := range checks {
			fresh[checks[i].ID] = true
		}
		return fresh, nil
	}
	var pgErr *pgconn.PgError
	if !dialect.IsUniqueViolation(err) && !(errors.As(err, &pgErr) && pgErr.Code == "40P01") {
		return nil, fmt.Errorf("insert checks: %w", err)
	}
	// A known id, or a deadlock with a transaction inserting some of the
	// same ids in another order (the other ingester, another replica), which
	// has ended by now.
	return s.mergeKnown(ctx, checks)
}

// checkRow returns the values of c in checkCols order.
func checkRow(c *store.Check) []any {
	var code *int64
	if c.StatusCode != nil {
		v := int64(*c.StatusCode)
		code = &v
	}
	var errType, errMsg, detail *string
	if c.ErrorType != "" {
		errType = &c.ErrorType
	}
	if c.ErrorMessage != "" {
		errMsg = &c.ErrorMessage
	}
	if len(c.Details) > 0 {
		d := string(c.Details)
		detail = &d
	}
	return []any{c.ID, c.MonitorID, c.Namespace, c.Region, c.CheckedAt, string(c.Status), code, c.ResponseTimeMs, errType, errMsg, detail}
}

// minuteDeltas folds checks into one rollup_deltas row (deltaCols order) per
// monitor, region and minute.
func minuteDeltas(checks []store.Check) [][]any {
	type key struct {
		monitor, region string
		minute          int64
	}
	idx := make(map[key]int, len(checks))
	var keys []key
	var stats []store.Stats
	for i := range checks {
		c := &checks[i]
		k := key{c.MonitorID, c.Region, store.Bucket(c.CheckedAt, store.StepMinute)}
		j, ok := idx[k]
		if !ok {
			j = len(keys)
			idx[k] = j
			keys = append(keys, k)
			stats = append(stats, store.Stats{})
		}
		stats[j].AddCheck(c.Status, c.ResponseTimeMs)
	}
	rows := make([][]any, len(keys))
	for j, k := range keys {
		st := &stats[j]
		rows[j] = []any{k.monitor, k.region, k.minute, st.Up, st.Down, st.Degraded, st.Blocked, st.Unknown,
			st.ResponseSumMs, st.ResponseMinMs, st.ResponseMaxMs}
	}
	return rows
}

// mergeKnown stores the checks whose ids are new and their rollup increments
// in one statement (knownSQL: a statement is its own transaction) and
// returns those ids. The rows go as one array parameter per column in pgx's
// binary format.
func (s *Store) mergeKnown(ctx context.Context, checks []store.Check) (map[string]bool, error) {
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
		r := checkRow(&checks[i])
		ids[i], monitors[i], namespaces[i], regions[i] = r[0].(string), r[1].(string), r[2].(string), r[3].(string)
		checkedAt[i], statuses[i], codes[i], rts[i] = r[4].(time.Time), r[5].(string), r[6].(*int64), r[7].(int64)
		errTypes[i], errMsgs[i], detail[i] = r[8].(*string), r[9].(*string), r[10].(*string)
	}
	args := []any{ids, monitors, namespaces, regions, checkedAt, statuses, codes, rts, errTypes, errMsgs, detail}
	rows, err := s.pool.Query(ctx, knownSQL, args...)
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
