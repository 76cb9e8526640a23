package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/postgres"
	"github.com/uptime-operator/uptime-operator/internal/store/storetest"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

// dsn returns the test database, skipping without one (failing in CI, which
// must never skip silently). hack/postgres.sh starts a local server.
func dsn(t testing.TB) string { return testutil.PostgresDSN(t) }

// newStore opens a store in a fresh schema that is dropped afterwards.
func newStore(t testing.TB) *postgres.Store {
	t.Helper()
	return openIn(t, newSchema(t), postgres.Options{})
}

// newSchema names a fresh schema, dropped when the test ends (after the
// stores opened in it are closed).
func newSchema(t testing.TB) string {
	t.Helper()
	d := dsn(t)
	schema := "t_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, d)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return schema
}

// openIn opens a store in schema, closed when the test ends; several stores
// in one schema stand for manager replicas sharing a database.
func openIn(t testing.TB, schema string, o postgres.Options) *postgres.Store {
	t.Helper()
	o.Schema = schema
	s, err := postgres.Open(context.Background(), dsn(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return newStore(t) })
}

// BenchmarkIngest measures ingest as it runs (the compactor folding rollup
// deltas in the background every second) and, as compaction=inline, with
// the compaction due every second done inside InsertChecks, so its cost is
// in the figure.
func BenchmarkIngest(b *testing.B) {
	for _, w := range []int{1, 4} {
		b.Run(fmt.Sprintf("batch=1000/writers=%d", w), func(b *testing.B) {
			storetest.BenchIngest(b, newStore(b), 1000, w, rawCopy(b))
		})
	}
	b.Run("batch=1000/writers=1/compaction=inline", func(b *testing.B) {
		s := &inlineCompaction{Store: openIn(b, newSchema(b), postgres.Options{CompactEvery: -1}), last: time.Now()}
		storetest.BenchIngest(b, s, 1000, 1, rawCopy(b))
	})
}

// inlineCompaction compacts within InsertChecks once a second has passed
// since it last did.
type inlineCompaction struct {
	*postgres.Store
	mu   sync.Mutex
	last time.Time
}

func (s *inlineCompaction) InsertChecks(ctx context.Context, checks []store.Check) (int, error) {
	n, err := s.Store.InsertChecks(ctx, checks)
	if err != nil {
		return n, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.last) >= time.Second {
		s.last = time.Now()
		if _, err := s.Compact(ctx); err != nil {
			return n, err
		}
	}
	return n, nil
}

func BenchmarkUptimeQuery(b *testing.B) {
	s := newStore(b)
	storetest.BenchUptimeQuery(b, s, s.LoadRollups)
}

// rawCopy is the ingest baseline: the rows go with COPY into a bare checks
// table (the columns and indexes of the store's) in a schema of their own,
// from a pool of connections, one COPY per batch.
func rawCopy(b *testing.B) storetest.RawInsert {
	b.Helper()
	ctx := context.Background()
	schema := "raw_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	pool, err := pgxpool.New(ctx, dsn(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_, _ = pool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		pool.Close()
	})
	table := pgx.Identifier{schema, "checks"}.Sanitize()
	for _, q := range []string{
		"CREATE SCHEMA " + pgx.Identifier{schema}.Sanitize(),
		`CREATE TABLE ` + table + ` (id TEXT PRIMARY KEY, monitor_id TEXT NOT NULL, namespace TEXT NOT NULL DEFAULT '',
			region TEXT NOT NULL DEFAULT '', checked_at TIMESTAMPTZ NOT NULL, status TEXT NOT NULL, status_code BIGINT,
			response_time_ms BIGINT NOT NULL DEFAULT 0, error_type TEXT, error_message TEXT, details JSONB)`,
		"CREATE INDEX ON " + table + " (monitor_id, checked_at DESC)",
		"CREATE INDEX ON " + table + " (checked_at)",
		"CREATE INDEX ON " + table + " (monitor_id, region, checked_at DESC)",
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	cols := []string{"id", "monitor_id", "namespace", "region", "checked_at", "status", "status_code", "response_time_ms", "error_type", "error_message", "details"}
	return func(ctx context.Context, batch []store.Check) error {
		_, err := pool.CopyFrom(ctx, pgx.Identifier{schema, "checks"}, cols, pgx.CopyFromSlice(len(batch), func(i int) ([]any, error) {
			c := &batch[i]
			var code *int64
			if c.StatusCode != nil {
				v := int64(*c.StatusCode)
				code = &v
			}
			var errType *string
			if c.ErrorType != "" {
				errType = &c.ErrorType
			}
			return []any{c.ID, c.MonitorID, c.Namespace, c.Region, c.CheckedAt, string(c.Status), code, c.ResponseTimeMs, errType, nil, nil}, nil
		}))
		return err
	}
}
