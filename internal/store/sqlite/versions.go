package sqlite

import (
	"context"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// The SQLite store is the only writer of its file (one manager replica,
// one writer goroutine), so it knows every change of a monitor's rollups:
// the ingest of its checks, the deletion or reset of its history and the
// pruning of old buckets. UptimeVersion numbers them, so a reader can keep
// an uptime computed from the rollups and know exactly when it is stale
// (internal/apiserver's uptime cache). Each version is taken after the
// change committed (or failed): a reader that read the version before its
// query and saw the old rows gets a new version at its next read. The
// PostgreSQL store has no such number: other replicas write to it.

// uptimeVersions stamps each change with the next number of one counter.
type uptimeVersions struct {
	mu   sync.Mutex
	seq  uint64
	all  uint64 // stamp of the last change of every monitor (pruning)
	byID map[string]uint64
}

func (v *uptimeVersions) changed(ids ...string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.byID == nil {
		v.byID = map[string]uint64{}
	}
	v.seq++
	for _, id := range ids {
		v.byID[id] = v.seq
	}
}

func (v *uptimeVersions) changedAll() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seq++
	v.all = v.seq
}

func (v *uptimeVersions) get(id string) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return max(v.byID[id], v.all)
}

// UptimeVersion returns the version of monitorID's rollups: a number that
// changes whenever they may have changed. ok is always true; it says the
// version is exact (see internal/apiserver).
func (s *Store) UptimeVersion(monitorID string) (version uint64, ok bool) {
	return s.versions.get(monitorID), true
}

// InsertChecks implements store.Store and stamps the monitors of checks.
func (s *Store) InsertChecks(ctx context.Context, checks []store.Check) (int, error) {
	defer s.versions.changed(monitorIDs(checks)...)
	return s.Store.InsertChecks(ctx, checks)
}

// ResetStats implements store.Store and stamps the monitor.
func (s *Store) ResetStats(ctx context.Context, monitorID string) error {
	defer s.versions.changed(monitorID)
	return s.Store.ResetStats(ctx, monitorID)
}

// DeleteMonitorHistory implements store.Store and stamps the monitor.
func (s *Store) DeleteMonitorHistory(ctx context.Context, monitorID string) error {
	defer s.versions.changed(monitorID)
	return s.Store.DeleteMonitorHistory(ctx, monitorID)
}

// PruneRollups implements store.Store and stamps every monitor.
func (s *Store) PruneRollups(ctx context.Context, step time.Duration, olderThan time.Time) (int64, error) {
	defer s.versions.changedAll()
	return s.Store.PruneRollups(ctx, step, olderThan)
}

// monitorIDs returns the distinct monitor ids of checks.
func monitorIDs(checks []store.Check) []string {
	var ids []string
	seen := map[string]struct{}{}
	for i := range checks {
		id := checks[i].MonitorID
		if _, ok := seen[id]; !ok {
			seen[id] = struct{}{}
			ids = append(ids, id)
		}
	}
	return ids
}

// ClaimMonitorHistory implements store.Store and stamps the claimant and
// the generation whose rollups it adopted.
func (s *Store) ClaimMonitorHistory(ctx context.Context, c store.HistoryClaim) (string, error) {
	adopted, err := s.Store.ClaimMonitorHistory(ctx, c)
	if adopted != "" || err != nil {
		s.versions.changed(c.UID, adopted)
	}
	return adopted, err
}

// PruneRetiredHistory implements store.Store and stamps every monitor.
func (s *Store) PruneRetiredHistory(ctx context.Context, olderThan time.Time) (int64, error) {
	defer s.versions.changedAll()
	return s.Store.PruneRetiredHistory(ctx, olderThan)
}
