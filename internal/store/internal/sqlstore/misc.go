package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// InsertDeployEvent implements store.Store.
func (s *eventStore) InsertDeployEvent(ctx context.Context, e store.DeployEvent) (store.DeployEvent, error) {
	if e.ServiceName == "" {
		return e, fmt.Errorf("%w: deploy event needs service_name", store.ErrInvalid)
	}
	if e.ID == "" {
		e.ID = uuid.NewString()
	}
	now := s.now()
	if e.CreatedAt.IsZero() {
		e.CreatedAt = now
	}
	if e.DeployedAt.IsZero() {
		e.DeployedAt = now
	}
	e.CreatedAt, e.DeployedAt = store.UTC(e.CreatedAt), store.UTC(e.DeployedAt)
	err := s.B.Write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO deploy_events (id, namespace, service_name, environment, version, source, deployed_at, metadata, created_at)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.ID, e.Namespace, e.ServiceName, e.Environment, e.Version, e.Source,
			s.D.Time(e.DeployedAt), jsonArg(e.Metadata), s.D.Time(e.CreatedAt))
		return err
	})
	if err != nil {
		return e, fmt.Errorf("insert deploy event: %w", err)
	}
	return e, nil
}

// ListDeployEvents implements store.Store.
func (s *eventStore) ListDeployEvents(ctx context.Context, q store.DeployEventQuery) ([]store.DeployEvent, error) {
	where := []string{"1 = 1"}
	var args []any
	if q.Namespace != "" {
		where = append(where, "namespace = ?")
		args = append(args, q.Namespace)
	}
	if q.ServiceName != "" {
		where = append(where, "service_name = ?")
		args = append(args, q.ServiceName)
	}
	if q.From != nil {
		where = append(where, "deployed_at >= ?")
		args = append(args, s.D.Time(store.UTC(*q.From)))
	}
	if q.To != nil {
		where = append(where, "deployed_at < ?")
		args = append(args, s.D.Time(store.UTC(*q.To)))
	}
	args = append(args, store.Limit(q.Limit, 20, 1000))
	rows, err := s.B.Reader().Query(ctx, `SELECT id, namespace, service_name, environment, version, source, deployed_at, metadata, created_at
 FROM deploy_events WHERE `+strings.Join(where, " AND ")+" ORDER BY deployed_at DESC, id DESC LIMIT ?", args...)
	if err != nil {
		return nil, fmt.Errorf("list deploy events: %w", err)
	}
	defer rows.Close()
	out := []store.DeployEvent{}
	for rows.Next() {
		var e store.DeployEvent
		var meta []byte
		if err := rows.Scan(&e.ID, &e.Namespace, &e.ServiceName, &e.Environment, &e.Version, &e.Source,
			s.D.ScanTime(&e.DeployedAt), &meta, s.D.ScanTime(&e.CreatedAt)); err != nil {
			return nil, fmt.Errorf("scan deploy event: %w", err)
		}
		if len(meta) > 0 {
			e.Metadata = json.RawMessage(meta)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list deploy events: %w", err)
	}
	return out, nil
}

func sameAnswers(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// RecordDNS implements store.Store.
func (s *eventStore) RecordDNS(ctx context.Context, r store.DNSRecord) (store.DNSRecord, error) {
	if r.ObservedAt.IsZero() {
		r.ObservedAt = s.now()
	}
	r.ObservedAt = store.UTC(r.ObservedAt)
	if r.Answers == nil {
		r.Answers = []string{}
	}
	err := s.B.Write(ctx, func(q Querier) error {
		var prev []byte
		err := q.QueryRow(ctx, `SELECT answers FROM dns_records WHERE monitor_id = ? AND record_type = ?
 ORDER BY observed_at DESC, id DESC LIMIT 1`, r.MonitorID, r.RecordType).Scan(&prev)
		switch {
		case isNotFound(err):
			r.Changed = false
		case err != nil:
			return fmt.Errorf("read previous dns answer: %w", err)
		default:
			old, err := parseList(prev)
			if err != nil {
				return err
			}
			r.Changed = !sameAnswers(old, r.Answers)
		}
		_, err = q.Exec(ctx, "INSERT INTO dns_records (monitor_id, observed_at, record_type, answers, changed) VALUES (?, ?, ?, ?, ?)",
			r.MonitorID, s.D.Time(r.ObservedAt), r.RecordType, jsonList(r.Answers), r.Changed)
		if err != nil {
			return fmt.Errorf("insert dns record: %w", err)
		}
		return nil
	})
	return r, err
}

// ListDNSRecords implements store.Store.
func (s *eventStore) ListDNSRecords(ctx context.Context, monitorID string, changedOnly bool, limit int) ([]store.DNSRecord, error) {
	where := "monitor_id = ?"
	if changedOnly {
		where += " AND changed"
	}
	rows, err := s.B.Reader().Query(ctx, "SELECT monitor_id, observed_at, record_type, answers, changed FROM dns_records WHERE "+where+
		" ORDER BY observed_at DESC, id DESC LIMIT ?", monitorID, store.Limit(limit, 50, 1000))
	if err != nil {
		return nil, fmt.Errorf("list dns records: %w", err)
	}
	defer rows.Close()
	out := []store.DNSRecord{}
	for rows.Next() {
		var r store.DNSRecord
		var answers []byte
		if err := rows.Scan(&r.MonitorID, s.D.ScanTime(&r.ObservedAt), &r.RecordType, &answers, &r.Changed); err != nil {
			return nil, fmt.Errorf("scan dns record: %w", err)
		}
		if r.Answers, err = parseList(answers); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list dns records: %w", err)
	}
	return out, nil
}

// PauseMonitor implements store.Store.
func (s *eventStore) PauseMonitor(ctx context.Context, monitorID string, at time.Time) error {
	err := s.B.Write(ctx, func(q Querier) error {
		// At most one open window per monitor (unique partial index).
		_, err := q.Exec(ctx, "INSERT INTO pause_windows (monitor_id, paused_at, resumed_at) VALUES (?, ?, NULL) ON CONFLICT DO NOTHING",
			monitorID, s.D.Time(store.UTC(at)))
		return err
	})
	if err != nil {
		return fmt.Errorf("pause monitor: %w", err)
	}
	return nil
}

// ResumeMonitor implements store.Store.
func (s *eventStore) ResumeMonitor(ctx context.Context, monitorID string, at time.Time) error {
	err := s.B.Write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, "UPDATE pause_windows SET resumed_at = ? WHERE monitor_id = ? AND resumed_at IS NULL",
			s.D.Time(store.UTC(at)), monitorID)
		return err
	})
	if err != nil {
		return fmt.Errorf("resume monitor: %w", err)
	}
	return nil
}

