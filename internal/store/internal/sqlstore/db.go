// Package sqlstore implements store.Store on top of a small database
// abstraction, so the SQLite and PostgreSQL backends share every query and only
// supply connections, transactions, dialect details and their own ingest path.
//
// SQL is written with ? placeholders; a backend rebinds them if it needs to.
// Timestamps are passed through Dialect.Time and scanned through
// Dialect.ScanTime, lists and JSON documents are JSON text.
package sqlstore

import (
	"context"
	"fmt"
	"time"
)

// Rows is a result set.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is a single-row result; Scan returns store.ErrNotFound when there is no row.
type Row interface {
	Scan(dest ...any) error
}

// Querier runs statements, inside or outside a transaction.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (rowsAffected int64, err error)
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) Row
}

// Dialect holds what differs between the SQL databases.
type Dialect struct {
	// Time encodes a (UTC, microsecond) timestamp parameter.
	Time func(time.Time) any
	// ScanTime returns a scan destination that fills t (NOT NULL column).
	ScanTime func(t *time.Time) any
	// ScanNullTime returns a scan destination that fills *t, nil for NULL.
	ScanNullTime func(t **time.Time) any
	// Contains returns a case-insensitive substring test of column col against
	// placeholder arg.
	Contains func(col, arg string) string
	// LockRows is true when concurrent writers exist and read-modify-write
	// transactions must lock rows (SELECT ... FOR UPDATE [SKIP LOCKED]); false
	// for a database with a single writer.
	LockRows bool
	// LockMonitor is a statement that takes a lock, held until the end of the
	// transaction, on the monitor named by its one placeholder: concurrent
	// judgements of one monitor (store.Store.Judge) then run one after the
	// other across every process sharing the database. Empty for a database
	// with a single writer, where every write transaction is serialised
	// anyway.
	LockMonitor string
	// IsUniqueViolation reports whether err is a unique-constraint violation.
	IsUniqueViolation func(err error) bool
	// RollupsRead is the relation rollup reads sum over (rows of the
	// rollups columns, possibly several per bucket); "rollups" when empty.
	RollupsRead string
	// RollupDeltas is a table of rollup increments not yet folded into
	// rollups, whose rows of a monitor go with it; empty when there is none.
	RollupDeltas string
}

// rollupsRead returns the relation rollup reads select from.
func (d *Dialect) rollupsRead() string {
	if d.RollupsRead == "" {
		return "rollups"
	}
	return d.RollupsRead
}

// rollupTables returns the tables holding a monitor's rollups, pending
// increments first: a delete that takes them in this order waits for a
// compaction in flight instead of deadlocking with it.
func (d *Dialect) rollupTables() []string {
	if d.RollupDeltas == "" {
		return []string{"rollups"}
	}
	return []string{d.RollupDeltas, "rollups"}
}

// Backend is what a database provides to Store.
type Backend interface {
	// Reader runs read-only statements.
	Reader() Querier
	// Write runs fn in one transaction, committed when fn returns nil.
	Write(ctx context.Context, fn func(q Querier) error) error
}

// listInNamespace reads every row of table (all namespaces when namespace is
// empty) in creation order and scans each with scan; what names the rows in
// errors.
func listInNamespace[T any](ctx context.Context, s *db, table, cols, namespace, what string,
	scan func(interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	sql := "SELECT " + cols + " FROM " + table
	var args []any
	if namespace != "" {
		sql += " WHERE namespace = ?"
		args = append(args, namespace)
	}
	rows, err := s.B.Reader().Query(ctx, sql+" ORDER BY created_at, id", args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	return out, nil
}
