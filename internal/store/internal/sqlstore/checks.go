package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// jsonArg encodes an optional JSON document parameter.
func jsonArg(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

func jsonList(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func parseList(b []byte) ([]string, error) {
	out := []string{}
	if len(b) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode list: %w", err)
	}
	return out, nil
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullTime encodes an optional timestamp parameter.
func (s *db) nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return s.D.Time(store.UTC(*t))
}

// placeholders returns "(?,?,...)" with n marks.
func placeholders(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
}

// PrepareChecks validates and normalises a batch and drops duplicate ids,
// keeping the first.
func PrepareChecks(checks []store.Check) ([]store.Check, error) {
	seen := make(map[string]struct{}, len(checks))
	out := make([]store.Check, 0, len(checks))
	for _, c := range checks {
		if err := store.NormalizeCheck(&c); err != nil {
			return nil, err
		}
		if _, dup := seen[c.ID]; dup {
			continue
		}
		seen[c.ID] = struct{}{}
		out = append(out, c)
	}
	return out, nil
}

const checkCols = "id, monitor_id, namespace, region, checked_at, status, status_code, response_time_ms, error_type, error_message, details"

// checkArgs appends the parameters of one check in checkCols order.
func (s *checkStore) checkArgs(args []any, c *store.Check) []any {
	var code any
	if c.StatusCode != nil {
		code = int64(*c.StatusCode)
	}
	return append(args, c.ID, c.MonitorID, c.Namespace, c.Region, s.D.Time(c.CheckedAt), string(c.Status),
		code, c.ResponseTimeMs, nullStr(c.ErrorType), nullStr(c.ErrorMessage), jsonArg(c.Details))
}

// InsertChecks is the portable ingest: multi-row INSERT ... ON CONFLICT DO
// NOTHING RETURNING id, then rollup upserts of the rows that were new.
func (s *checkStore) InsertChecks(ctx context.Context, checks []store.Check) (int, error) {
	batch, err := PrepareChecks(checks)
	if err != nil {
		return 0, err
	}
	if len(batch) == 0 {
		return 0, nil
	}
	inserted := 0
	err = s.B.Write(ctx, func(q Querier) error {
		inserted = 0
		byID := make(map[string]int, len(batch))
		for i := range batch {
			byID[batch[i].ID] = i
		}
		var fresh []store.Check
		const chunk = 500
		row := placeholders(11)
		for lo := 0; lo < len(batch); lo += chunk {
			hi := min(lo+chunk, len(batch))
			var sb strings.Builder
			sb.WriteString("INSERT INTO checks (" + checkCols + ") VALUES ")
			args := make([]any, 0, (hi-lo)*11)
			for i := lo; i < hi; i++ {
				if i > lo {
					sb.WriteByte(',')
				}
				sb.WriteString(row)
				args = s.checkArgs(args, &batch[i])
			}
			sb.WriteString(" ON CONFLICT (id) DO NOTHING RETURNING id")
			rows, err := q.Query(ctx, sb.String(), args...)
			if err != nil {
				return fmt.Errorf("insert checks: %w", err)
			}
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return fmt.Errorf("insert checks: %w", err)
				}
				fresh = append(fresh, batch[byID[id]])
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("insert checks: %w", err)
			}
		}
		inserted = len(fresh)
		if err := s.insertScreenshots(ctx, q, batch); err != nil {
			return err
		}
		return UpsertRollups(ctx, q, store.AggregateRollups(fresh))
	})
	if err != nil {
		return 0, err
	}
	return inserted, nil
}

