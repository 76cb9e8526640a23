package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// retiredNote is the note on an incident resolved because its monitor was
// deleted.
const retiredNote = "Resolved because the monitor was deleted."

// supersededNote is the note on an adopted incident resolved because the
// adopting generation had already opened one of its own.
const supersededNote = "Resolved because the re-created monitor opened an incident of its own."

// ClaimMonitorHistory implements store.Store.
func (s *historyStore) ClaimMonitorHistory(ctx context.Context, c store.HistoryClaim) (string, error) {
	if c.UID == "" || c.Namespace == "" || c.Name == "" {
		return "", fmt.Errorf("%w: a generation needs a uid, namespace and name", store.ErrInvalid)
	}
	// Every reconcile claims: a claimed generation costs one read.
	var one int
	err := s.B.Reader().QueryRow(ctx, "SELECT 1 FROM monitor_generations WHERE uid = ?", c.UID).Scan(&one)
	if err == nil {
		return "", nil
	}
	if !isNotFound(err) {
		return "", fmt.Errorf("read generation %s: %w", c.UID, err)
	}
	at := c.At
	if at.IsZero() {
		at = s.now()
	}
	var adopted string
	err = s.B.Write(ctx, func(q Querier) error {
		adopted = ""
		n, err := q.Exec(ctx, `INSERT INTO monitor_generations (uid, namespace, name, spec_key, type, claimed_at)
 VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (uid) DO NOTHING`,
			c.UID, c.Namespace, c.Name, c.Key, c.Type, s.D.Time(store.UTC(at)))
		if err != nil || n == 0 || c.AdoptFrom == "" {
			return err // claimed already (another replica), or nothing to adopt
		}
		var old string
		// The claimant's name and key are unique among live monitors, so a
		// generation that had them is gone, retired or not (a rebuilt
		// cluster never ran its finalizer); another name may belong to a
		// live monitor and is adopted only once retired.
		//
		// One indexed branch per way of being the predecessor: written as
		// one OR, SQLite searched the (namespace, name) index by namespace
		// alone and read every generation of the namespace, per claim, so
		// the claims of N new Monitors cost O(N²) on the single writer (at
		// 100,000, status writes after a cold create, which wait for the
		// claim, came at 5 a second).
		err = q.QueryRow(ctx, `SELECT uid FROM (
 SELECT uid, claimed_at FROM monitor_generations WHERE namespace = ? AND name = ? AND type = ? AND uid <> ?
 UNION SELECT uid, claimed_at FROM monitor_generations WHERE namespace = ? AND spec_key = ? AND spec_key <> '' AND type = ? AND uid <> ?
 UNION SELECT uid, claimed_at FROM monitor_generations WHERE namespace = ? AND name = ? AND retired_at IS NOT NULL AND type = ? AND uid <> ?
) p ORDER BY claimed_at DESC, uid DESC LIMIT 1`,
			c.Namespace, c.Name, c.Type, c.UID,
			c.Namespace, c.Key, c.Type, c.UID,
			c.Namespace, c.AdoptFrom, c.Type, c.UID).Scan(&old)
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("find predecessor: %w", err)
		}
		// Deleting the predecessor's record first is the claim on its rows:
		// of two transactions adopting it, the second finds nothing to
		// delete (PostgreSQL: after waiting for the first to commit).
		if n, err := q.Exec(ctx, "DELETE FROM monitor_generations WHERE uid = ?", old); err != nil || n == 0 {
			return err
		}
		if err := s.adopt(ctx, q, old, c.UID, at); err != nil {
			return fmt.Errorf("adopt history of %s: %w", old, err)
		}
		adopted = old
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("claim monitor history: %w", err)
	}
	return adopted, nil
}

