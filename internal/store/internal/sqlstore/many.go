package sqlstore

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// manyChunk bounds the monitor ids of one IN list.
const manyChunk = 500

// UptimeDailyMany implements store.Store.
func (s *checkStore) UptimeDailyMany(ctx context.Context, monitorIDs []string, days int, loc *time.Location) (map[string][]store.DailyUptime, error) {
	out := make(map[string][]store.DailyUptime, len(monitorIDs))
	if days <= 0 {
		for _, id := range monitorIDs {
			out[id] = []store.DailyUptime{}
		}
		return out, nil
	}
	ranges := store.DailyRanges(s.now(), days, loc)
	stats, err := s.statsMany(ctx, monitorIDs, ranges)
	if err != nil {
		return nil, err
	}
	for _, id := range monitorIDs {
		st := stats[id]
		list := make([]store.DailyUptime, len(ranges))
		for i, d := range ranges {
			list[i] = store.DailyUptime{Date: d.Date, Start: d.From, Stats: st[i], UptimePercent: st[i].UptimePercent()}
		}
		out[id] = list
	}
	return out, nil
}

// StatsMany implements store.Store.
func (s *checkStore) StatsMany(ctx context.Context, monitorIDs []string, from, to time.Time) (map[string]store.Stats, error) {
	stats, err := s.statsMany(ctx, monitorIDs, []store.DayRange{{From: store.UTC(from), To: store.UTC(to)}})
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.Stats, len(monitorIDs))
	for _, id := range monitorIDs {
		out[id] = stats[id][0]
	}
	return out, nil
}

// statsMany aggregates the checks of many monitors over consecutive,
// non-overlapping ranges (sorted by From): per chunk of monitors, one rollup
// query per run of same-width buckets and one raw query per partial minute. Each id maps to one Stats
// per range.
func (s *checkStore) statsMany(ctx context.Context, monitorIDs []string, ranges []store.DayRange) (map[string][]store.Stats, error) {
	out := make(map[string][]store.Stats, len(monitorIDs))
	for _, id := range monitorIDs {
		if _, ok := out[id]; !ok {
			out[id] = make([]store.Stats, len(ranges))
		}
	}
	if len(out) == 0 || len(ranges) == 0 {
		return out, nil
	}
	// The segments of every range, with the rollup ones merged where they
	// touch: every bucket the merged spans return lies in one segment of its
	// step, so it belongs to exactly one range.
	type span struct {
		step     int64
		from, to time.Time
	}
	var roll, raw []span
	for _, r := range ranges {
		for _, sg := range store.SplitRange(r.From, r.To) {
			sp := span{sg.Step, sg.From, sg.To}
			if sg.Step == 0 {
				raw = append(raw, sp)
				continue
			}
			roll = append(roll, sp)
		}
	}
	sort.SliceStable(roll, func(i, j int) bool {
		if roll[i].step != roll[j].step {
			return roll[i].step > roll[j].step
		}
		return roll[i].from.Before(roll[j].from)
	})
	var merged []span
	for _, sp := range roll {
		if n := len(merged); n > 0 && merged[n-1].step == sp.step && merged[n-1].to.Equal(sp.from) {
			merged[n-1].to = sp.to
			continue
		}
		merged = append(merged, sp)
	}
	// rangeOf finds the range holding t.
	rangeOf := func(t time.Time) int {
		i := sort.Search(len(ranges), func(i int) bool { return ranges[i].To.After(t) })
		if i == len(ranges) || t.Before(ranges[i].From) {
			return -1
		}
		return i
	}
	ids := make([]string, 0, len(out))
	for id := range out {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	r := s.B.Reader()
	for start := 0; start < len(ids); start += manyChunk {
		chunk := ids[start:min(start+manyChunk, len(ids))]
		idArgs := make([]any, len(chunk))
		for i, id := range chunk {
			idArgs[i] = id
		}
		// One query per span: (monitor_id, step, bucket) leads the rollup
		// key, so each is an index range per monitor.
		// With a single range every bucket belongs to it: the database sums
		// them, returning one row per monitor instead of one per bucket.
		bucketCol, groupBy := "bucket", "monitor_id, bucket"
		if len(ranges) == 1 {
			bucketCol, groupBy = "min(bucket)", "monitor_id"
		}
		for _, sp := range merged {
			args := append(append([]any{}, idArgs...), sp.step, sp.from.Unix(), sp.to.Unix())
			rows, err := r.Query(ctx, `SELECT monitor_id, `+bucketCol+`,
 CAST(sum(up) AS BIGINT), CAST(sum(down) AS BIGINT), CAST(sum(degraded) AS BIGINT), CAST(sum(blocked) AS BIGINT), CAST(sum(unknown) AS BIGINT),
 CAST(sum(rt_sum) AS BIGINT), min(rt_min), max(rt_max)
 FROM `+s.D.rollupsRead()+` WHERE monitor_id IN `+placeholders(len(chunk))+` AND step = ? AND bucket >= ? AND bucket < ?
 GROUP BY `+groupBy, args...)
			if err != nil {
				return nil, fmt.Errorf("sum rollups of many monitors: %w", err)
			}
			for rows.Next() {
				var id string
				var bucket int64
				var st store.Stats
				if err := rows.Scan(&id, &bucket, &st.Up, &st.Down, &st.Degraded, &st.Blocked, &st.Unknown,
					&st.ResponseSumMs, &st.ResponseMinMs, &st.ResponseMaxMs); err != nil {
					rows.Close()
					return nil, fmt.Errorf("scan rollups of many monitors: %w", err)
				}
				if i := rangeOf(time.Unix(bucket, 0).UTC()); i >= 0 {
					out[id][i].Add(st)
				}
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return nil, fmt.Errorf("sum rollups of many monitors: %w", err)
			}
		}
		for _, sp := range raw {
			i := rangeOf(sp.from)
			if i < 0 {
				continue
			}
			args := append(append([]any{}, idArgs...), s.D.Time(sp.from), s.D.Time(sp.to))
			rows, err := r.Query(ctx, `SELECT monitor_id, status, count(*), CAST(coalesce(sum(response_time_ms),0) AS BIGINT), min(response_time_ms), max(response_time_ms)
 FROM checks WHERE monitor_id IN `+placeholders(len(chunk))+` AND checked_at >= ? AND checked_at < ? GROUP BY monitor_id, status`, args...)
			if err != nil {
				return nil, fmt.Errorf("sum checks of many monitors: %w", err)
			}
			for rows.Next() {
				var id, status string
				var n, sum int64
				var mn, mx *int64
				if err := rows.Scan(&id, &status, &n, &sum, &mn, &mx); err != nil {
					rows.Close()
					return nil, fmt.Errorf("scan checks of many monitors: %w", err)
				}
				out[id][i].Add(statusStats(status, n, sum, mn, mx))
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return nil, fmt.Errorf("sum checks of many monitors: %w", err)
			}
		}
	}
	return out, nil
}
