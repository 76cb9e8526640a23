package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// TestPingFailsWhileWritesFailForSpace fills the database (max_page_count
// makes SQLite answer SQLITE_FULL exactly as a full volume does) and checks
// that Ping, the readiness check, fails while writes fail and passes again,
// without any other write, once there is room.
func TestPingFailsWhileWritesFailForSpace(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "uptime.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("ping on a fresh store: %v", err)
	}
	var pages int64
	if err := s.wdb.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.wdb.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages+2)); err != nil {
		t.Fatal(err)
	}
	var writeErr error
	for i := 0; i < 100 && writeErr == nil; i++ {
		_, writeErr = s.InsertChecks(ctx, bigChecks(i, 20))
	}
	if writeErr == nil || !strings.Contains(writeErr.Error(), "full") {
		t.Fatalf("a write into a full database: %v, want an error saying it is full", writeErr)
	}
	// Fill what the failed batch left, as a volume without a free byte is.
	for i := 0; i < 10000; i++ {
		one := bigChecks(2000+i, 1)
		one[0].ErrorMessage = "x"
		if _, err := s.InsertChecks(ctx, one); err != nil {
			break
		}
	}
	if err := s.Ping(ctx); err == nil || !strings.Contains(err.Error(), "full") {
		t.Fatalf("ping while writes fail for space: %v, want an error saying the store is full", err)
	}
	if _, err := s.wdb.ExecContext(ctx, "PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("ping once there is room again: %v", err)
	}
	if _, err := s.InsertChecks(ctx, bigChecks(1000, 5)); err != nil {
		t.Fatalf("write once there is room again: %v", err)
	}
	var integrity string
	if err := s.wdb.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check: %q, %v", integrity, err)
	}
}

func bigChecks(round, n int) []store.Check {
	out := make([]store.Check, n)
	for i := range out {
		out[i] = store.Check{
			ID: fmt.Sprintf("c-%d-%d", round, i), MonitorID: "m", Namespace: "ns", Region: "eu-1",
			CheckedAt: time.Now().Add(time.Duration(round*n+i) * time.Millisecond), Status: store.StatusDown,
			ErrorMessage: strings.Repeat("x", 2000),
		}
	}
	return out
}