// adopt re-keys every row of monitor from to monitor to in q's transaction,
// merging with the rows to already has.
func (s *historyStore) adopt(ctx context.Context, q Querier, from, to string, at time.Time) error {
	if err := s.lockMonitors(ctx, q, from, to); err != nil {
		return err
	}
	// One open incident per monitor: when both have one, the newer stays.
	if old, err := s.incidents.getOpenIncident(ctx, q, from); err == nil {
		if cur, err := s.incidents.getOpenIncident(ctx, q, to); err == nil {
			if _, err := s.incidents.resolveIncident(ctx, q, old.ID, later(cur.StartedAt, old.StartedAt), false, supersededNote, nil); err != nil {
				return err
			}
		} else if !isNotFound(err) {
			return err
		}
	} else if !isNotFound(err) {
		return err
	}
	// One open pause window per monitor, likewise.
	if _, err := q.Exec(ctx, `UPDATE pause_windows SET resumed_at = ? WHERE monitor_id = ? AND resumed_at IS NULL
 AND EXISTS (SELECT 1 FROM pause_windows o WHERE o.monitor_id = ? AND o.resumed_at IS NULL)`,
		s.D.Time(store.UTC(at)), from, to); err != nil {
		return fmt.Errorf("close pause window: %w", err)
	}
	// Rollup buckets add up; pending increments move first, as
	// historyDeletes takes them, so a compaction in flight is waited for.
	for _, t := range s.D.rollupTables() {
		if t != "rollups" {
			if err := moveRows(ctx, q, t, from, to); err != nil {
				return err
			}
			continue
		}
		if _, err := q.Exec(ctx, `INSERT INTO rollups (monitor_id, region, step, bucket, up, down, degraded, blocked, unknown, rt_sum, rt_min, rt_max)
 SELECT ?, region, step, bucket, up, down, degraded, blocked, unknown, rt_sum, rt_min, rt_max FROM rollups WHERE monitor_id = ?`+RollupUpsertConflict,
			to, from); err != nil {
			return fmt.Errorf("merge rollups: %w", err)
		}
		if _, err := q.Exec(ctx, "DELETE FROM rollups WHERE monitor_id = ?", from); err != nil {
			return fmt.Errorf("merge rollups: %w", err)
		}
	}
	for _, t := range []struct {
		table string
		key   []string // the columns besides monitor_id of a unique key
	}{
		{"checks", nil},
		{"incidents", nil}, // timelines, notes and AI content follow the incident ids
		{"dns_records", nil},
		{"heartbeats", nil},
		{"pause_windows", []string{"paused_at"}},
		{"cert_observations", []string{"region"}},
		{"expiry_notices", []string{"kind", "expires_at", "stage"}},
		{"monitor_judgements", []string{}},
	} {
		if err := moveRows(ctx, q, t.table, from, to, t.key...); err != nil {
			return err
		}
	}
	return nil
}

// moveRows re-keys table's rows of monitor from to monitor to. When the
// table has a unique key (key names its columns besides monitor_id; empty
// for monitor_id alone), a row that to already has wins and from's is
// deleted.
func moveRows(ctx context.Context, q Querier, table, from, to string, key ...string) error {
	sql := "UPDATE " + table + " SET monitor_id = ? WHERE monitor_id = ?"
	args := []any{to, from}
	if key != nil {
		cond := []string{"n.monitor_id = ?"}
		for _, k := range key {
			cond = append(cond, "n."+k+" = "+table+"."+k)
		}
		sql += " AND NOT EXISTS (SELECT 1 FROM " + table + " n WHERE " + strings.Join(cond, " AND ") + ")"
		args = append(args, to)
	}
	if _, err := q.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("move %s: %w", table, err)
	}
	if key != nil {
		if _, err := q.Exec(ctx, "DELETE FROM "+table+" WHERE monitor_id = ?", from); err != nil {
			return fmt.Errorf("move %s: %w", table, err)
		}
	}
	return nil
}

