package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options tune a SQLite store; the zero value is a good default.
type Options struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// ReadConns is the size of the read pool (default 4).
	ReadConns int
	// MaxBatch is the most queued writes committed in one transaction
	// (default 256).
	MaxBatch int
	// BusyTimeout is how long a connection waits for a lock (default 5s).
	BusyTimeout time.Duration
	// JournalSizeLimit bounds the WAL file kept after checkpoints, in bytes
	// (default 64 MiB).
	JournalSizeLimit int64
}

// Store is the SQLite store. Writes are queued to one writer goroutine that
// commits whatever is queued in one transaction (group commit), each write in
// its own savepoint so one failing write does not undo the others; reads use a
// separate pool of read-only connections that see the last commit (WAL).
type Store struct {
	*sqlstore.Store
	wdb, rdb *sql.DB
	reads    *stmtCache
	writes   *writeStmts
	reqs     chan *writeReq
	maxBatch int

	closeOnce sync.Once
	quit      chan struct{}
	done      chan struct{}

	// fault is the storage error (disk full, I/O error) of the last write
	// that failed for one, until a later commit succeeds; while it is set
	// Ping tries a small write, so readiness reflects whether the volume
	// takes writes and returns by itself once it does again.
	faultMu sync.Mutex
	fault   error

	// versions numbers the changes of each monitor's rollups (see
	// UptimeVersion).
	versions uptimeVersions
}

var _ store.Store = (*Store)(nil)

type writeReq struct {
	ctx  context.Context
	fn   func(sqlstore.Querier) error
	done chan error
}

func dsn(path string, o Options, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		// A 64 MiB page cache keeps a group commit's dirty pages in memory
		// until the commit instead of spilling them to the WAL early.
		q.Add("_pragma", "cache_size(-65536)")
		// Each queued write runs in a savepoint; keep its sub-journal in memory.
		q.Add("_pragma", "temp_store(MEMORY)")
		q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", o.JournalSizeLimit))
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database file at path and migrates it.
func Open(ctx context.Context, path string, o Options) (*Store, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ReadConns <= 0 {
		o.ReadConns = 4
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.JournalSizeLimit <= 0 {
		o.JournalSizeLimit = 64 << 20
	}
	wdb, err := sql.Open("sqlite", dsn(path, o, false))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	if err := migrate(ctx, wdb); err != nil {
		wdb.Close()
		return nil, err
	}
	rdb, err := sql.Open("sqlite", dsn(path, o, true))
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	rdb.SetMaxOpenConns(o.ReadConns)
	rdb.SetMaxIdleConns(o.ReadConns)
	s := &Store{
		wdb: wdb, rdb: rdb, reads: newStmtCache(rdb), writes: newWriteStmts(wdb),
		reqs:     make(chan *writeReq, o.MaxBatch),
		maxBatch: o.MaxBatch,
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	s.Store = sqlstore.New(backend{s}, dialect, o.Now)
	go s.writer()
	return s, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	ms, err := store.LoadMigrations(migrations, "migrations")
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
 version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	for _, m := range ms {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", m.Version).Scan(&n); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate: %w", err)
		}
		if n > 0 {
			tx.Rollback()
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			tx.Rollback()
			return fmt.Errorf("apply migration %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			m.Version, m.Name, time.Now().UnixMicro()); err != nil {
			tx.Rollback()
			return fmt.Errorf("record migration %s: %w", m.Name, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("commit migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// writer is the single writer goroutine.
func (s *Store) writer() {
	defer close(s.done)
	for {
		var first *writeReq
		select {
		case first = <-s.reqs:
		case <-s.quit:
			// Flush whatever is still queued, then stop.
			for {
				select {
				case r := <-s.reqs:
					s.commit([]*writeReq{r})
				default:
					return
				}
			}
		}
		batch := []*writeReq{first}
	drain:
		for len(batch) < s.maxBatch {
			select {
			case r := <-s.reqs:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		s.commit(batch)
	}
}

// commit runs a batch of writes in one transaction, each in a savepoint,
// and then prepares the statements the batch repeated.
func (s *Store) commit(batch []*writeReq) {
	s.commitTx(batch)
	s.writes.prepareSeen(context.Background())
}

func (s *Store) commitTx(batch []*writeReq) {
	ctx := context.Background()
	errs := make([]error, len(batch))
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		s.noteWrite(false, err)
		for _, r := range batch {
			r.done <- fmt.Errorf("begin write: %w", err)
		}
		return
	}
	q := txQuerier(tx, s.writes)
	if len(batch) == 1 {
		// Nothing to isolate from: the transaction is the write.
		r := batch[0]
		err := r.ctx.Err()
		if err == nil {
			err = r.fn(q)
		}
		if err != nil {
			_ = tx.Rollback()
		} else if err = tx.Commit(); err != nil {
			err = fmt.Errorf("commit: %w", err)
		}
		s.noteWrite(err == nil, err)
		r.done <- err
		return
	}
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT w"); err != nil {
			errs[i] = fmt.Errorf("savepoint: %w", err)
			continue
		}
		errs[i] = r.fn(q)
		if errs[i] != nil {
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO w"); err != nil {
				errs[i] = errors.Join(errs[i], err)
			}
		}
		if _, err := tx.ExecContext(ctx, "RELEASE w"); err != nil && errs[i] == nil {
			errs[i] = fmt.Errorf("release savepoint: %w", err)
		}
	}
	commitErr := tx.Commit()
	if commitErr != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = fmt.Errorf("commit: %w", commitErr)
			}
		}
	}
	s.noteWrite(commitErr == nil, errs...)
	for i, r := range batch {
		r.done <- errs[i]
	}
}

// noteWrite records the outcome of a write transaction for Ping: a storage
// error sets the fault, a commit without one clears it.
func (s *Store) noteWrite(committed bool, errs ...error) {
	var fault error
	for _, err := range errs {
		if isStorageFault(err) {
			fault = err
			break
		}
	}
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	if fault != nil {
		s.fault = fault
	} else if committed {
		s.fault = nil
	}
}

// isStorageFault says whether err is SQLite failing to store rather than a
// write being refused: the disk or database is full, or an I/O error.
func isStorageFault(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR:
		return true
	}
	return false
}

// Ping implements store.Store: a read answers, and when the last write
// failed for want of space or an I/O error, a small write succeeds too.
// Without the write a full volume would leave the manager ready while every
// probe result and API change fails.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.Store.Ping(ctx); err != nil {
		return err
	}
	s.faultMu.Lock()
	fault := s.fault
	s.faultMu.Unlock()
	if fault == nil {
		return nil
	}
	err := backend{s}.Write(ctx, func(q sqlstore.Querier) error {
		if _, err := q.Exec(ctx, "CREATE TABLE IF NOT EXISTS write_probe (id INTEGER PRIMARY KEY, at INTEGER NOT NULL)"); err != nil {
			return err
		}
		_, err := q.Exec(ctx, "INSERT OR REPLACE INTO write_probe (id, at) VALUES (1, ?)", time.Now().UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite store cannot write (last write failed: %v): %w", fault, err)
	}
	return nil
}

// Close flushes queued writes and closes the database.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.quit)
		<-s.done
		err = errors.Join(s.reads.close(), s.writes.close(), s.rdb.Close(), s.wdb.Close())
	})
	return err
}