// insertScreenshots stores the screenshots of checks, once per check id
// (a retried batch stores nothing twice); one larger than
// store.MaxScreenshotBytes is left out.
func (s *checkStore) insertScreenshots(ctx context.Context, q Querier, checks []store.Check) error {
	for i := range checks {
		c := &checks[i]
		if len(c.Screenshot) == 0 || len(c.Screenshot) > store.MaxScreenshotBytes {
			continue
		}
		if _, err := q.Exec(ctx, `INSERT INTO check_screenshots (check_id, monitor_id, checked_at, image) VALUES (?, ?, ?, ?)
 ON CONFLICT (check_id) DO NOTHING`, c.ID, c.MonitorID, s.D.Time(c.CheckedAt), c.Screenshot); err != nil {
			return fmt.Errorf("insert check screenshot: %w", err)
		}
	}
	return nil
}

// InsertScreenshots stores the screenshots of checks in a transaction of
// its own (for a backend whose ingest writes checks another way).
func (s *checkStore) InsertScreenshots(ctx context.Context, checks []store.Check) error {
	has := false
	for i := range checks {
		has = has || len(checks[i].Screenshot) > 0
	}
	if !has {
		return nil
	}
	return s.B.Write(ctx, func(q Querier) error { return s.insertScreenshots(ctx, q, checks) })
}

// CheckScreenshot implements store.Store.
func (s *checkStore) CheckScreenshot(ctx context.Context, monitorID, checkID string) ([]byte, error) {
	var img []byte
	err := s.B.Reader().QueryRow(ctx, `SELECT image FROM check_screenshots WHERE check_id = ? AND monitor_id = ?`, checkID, monitorID).Scan(&img)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("read check screenshot: %w", err)
	}
	return img, nil
}

// RollupUpsertConflict is the ON CONFLICT clause that merges a bucket increment
// (the excluded row) into an existing rollup bucket.
const RollupUpsertConflict = ` ON CONFLICT (monitor_id, step, bucket, region) DO UPDATE SET
 up = rollups.up + excluded.up,
 down = rollups.down + excluded.down,
 degraded = rollups.degraded + excluded.degraded,
 blocked = rollups.blocked + excluded.blocked,
 unknown = rollups.unknown + excluded.unknown,
 rt_sum = rollups.rt_sum + excluded.rt_sum,
 rt_min = CASE WHEN rollups.rt_min IS NULL OR excluded.rt_min < rollups.rt_min THEN excluded.rt_min ELSE rollups.rt_min END,
 rt_max = CASE WHEN rollups.rt_max IS NULL OR excluded.rt_max > rollups.rt_max THEN excluded.rt_max ELSE rollups.rt_max END`

// UpsertRollups adds increments to their buckets.
func UpsertRollups(ctx context.Context, q Querier, rs []store.Rollup) error {
	const chunk = 500
	row := placeholders(12)
	for lo := 0; lo < len(rs); lo += chunk {
		hi := min(lo+chunk, len(rs))
		var sb strings.Builder
		sb.WriteString("INSERT INTO rollups (monitor_id, region, step, bucket, up, down, degraded, blocked, unknown, rt_sum, rt_min, rt_max) VALUES ")
		args := make([]any, 0, (hi-lo)*12)
		for i := lo; i < hi; i++ {
			if i > lo {
				sb.WriteByte(',')
			}
			sb.WriteString(row)
			r := &rs[i]
			var mn, mx any
			if r.ResponseMinMs != nil {
				mn = *r.ResponseMinMs
			}
			if r.ResponseMaxMs != nil {
				mx = *r.ResponseMaxMs
			}
			args = append(args, r.MonitorID, r.Region, r.Step, r.Bucket, r.Up, r.Down, r.Degraded, r.Blocked, r.Unknown, r.ResponseSumMs, mn, mx)
		}
		sb.WriteString(RollupUpsertConflict)
		if _, err := q.Exec(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("upsert rollups: %w", err)
		}
	}
	return nil
}