// lockMonitors takes the judgement locks of the monitors (in a fixed
// order), so no judgement of either runs while their rows move.
func (s *historyStore) lockMonitors(ctx context.Context, q Querier, ids ...string) error {
	if s.D.LockMonitor == "" {
		return nil
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	for _, id := range ids {
		if _, err := q.Exec(ctx, s.D.LockMonitor, id); err != nil {
			return fmt.Errorf("lock monitor %s: %w", id, err)
		}
	}
	return nil
}

// RetireMonitorHistory implements store.Store.
func (s *historyStore) RetireMonitorHistory(ctx context.Context, id store.MonitorIdentity, at time.Time) error {
	if id.UID == "" {
		return fmt.Errorf("%w: a generation needs a uid", store.ErrInvalid)
	}
	at = store.UTC(at)
	err := s.B.Write(ctx, func(q Querier) error {
		if err := s.lockMonitors(ctx, q, id.UID); err != nil {
			return err
		}
		n, err := q.Exec(ctx, "UPDATE monitor_generations SET retired_at = ? WHERE uid = ? AND retired_at IS NULL", s.D.Time(at), id.UID)
		if err != nil {
			return err
		}
		if n == 0 {
			if _, err := q.Exec(ctx, `INSERT INTO monitor_generations (uid, namespace, name, spec_key, type, claimed_at, retired_at)
 VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (uid) DO NOTHING`,
				id.UID, id.Namespace, id.Name, id.Key, id.Type, s.D.Time(at), s.D.Time(at)); err != nil {
				return err
			}
		}
		inc, err := s.incidents.getOpenIncident(ctx, q, id.UID)
		switch {
		case err == nil:
			if _, err := s.incidents.resolveIncident(ctx, q, inc.ID, later(at, inc.StartedAt), false, retiredNote, nil); err != nil {
				return err
			}
		case !isNotFound(err):
			return err
		}
		_, err = q.Exec(ctx, "UPDATE pause_windows SET resumed_at = ? WHERE monitor_id = ? AND resumed_at IS NULL", s.D.Time(at), id.UID)
		return err
	})
	if err != nil {
		return fmt.Errorf("retire monitor history: %w", err)
	}
	return nil
}

// UnretiredGenerations implements store.Store.
func (s *historyStore) UnretiredGenerations(ctx context.Context) ([]store.MonitorIdentity, error) {
	rows, err := s.B.Reader().Query(ctx, "SELECT uid, namespace, name, spec_key, type FROM monitor_generations WHERE retired_at IS NULL")
	if err != nil {
		return nil, fmt.Errorf("list generations: %w", err)
	}
	defer rows.Close()
	var out []store.MonitorIdentity
	for rows.Next() {
		var g store.MonitorIdentity
		if err := rows.Scan(&g.UID, &g.Namespace, &g.Name, &g.Key, &g.Type); err != nil {
			return nil, fmt.Errorf("scan generation: %w", err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list generations: %w", err)
	}
	return out, nil
}

// PruneRetiredHistory implements store.Store.
func (s *historyStore) PruneRetiredHistory(ctx context.Context, olderThan time.Time) (int64, error) {
	var total int64
	for {
		rows, err := s.B.Reader().Query(ctx, "SELECT uid FROM monitor_generations WHERE retired_at IS NOT NULL AND retired_at < ? LIMIT 100",
			s.D.Time(store.UTC(olderThan)))
		if err != nil {
			return total, fmt.Errorf("list retired generations: %w", err)
		}
		var uids []string
		for rows.Next() {
			var uid string
			if err := rows.Scan(&uid); err != nil {
				rows.Close()
				return total, fmt.Errorf("list retired generations: %w", err)
			}
			uids = append(uids, uid)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return total, fmt.Errorf("list retired generations: %w", err)
		}
		for _, uid := range uids {
			if err := s.checks.DeleteMonitorHistory(ctx, uid); err != nil {
				return total, err
			}
			total++
		}
		if len(uids) < 100 {
			return total, nil
		}
	}
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
