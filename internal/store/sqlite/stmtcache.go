package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"

	"github.com/uptime-operator/uptime-operator/internal/store/internal/sqlstore"
)

// SQLite spends most of a short query compiling it: for the uptime query
// behind GET /monitors/:id, parsing and planning took more time than
// running it. stmtCache keeps the prepared statements of the read pool by
// query text; database/sql prepares each on a connection the first time it
// runs there and reuses it after.

// Queries with more placeholders than stmtCacheArgs are built for one
// argument list (IN lists, multi-row VALUES) and seldom repeat; they are
// not cached. stmtCacheSize bounds the cache; queries past it run
// unprepared.
const (
	stmtCacheArgs = 32
	stmtCacheSize = 1024
)

type stmtCache struct {
	db *sql.DB
	mu sync.RWMutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

// get returns the prepared statement of query, or nil when query is not
// cached (the caller runs it directly).
func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
	c.mu.RLock()
	st, ok := c.m[query]
	c.mu.RUnlock()
	if ok {
		return st
	}
	if strings.Count(query, "?") > stmtCacheArgs {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok {
		return st
	}
	if len(c.m) >= stmtCacheSize {
		return nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		// Running it directly reports the error to the caller.
		return nil
	}
	c.m[query] = st
	return st
}

// close closes every cached statement.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return closeStmts(c.m)
}

// closeStmts closes and forgets the statements of m.
func closeStmts(m map[string]*sql.Stmt) error {
	var errs []error
	for q, st := range m {
		errs = append(errs, st.Close())
		delete(m, q)
	}
	return errors.Join(errs...)
}

// writeStmts keeps prepared statements of the writer's connection. Only the
// writer goroutine uses it, so it needs no lock. A statement can only be
// prepared on the database while no transaction holds its one connection,
// so queries are noted while a batch runs and prepared after its commit,
// from their second sighting on: the multi-row inserts of check ingest
// repeat with the same text for every full chunk.
type writeStmts struct {
	db   *sql.DB
	m    map[string]*sql.Stmt
	seen map[string]int
}

const (
	writeStmtsSize = 256
	writeSeenSize  = 4096
)

func newWriteStmts(db *sql.DB) *writeStmts {
	return &writeStmts{db: db, m: map[string]*sql.Stmt{}, seen: map[string]int{}}
}

// inTx returns query's statement bound to tx, or nil (run it directly).
func (w *writeStmts) inTx(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	if st, ok := w.m[query]; ok {
		return tx.StmtContext(ctx, st)
	}
	if len(w.m) < writeStmtsSize {
		if len(w.seen) >= writeSeenSize {
			clear(w.seen)
		}
		w.seen[query]++
	}
	return nil
}

// prepareSeen prepares the queries seen at least twice. It runs between
// transactions.
func (w *writeStmts) prepareSeen(ctx context.Context) {
	for q, n := range w.seen {
		if n < 2 || len(w.m) >= writeStmtsSize {
			continue
		}
		delete(w.seen, q)
		if st, err := w.db.PrepareContext(ctx, q); err == nil {
			w.m[q] = st
		}
	}
}

func (w *writeStmts) close() error { return closeStmts(w.m) }

// preparedQuerier runs queries through prepared statements where stmt
// returns one, directly through direct otherwise.
type preparedQuerier struct {
	direct execer
	stmt   func(ctx context.Context, query string) *sql.Stmt
}

// readQuerier runs the reads of the read pool.
func readQuerier(db *sql.DB, c *stmtCache) preparedQuerier {
	return preparedQuerier{direct: db, stmt: c.get}
}

// txQuerier runs the writes of one batch in its transaction.
func txQuerier(tx *sql.Tx, w *writeStmts) preparedQuerier {
	return preparedQuerier{direct: tx, stmt: func(ctx context.Context, q string) *sql.Stmt { return w.inTx(ctx, tx, q) }}
}

func (q preparedQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	st := q.stmt(ctx, query)
	if st == nil {
		return querier{q.direct}.Exec(ctx, query, args...)
	}
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q preparedQuerier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	st := q.stmt(ctx, query)
	if st == nil {
		return querier{q.direct}.Query(ctx, query, args...)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (q preparedQuerier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	st := q.stmt(ctx, query)
	if st == nil {
		return querier{q.direct}.QueryRow(ctx, query, args...)
	}
	return sqlRow{st.QueryRowContext(ctx, args...)}
}
