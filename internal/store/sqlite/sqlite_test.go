package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
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
			storetest.BenchIngest(b, newStore(b), 1000, w)
		})
	}
}

func BenchmarkUptimeQuery(b *testing.B) {
	s := newStore(b)
	storetest.BenchUptimeQuery(b, s, s.LoadRollups)
}