func (s *checkStore) scanCheck(r interface{ Scan(...any) error }) (store.Check, error) {
	var c store.Check
	var codeP *int64
	var typeP, msgP *string
	var status string
	var details []byte
	if err := r.Scan(&c.ID, &c.MonitorID, &c.Namespace, &c.Region, s.D.ScanTime(&c.CheckedAt), &status,
		&codeP, &c.ResponseTimeMs, &typeP, &msgP, &details); err != nil {
		return c, err
	}
	c.Status = store.CheckStatus(status)
	if codeP != nil {
		v := int(*codeP)
		c.StatusCode = &v
	}
	if typeP != nil {
		c.ErrorType = *typeP
	}
	if msgP != nil {
		c.ErrorMessage = *msgP
	}
	if len(details) > 0 {
		c.Details = json.RawMessage(details)
	}
	return c, nil
}

func (s *checkStore) queryChecks(ctx context.Context, sql string, args ...any) ([]store.Check, error) {
	return s.queryChecksIn(ctx, s.B.Reader(), sql, args...)
}

func (s *checkStore) queryChecksIn(ctx context.Context, q Querier, sql string, args ...any) ([]store.Check, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("query checks: %w", err)
	}
	defer rows.Close()
	var out []store.Check
	for rows.Next() {
		c, err := s.scanCheck(rows)
		if err != nil {
			return nil, fmt.Errorf("scan check: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query checks: %w", err)
	}
	return out, nil
}

// ListChecks implements store.Store.
func (s *checkStore) ListChecks(ctx context.Context, q store.ChecksQuery) ([]store.Check, *time.Time, error) {
	limit := store.Limit(q.Limit, 50, store.MaxChecksPage)
	where := []string{"monitor_id = ?"}
	args := []any{q.MonitorID}
	if q.Before != nil {
		where = append(where, "checked_at < ?")
		args = append(args, s.D.Time(store.UTC(*q.Before)))
	}
	if q.From != nil {
		where = append(where, "checked_at >= ?")
		args = append(args, s.D.Time(store.UTC(*q.From)))
	}
	if q.To != nil {
		where = append(where, "checked_at < ?")
		args = append(args, s.D.Time(store.UTC(*q.To)))
	}
	if q.Region != "" {
		where = append(where, "region = ?")
		args = append(args, q.Region)
	}
	switch {
	case q.Status == store.StatusProblem:
		where = append(where, "status <> 'up'")
	case q.Status != "":
		if !q.Status.Valid() {
			return nil, nil, fmt.Errorf("%w: status %q", store.ErrInvalid, q.Status)
		}
		where = append(where, "status = ?")
		args = append(args, string(q.Status))
	}
	base := "SELECT " + checkCols + " FROM checks WHERE " + strings.Join(where, " AND ")
	rows, err := s.queryChecks(ctx, base+" ORDER BY checked_at DESC, id DESC LIMIT ?", append(args, limit+1)...)
	if err != nil {
		return nil, nil, err
	}
	page, next, tie := store.PageChecks(rows, limit)
	if tie != nil {
		page, err = s.queryChecks(ctx, base+" AND checked_at = ? ORDER BY id DESC", append(args, s.D.Time(*tie))...)
		if err != nil {
			return nil, nil, err
		}
	}
	if page == nil {
		page = []store.Check{}
	}
	return page, next, nil
}

