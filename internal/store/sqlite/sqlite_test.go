package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
	"github.com/uptime-operator/uptime-operator/internal/store/storetest"
)

func newStore(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "uptime.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return newStore(t) })
}

func BenchmarkIngest(b *testing.B) {
	for _, w := range []int{1, 4} {
		b.Run(fmt.Sprintf("batch=1000/writers=%d", w), func(b *testing.B) {
			storetest.BenchIngest(b, newStore(b), 1000, w, rawSQLite(b))
		})
	}
}

func BenchmarkUptimeQuery(b *testing.B) {
	s := newStore(b)
	storetest.BenchUptimeQuery(b, s, s.LoadRollups)
}

// rawSQLite is the ingest baseline: the rows go into a bare checks table
// (the columns and indexes of the store's) of another database file with
// the store's pragmas, through one prepared 500-row INSERT, one
// transaction per batch, one writer at a time as SQLite allows.
func rawSQLite(b *testing.B) storetest.RawInsert {
	b.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "raw.db")+
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_pragma=cache_size(-65536)")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE checks (id TEXT PRIMARY KEY, monitor_id TEXT NOT NULL, namespace TEXT NOT NULL DEFAULT '',
			region TEXT NOT NULL DEFAULT '', checked_at INTEGER NOT NULL, status TEXT NOT NULL, status_code INTEGER,
			response_time_ms INTEGER NOT NULL DEFAULT 0, error_type TEXT, error_message TEXT, details TEXT)`,
		`CREATE INDEX checks_monitor_time ON checks (monitor_id, checked_at DESC)`,
		`CREATE INDEX checks_time ON checks (checked_at)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	const chunk = 500
	row := "(?,?,?,?,?,?,?,?,?,?,?)"
	stmt, err := db.PrepareContext(ctx, "INSERT INTO checks VALUES "+strings.Repeat(row+",", chunk-1)+row)
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	return func(ctx context.Context, batch []store.Check) error {
		if len(batch)%chunk != 0 {
			return fmt.Errorf("batch of %d is not a multiple of %d", len(batch), chunk)
		}
		mu.Lock()
		defer mu.Unlock()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		st := tx.StmtContext(ctx, stmt)
		args := make([]any, 0, chunk*11)
		for lo := 0; lo < len(batch); lo += chunk {
			args = args[:0]
			for i := lo; i < lo+chunk; i++ {
				c := &batch[i]
				var code, errType any
				if c.StatusCode != nil {
					code = *c.StatusCode
				}
				if c.ErrorType != "" {
					errType = c.ErrorType
				}
				args = append(args, c.ID, c.MonitorID, c.Namespace, c.Region, c.CheckedAt.UnixMicro(), string(c.Status),
					code, c.ResponseTimeMs, errType, nil, nil)
			}
			if _, err := st.ExecContext(ctx, args...); err != nil {
				return err
			}
		}
		return tx.Commit()
	}
}
