package manager

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

func TestStoreSizeMeasuresBothBackends(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "uptime.db")
	st, err := OpenStore(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := storeSize("sqlite://"+path, st)(ctx); err != nil || n <= 0 {
		t.Fatalf("sqlite size = %d, %v; want the file's size", n, err)
	}

	dsn := testutil.PostgresDSN(t)
	pg, err := OpenStore(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if n, err := storeSize(dsn, pg)(ctx); err != nil || n <= 0 {
		t.Fatalf("postgres size = %d, %v; want pg_database_size", n, err)
	}
}