// LatestChecks implements store.Store.
func (s *checkStore) LatestChecks(ctx context.Context, monitorID string) ([]store.Check, error) {
	rows, err := s.B.Reader().Query(ctx, "SELECT DISTINCT region FROM checks WHERE monitor_id = ? ORDER BY region", monitorID)
	if err != nil {
		return nil, fmt.Errorf("list regions: %w", err)
	}
	var regions []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list regions: %w", err)
		}
		regions = append(regions, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list regions: %w", err)
	}
	out := []store.Check{}
	for _, r := range regions {
		cs, err := s.queryChecks(ctx, "SELECT "+checkCols+" FROM checks WHERE monitor_id = ? AND region = ? ORDER BY checked_at DESC, id DESC LIMIT 1", monitorID, r)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// Stats implements store.Store: whole buckets from the rollups, partial
// minutes from the raw checks.
func (s *checkStore) Stats(ctx context.Context, q store.StatsQuery) (store.Stats, error) {
	var st store.Stats
	segs := store.SplitRange(q.From, q.To)
	var roll, raw []string
	var rollArgs, rawArgs []any
	for _, sg := range segs {
		if sg.Step == 0 {
			raw = append(raw, "(checked_at >= ? AND checked_at < ?)")
			rawArgs = append(rawArgs, s.D.Time(sg.From), s.D.Time(sg.To))
			continue
		}
		roll = append(roll, "(step = ? AND bucket >= ? AND bucket < ?)")
		rollArgs = append(rollArgs, sg.Step, sg.From.Unix(), sg.To.Unix())
	}
	region := ""
	if q.Region != "" {
		region = " AND region = ?"
	}
	r := s.B.Reader()
	if len(roll) > 0 {
		args := []any{q.MonitorID}
		if q.Region != "" {
			args = append(args, q.Region)
		}
		args = append(args, rollArgs...)
		var mn, mx *int64
		err := r.QueryRow(ctx, `SELECT CAST(coalesce(sum(up),0) AS BIGINT), CAST(coalesce(sum(down),0) AS BIGINT),
 CAST(coalesce(sum(degraded),0) AS BIGINT), CAST(coalesce(sum(blocked),0) AS BIGINT), CAST(coalesce(sum(unknown),0) AS BIGINT),
 CAST(coalesce(sum(rt_sum),0) AS BIGINT), min(rt_min), max(rt_max)
 FROM `+s.D.rollupsRead()+` WHERE monitor_id = ?`+region+` AND (`+strings.Join(roll, " OR ")+`)`, args...).
			Scan(&st.Up, &st.Down, &st.Degraded, &st.Blocked, &st.Unknown, &st.ResponseSumMs, &mn, &mx)
		if err != nil {
			return st, fmt.Errorf("sum rollups: %w", err)
		}
		st.ResponseMinMs, st.ResponseMaxMs = mn, mx
	}
	if len(raw) > 0 {
		args := []any{q.MonitorID}
		if q.Region != "" {
			args = append(args, q.Region)
		}
		args = append(args, rawArgs...)
		rows, err := r.Query(ctx, `SELECT status, count(*), CAST(coalesce(sum(response_time_ms),0) AS BIGINT), min(response_time_ms), max(response_time_ms)
 FROM checks WHERE monitor_id = ?`+region+` AND (`+strings.Join(raw, " OR ")+`) GROUP BY status`, args...)
		if err != nil {
			return st, fmt.Errorf("sum checks: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var status string
			var n, sum int64
			var mn, mx *int64
			if err := rows.Scan(&status, &n, &sum, &mn, &mx); err != nil {
				return st, fmt.Errorf("sum checks: %w", err)
			}
			st.Add(statusStats(status, n, sum, mn, mx))
		}
		if err := rows.Err(); err != nil {
			return st, fmt.Errorf("sum checks: %w", err)
		}
	}
	return st, nil
}

// statusStats is the Stats of n raw checks of one status whose response times
// sum to sum and range from mn to mx.
func statusStats(status string, n, sum int64, mn, mx *int64) store.Stats {
	part := store.Stats{}
	switch store.CheckStatus(status) {
	case store.StatusUp:
		part.Up = n
	case store.StatusDown:
		part.Down = n
	case store.StatusDegraded:
		part.Degraded = n
	case store.StatusBlocked:
		part.Blocked = n
	default:
		part.Unknown = n
	}
	if status == string(store.StatusUp) || status == string(store.StatusDegraded) {
		part.ResponseSumMs, part.ResponseMinMs, part.ResponseMaxMs = sum, mn, mx
	}
	return part
}

// Uptime implements store.Store.
func (s *checkStore) Uptime(ctx context.Context, monitorID string, from, to time.Time) (*float64, error) {
	st, err := s.Stats(ctx, store.StatsQuery{MonitorID: monitorID, From: from, To: to})
	if err != nil {
		return nil, err
	}
	return st.UptimePercent(), nil
}

// UptimeDaily implements store.Store.
func (s *checkStore) UptimeDaily(ctx context.Context, monitorID string, days int, loc *time.Location) ([]store.DailyUptime, error) {
	if days <= 0 {
		return []store.DailyUptime{}, nil
	}
	ranges := store.DailyRanges(s.now(), days, loc)
	out := make([]store.DailyUptime, 0, len(ranges))
	for _, d := range ranges {
		st, err := s.Stats(ctx, store.StatsQuery{MonitorID: monitorID, From: d.From, To: d.To})
		if err != nil {
			return nil, err
		}
		out = append(out, store.DailyUptime{Date: d.Date, Start: d.From, Stats: st, UptimePercent: st.UptimePercent()})
	}
	return out, nil
}

// ResponseSeries implements store.Store.
func (s *checkStore) ResponseSeries(ctx context.Context, q store.SeriesQuery) ([]store.SeriesPoint, error) {
	stepSec := int64(q.Step / time.Second)
	if stepSec <= 0 || stepSec%store.StepMinute != 0 {
		return nil, fmt.Errorf("%w: series step %s is not a multiple of one minute", store.ErrInvalid, q.Step)
	}
	from := store.Bucket(q.From, store.StepMinute)
	to := q.To.Unix()
	gran := store.StepMinute
	for _, g := range store.RollupSteps {
		if stepSec%g == 0 && from%g == 0 {
			gran = g
			break
		}
	}
	args := []any{from, stepSec, q.MonitorID, gran, from, to}
	region := ""
	if q.Region != "" {
		region = " AND region = ?"
		args = append(args, q.Region)
	}
	rows, err := s.B.Reader().Query(ctx, `SELECT (bucket - ?) / ? AS k,
 CAST(sum(up) AS BIGINT), CAST(sum(down) AS BIGINT), CAST(sum(degraded) AS BIGINT), CAST(sum(blocked) AS BIGINT), CAST(sum(unknown) AS BIGINT),
 CAST(sum(rt_sum) AS BIGINT), min(rt_min), max(rt_max)
 FROM `+s.D.rollupsRead()+` WHERE monitor_id = ? AND step = ? AND bucket >= ? AND bucket < ?`+region+`
 GROUP BY k ORDER BY k`, args...)
	if err != nil {
		return nil, fmt.Errorf("query series: %w", err)
	}
	defer rows.Close()
	out := []store.SeriesPoint{}
	for rows.Next() {
		var k int64
		var p store.SeriesPoint
		if err := rows.Scan(&k, &p.Stats.Up, &p.Stats.Down, &p.Stats.Degraded, &p.Stats.Blocked, &p.Stats.Unknown,
			&p.Stats.ResponseSumMs, &p.Stats.ResponseMinMs, &p.Stats.ResponseMaxMs); err != nil {
			return nil, fmt.Errorf("scan series: %w", err)
		}
		p.At = time.Unix(from+k*stepSec, 0).UTC()
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query series: %w", err)
	}
	return out, nil
}

// PruneChecks implements store.Store. Each chunk is its own short transaction.
func (s *checkStore) PruneChecks(ctx context.Context, olderThan time.Time, chunkSize int) (int64, error) {
	chunkSize = store.Limit(chunkSize, 5000, 100000)
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		var n int64
		err := s.B.Write(ctx, func(q Querier) error {
			var err error
			n, err = q.Exec(ctx, `DELETE FROM checks WHERE id IN (SELECT id FROM checks WHERE checked_at < ? LIMIT ?)`,
				s.D.Time(store.UTC(olderThan)), chunkSize)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("prune checks: %w", err)
		}
		total += n
		if n < int64(chunkSize) {
			// Screenshots go with their checks (their count is not the
			// checks').
			err := s.B.Write(ctx, func(q Querier) error {
				_, err := q.Exec(ctx, `DELETE FROM check_screenshots WHERE checked_at < ?`, s.D.Time(store.UTC(olderThan)))
				return err
			})
			if err != nil {
				return total, fmt.Errorf("prune check screenshots: %w", err)
			}
			return total, nil
		}
	}
}

// PruneRollups implements store.Store.
func (s *checkStore) PruneRollups(ctx context.Context, step time.Duration, olderThan time.Time) (int64, error) {
	sec := int64(step / time.Second)
	if sec != store.StepMinute && sec != store.StepHour && sec != store.StepDay {
		return 0, fmt.Errorf("%w: rollup step %s", store.ErrInvalid, step)
	}
	var n int64
	err := s.B.Write(ctx, func(q Querier) error {
		var err error
		n, err = q.Exec(ctx, "DELETE FROM rollups WHERE step = ? AND bucket < ?", sec, olderThan.Unix())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune rollups: %w", err)
	}
	return n, nil
}

// historyDeletes returns the statements deleting a monitor's rows (one
// placeholder, the monitor id): the given ones, then its rollups in every
// table that holds them.
func (s *checkStore) historyDeletes(stmts ...string) []string {
	for _, t := range s.D.rollupTables() {
		stmts = append(stmts, "DELETE FROM "+t+" WHERE monitor_id = ?")
	}
	return stmts
}

// ResetStats implements store.Store.
func (s *checkStore) ResetStats(ctx context.Context, monitorID string) error {
	err := s.B.Write(ctx, func(q Querier) error {
		for _, stmt := range s.historyDeletes("DELETE FROM checks WHERE monitor_id = ?", "DELETE FROM check_screenshots WHERE monitor_id = ?") {
			if _, err := q.Exec(ctx, stmt, monitorID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reset stats: %w", err)
	}
	return nil
}

// DeleteMonitorHistory implements store.Store.
func (s *checkStore) DeleteMonitorHistory(ctx context.Context, monitorID string) error {
	err := s.B.Write(ctx, func(q Querier) error {
		for _, stmt := range s.historyDeletes(
			// The generation record first: a concurrent adoption of the
			// same history waits on it (store.GenerationStore).
			"DELETE FROM monitor_generations WHERE uid = ?",
			"DELETE FROM checks WHERE monitor_id = ?",
			"DELETE FROM check_screenshots WHERE monitor_id = ?",
			"DELETE FROM incidents WHERE monitor_id = ?", // events, notes and AI content cascade
			"DELETE FROM dns_records WHERE monitor_id = ?",
			"DELETE FROM pause_windows WHERE monitor_id = ?",
			"DELETE FROM heartbeats WHERE monitor_id = ?",
			"DELETE FROM cert_observations WHERE monitor_id = ?",
			"DELETE FROM expiry_notices WHERE monitor_id = ?",
			"DELETE FROM monitor_judgements WHERE monitor_id = ?",
		) {
			if _, err := q.Exec(ctx, stmt, monitorID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete monitor history: %w", err)
	}
	return nil
}

// LatencyStats implements store.Store.
func (s *checkStore) LatencyStats(ctx context.Context, monitorID string, from, to time.Time, thresholdMs int64) (int64, int64, error) {
	var good, total int64
	err := s.B.Reader().QueryRow(ctx, `SELECT
 CAST(coalesce(sum(CASE WHEN status IN ('up','degraded') AND response_time_ms <= ? THEN 1 ELSE 0 END),0) AS BIGINT),
 CAST(count(*) AS BIGINT)
 FROM checks WHERE monitor_id = ? AND checked_at >= ? AND checked_at < ? AND status IN ('up','degraded','down')`,
		thresholdMs, monitorID, s.D.Time(from), s.D.Time(to)).Scan(&good, &total)
	if err != nil {
		return 0, 0, fmt.Errorf("count latency: %w", err)
	}
	return good, total, nil
}