// backend adapts Store to sqlstore.Backend.
type backend struct{ s *Store }

func (b backend) Reader() sqlstore.Querier { return readQuerier(b.s.rdb, b.s.reads) }

func (b backend) Write(ctx context.Context, fn func(sqlstore.Querier) error) error {
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case <-b.s.quit:
		return errors.New("sqlite store is closed")
	default:
	}
	select {
	case b.s.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-b.s.quit:
		return errors.New("sqlite store is closed")
	}
	// Once queued the write is committed or rolled back; wait for the outcome
	// so the caller never mistakes a committed write for a failed one.
	return <-r.done
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type querier struct{ e execer }

func (q querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.e.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := q.e.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return sqlRow{q.e.QueryRowContext(ctx, query, args...)}
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

type sqlRow struct{ r *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

var dialect = sqlstore.Dialect{
	Time:         func(t time.Time) any { return t.UnixMicro() },
	ScanTime:     func(t *time.Time) any { return microTime{t} },
	ScanNullTime: func(t **time.Time) any { return nullMicroTime{t} },
	Contains:     func(col, arg string) string { return "instr(lower(" + col + "), lower(" + arg + ")) > 0" },
	LockRows:     false,
	IsUniqueViolation: func(err error) bool {
		var e *sqlite.Error
		if !errors.As(err, &e) {
			return false
		}
		return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	},
}

// microTime scans INTEGER microseconds into a UTC time.
type microTime struct{ t *time.Time }

func (m microTime) Scan(src any) error {
	v, ok := src.(int64)
	if !ok {
		return fmt.Errorf("timestamp column holds %T, want integer microseconds", src)
	}
	*m.t = time.UnixMicro(v).UTC()
	return nil
}

// nullMicroTime scans nullable INTEGER microseconds.
type nullMicroTime struct{ t **time.Time }

func (m nullMicroTime) Scan(src any) error {
	if src == nil {
		*m.t = nil
		return nil
	}
	var t time.Time
	if err := (microTime{&t}).Scan(src); err != nil {
		return err
	}
	*m.t = &t
	return nil
}

// LoadRollups adds pre-aggregated rollup buckets, for bulk import of history
// from another system and for benchmarks.
func (s *Store) LoadRollups(ctx context.Context, rs []store.Rollup) error {
	defer s.versions.changedAll()
	return s.Store.B.Write(ctx, func(q sqlstore.Querier) error { return sqlstore.UpsertRollups(ctx, q, rs) })
}
