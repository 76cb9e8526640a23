package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/postgres"
	"github.com/uptime-operator/uptime-operator/internal/store/storetest"
)

// dsn returns the test database, skipping without one (failing in CI, which
// must never skip silently). hack/postgres.sh starts a local server.
func dsn(t testing.TB) string {
	t.Helper()
	d := os.Getenv("UPTIME_TEST_POSTGRES_DSN")
	if d == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("UPTIME_TEST_POSTGRES_DSN is not set in CI; run hack/postgres.sh")
		}
		t.Skip("UPTIME_TEST_POSTGRES_DSN not set; run: eval \"$(hack/postgres.sh | tail -n1)\"")
	}
	return d
}

// newStore opens a store in a fresh schema that is dropped afterwards.
func newStore(t testing.TB) *postgres.Store {
	t.Helper()
	d := dsn(t)
	schema := "t_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	ctx := context.Background()
	s, err := postgres.Open(ctx, d, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Close()
		conn, err := pgx.Connect(ctx, d)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return newStore(t) })
}

func BenchmarkIngest(b *testing.B) {
	for _, w := range []int{1, 4} {
		b.Run(fmt.Sprintf("batch=1000/writers=%d", w), func(b *testing.B) {
			storetest.BenchIngest(b, newStore(b), 1000, w)
		})
	}
}

func BenchmarkUptimeQuery(b *testing.B) {
	s := newStore(b)
	storetest.BenchUptimeQuery(b, s, s.LoadRollups)
}
