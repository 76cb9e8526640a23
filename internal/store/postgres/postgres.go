package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLockID is the advisory lock that serialises migrations of replicas
// starting at the same time.
const migrationLockID = 0x7570_7469_6d65 // "uptime"

// Options tune a PostgreSQL store.
type Options struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Schema, when set, is created if missing and used as the search_path, so
	// several stores (tests, tenants) can share one database.
	Schema string
	// MaxConns bounds the pool: DefaultMaxConns when 0 and the DSN does
	// not set pool_max_conns.
	MaxConns int32
	// CompactEvery is how often the store folds pending rollup increments
	// (compact.go); one second when 0, never when negative (the caller then
	// calls Compact).
	CompactEvery time.Duration
}

// DefaultMaxConns is the pool's size unless the DSN's pool_max_conns says
// otherwise. pgxpool's own default is the number of CPUs, at least 4: on a
// small node the manager's 32 status reconciles, the 8 judgements of a
// batch, the ingest, the compactor and the REST API then queue for 4
// connections, and at 100,000 monitors a batch that opens incidents waited
// minutes behind them.
const DefaultMaxConns = 16

// Store is the PostgreSQL store.
type Store struct {
	*sqlstore.Store
	pool *pgxpool.Pool

	// Concurrent InsertChecks calls are merged into one transaction by the
	// ingester goroutine (see ingest.go).
	ingest chan *ingestReq
	quit   chan struct{}
	done   chan struct{}
	// compacted is closed when the compactor (compact.go) has stopped.
	compacted chan struct{}
	closeOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// Open connects to dsn and migrates the schema.
func Open(ctx context.Context, dsn string, o Options) (*Store, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse postgres dsn: %w", err)
	}
	switch {
	case o.MaxConns > 0:
		cfg.MaxConns = o.MaxConns
	case !strings.Contains(dsn, "pool_max_conns"):
		cfg.MaxConns = DefaultMaxConns
	}
	if o.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = o.Schema
	}
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		// Read timestamps back in UTC.
		c.TypeMap().RegisterType(&pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC}})
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	if err := migrate(ctx, pool, o.Schema); err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{pool: pool, ingest: make(chan *ingestReq, maxIngestQueue), quit: make(chan struct{}), done: make(chan struct{}),
		compacted: make(chan struct{})}
	s.Store = sqlstore.New(backend{pool: pool}, dialect, o.Now)
	var ingesters sync.WaitGroup
	for range ingestWorkers {
		ingesters.Go(s.ingester)
	}
	go func() { ingesters.Wait(); close(s.done) }()
	every := o.CompactEvery
	if every == 0 {
		every = defaultCompactEvery
	}
	if every > 0 {
		go s.compactor(every)
	} else {
		close(s.compacted)
	}
	return s, nil
}

func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	ms, err := store.LoadMigrations(migrations, "migrations")
	if err != nil {
		return err
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // no-op after commit
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLockID)); err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	if schema != "" {
		if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
 version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	for _, m := range ms {
		var n int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM schema_migrations WHERE version = $1", m.Version).Scan(&n); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if n > 0 {
			continue
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("apply migration %s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
			return fmt.Errorf("record migration %s: %w", m.Name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit migrations: %w", err)
	}
	return nil
}

// Close finishes the queued ingest and closes the pool.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.quit)
		<-s.done
		<-s.compacted
		s.pool.Close()
	})
	return nil
}

// Pool exposes the connection pool, for per-monitor advisory locks and tests.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// checkCols are the columns of checks an ingest writes, in checkRow order.
var checkCols = []string{"id", "monitor_id", "namespace", "region", "checked_at", "status", "status_code",
	"response_time_ms", "error_type", "error_message", "details"}

// deltaCols are the columns of rollup_deltas, in minuteDeltas order.
var deltaCols = []string{"monitor_id", "region", "bucket", "up", "down", "degraded", "blocked", "unknown", "rt_sum", "rt_min", "rt_max"}

// knownSQL inserts the checks given as one array per column ($1 to $11 in
// checkCols order), skipping known ids, and appends the increments of the
// new ones per monitor, region and minute to rollup_deltas; it returns the
// new ids.
var knownSQL = `WITH src AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::bigint[],
    $8::bigint[], $9::text[], $10::text[], $11::text[])
    AS t(id, monitor_id, namespace, region, checked_at, status, status_code, response_time_ms, error_type, error_message, details)
), ins AS (
  INSERT INTO checks (` + strings.Join(checkCols, ", ") + `)
  SELECT id, monitor_id, namespace, region, checked_at, status, status_code, response_time_ms, error_type, error_message,
    details::jsonb FROM src
  ON CONFLICT (id) DO NOTHING
  RETURNING id, monitor_id, region, checked_at, status, response_time_ms
), deltas AS (
  INSERT INTO rollup_deltas (` + strings.Join(deltaCols, ", ") + `)
  SELECT monitor_id, region, (floor(extract(epoch FROM checked_at) / 60) * 60)::bigint,
    count(*) FILTER (WHERE status = 'up'),
    count(*) FILTER (WHERE status = 'down'),
    count(*) FILTER (WHERE status = 'degraded'),
    count(*) FILTER (WHERE status = 'blocked'),
    count(*) FILTER (WHERE status NOT IN ('up', 'down', 'degraded', 'blocked')),
    coalesce(sum(response_time_ms) FILTER (WHERE status IN ('up', 'degraded')), 0)::bigint,
    min(response_time_ms) FILTER (WHERE status IN ('up', 'degraded')),
    max(response_time_ms) FILTER (WHERE status IN ('up', 'degraded'))
  FROM ins GROUP BY 1, 2, 3
  RETURNING 1
)
SELECT id FROM ins`