// ListPauseWindows implements store.Store.
func (s *eventStore) ListPauseWindows(ctx context.Context, monitorID string, since time.Time) ([]store.PauseWindow, error) {
	rows, err := s.B.Reader().Query(ctx, `SELECT monitor_id, paused_at, resumed_at FROM pause_windows
 WHERE monitor_id = ? AND (resumed_at IS NULL OR resumed_at > ?) ORDER BY paused_at`, monitorID, s.D.Time(store.UTC(since)))
	if err != nil {
		return nil, fmt.Errorf("list pause windows: %w", err)
	}
	defer rows.Close()
	out := []store.PauseWindow{}
	for rows.Next() {
		var w store.PauseWindow
		if err := rows.Scan(&w.MonitorID, s.D.ScanTime(&w.PausedAt), s.D.ScanNullTime(&w.ResumedAt)); err != nil {
			return nil, fmt.Errorf("scan pause window: %w", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list pause windows: %w", err)
	}
	return out, nil
}

// RecordHeartbeat implements store.Store.
func (s *eventStore) RecordHeartbeat(ctx context.Context, p store.HeartbeatPing) error {
	if p.At.IsZero() {
		p.At = s.now()
	}
	var dur, code any
	if p.DurationMs != nil {
		dur = *p.DurationMs
	}
	if p.StatusCode != nil {
		code = int64(*p.StatusCode)
	}
	err := s.B.Write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, "INSERT INTO heartbeats (monitor_id, at, ok, duration_ms, status_code) VALUES (?, ?, ?, ?, ?)",
			p.MonitorID, s.D.Time(store.UTC(p.At)), p.OK, dur, code)
		return err
	})
	if err != nil {
		return fmt.Errorf("record heartbeat: %w", err)
	}
	return nil
}

// ListHeartbeats implements store.Store.
func (s *eventStore) ListHeartbeats(ctx context.Context, monitorID string, limit int) ([]store.HeartbeatPing, error) {
	rows, err := s.B.Reader().Query(ctx, "SELECT monitor_id, at, ok, duration_ms, status_code FROM heartbeats WHERE monitor_id = ? ORDER BY at DESC, id DESC LIMIT ?",
		monitorID, store.Limit(limit, 50, 1000))
	if err != nil {
		return nil, fmt.Errorf("list heartbeats: %w", err)
	}
	defer rows.Close()
	out := []store.HeartbeatPing{}
	for rows.Next() {
		var p store.HeartbeatPing
		var code *int64
		if err := rows.Scan(&p.MonitorID, s.D.ScanTime(&p.At), &p.OK, &p.DurationMs, &code); err != nil {
			return nil, fmt.Errorf("scan heartbeat: %w", err)
		}
		if code != nil {
			v := int(*code)
			p.StatusCode = &v
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list heartbeats: %w", err)
	}
	return out, nil
}

// TouchAPIKey implements store.Store.
func (s *keyStore) TouchAPIKey(ctx context.Context, keyID string, at time.Time) error {
	err := s.B.Write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO api_key_usage (key_id, last_used_at) VALUES (?, ?)
 ON CONFLICT (key_id) DO UPDATE SET last_used_at = CASE WHEN excluded.last_used_at > api_key_usage.last_used_at
 THEN excluded.last_used_at ELSE api_key_usage.last_used_at END`, keyID, s.D.Time(store.UTC(at)))
		return err
	})
	if err != nil {
		return fmt.Errorf("touch api key: %w", err)
	}
	return nil
}

// APIKeyLastUsed implements store.Store.
func (s *keyStore) APIKeyLastUsed(ctx context.Context, keyIDs ...string) (map[string]time.Time, error) {
	out := make(map[string]time.Time, len(keyIDs))
	if len(keyIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(keyIDs))
	for i, k := range keyIDs {
		args[i] = k
	}
	rows, err := s.B.Reader().Query(ctx, "SELECT key_id, last_used_at FROM api_key_usage WHERE key_id IN "+placeholders(len(keyIDs)), args...)
	if err != nil {
		return nil, fmt.Errorf("read api key usage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var t time.Time
		if err := rows.Scan(&k, s.D.ScanTime(&t)); err != nil {
			return nil, fmt.Errorf("scan api key usage: %w", err)
		}
		out[k] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read api key usage: %w", err)
	}
	return out, nil
}

// Ping implements store.Store.
func (s *db) Ping(ctx context.Context) error {
	var one int
	if err := s.B.Reader().QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("store ping: %w", err)
	}
	return nil
}