// backend adapts the pool to sqlstore.Backend.
type backend struct{ pool *pgxpool.Pool }

func (b backend) Reader() sqlstore.Querier { return querier{b.pool} }

func (b backend) Write(ctx context.Context, fn func(sqlstore.Querier) error) error {
	return pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error { return fn(querier{tx}) })
}

type pgxQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type querier struct{ q pgxQuerier }

func (q querier) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := q.q.Exec(ctx, rebind(sql), args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (q querier) Query(ctx context.Context, sql string, args ...any) (sqlstore.Rows, error) {
	return q.q.Query(ctx, rebind(sql), args...)
}

func (q querier) QueryRow(ctx context.Context, sql string, args ...any) sqlstore.Row {
	return row{q.q.QueryRow(ctx, rebind(sql), args...)}
}

type row struct{ r pgx.Row }

func (r row) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

var rebound sync.Map // sql with ? → sql with $n

// rebind turns ? placeholders into $1, $2, ... outside string literals.
func rebind(sql string) string {
	if v, ok := rebound.Load(sql); ok {
		return v.(string)
	}
	var sb strings.Builder
	n, inStr := 0, false
	for i := 0; i < len(sql); i++ {
		ch := sql[i]
		switch {
		case ch == '\'':
			inStr = !inStr
			sb.WriteByte(ch)
		case ch == '?' && !inStr:
			n++
			sb.WriteByte('$')
			sb.WriteString(strconv.Itoa(n))
		default:
			sb.WriteByte(ch)
		}
	}
	out := sb.String()
	rebound.Store(sql, out)
	return out
}

var dialect = sqlstore.Dialect{
	Time:         func(t time.Time) any { return t },
	ScanTime:     func(t *time.Time) any { return t },
	ScanNullTime: func(t **time.Time) any { return t },
	Contains:     func(col, arg string) string { return "strpos(lower(" + col + "), lower(" + arg + ")) > 0" },
	LockRows:     true,
	// A transaction-scoped advisory lock in the two-key space (which never
	// overlaps the one-key space of migrationLockID): the class "judg" and
	// a hash of the monitor id. Two monitors whose ids hash alike merely
	// take turns.
	LockMonitor: "SELECT pg_advisory_xact_lock(1786078311, hashtext(?))",
	IsUniqueViolation: func(err error) bool {
		var e *pgconn.PgError
		return errors.As(err, &e) && e.Code == "23505"
	},
	// Ingest appends rollup increments to rollup_deltas (see compact.go);
	// rollups_all adds them to the compacted rows.
	RollupsRead:  "rollups_all",
	RollupDeltas: "rollup_deltas",
}

// LoadRollups adds pre-aggregated rollup buckets (COPY into a staging table,
// then an upsert), for bulk import of history and for benchmarks.
func (s *Store) LoadRollups(ctx context.Context, rs []store.Rollup) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "CREATE TEMP TABLE IF NOT EXISTS rollups_staging (LIKE rollups) ON COMMIT DELETE ROWS"); err != nil {
			return fmt.Errorf("create staging table: %w", err)
		}
		cols := []string{"monitor_id", "region", "step", "bucket", "up", "down", "degraded", "blocked", "unknown", "rt_sum", "rt_min", "rt_max"}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"rollups_staging"}, cols, pgx.CopyFromSlice(len(rs), func(i int) ([]any, error) {
			r := &rs[i]
			return []any{r.MonitorID, r.Region, r.Step, r.Bucket, r.Up, r.Down, r.Degraded, r.Blocked, r.Unknown,
				r.ResponseSumMs, r.ResponseMinMs, r.ResponseMaxMs}, nil
		}))
		if err != nil {
			return fmt.Errorf("copy rollups: %w", err)
		}
		c := strings.Join(cols, ", ")
		_, err = tx.Exec(ctx, "INSERT INTO rollups ("+c+") SELECT "+c+" FROM rollups_staging ORDER BY monitor_id, step, bucket, region"+sqlstore.RollupUpsertConflict)
		if err != nil {
			return fmt.Errorf("merge rollups: %w", err)
		}
		return nil
	})
}
