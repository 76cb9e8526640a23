package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// UptimeWindows implements store.Store: one query sums the rollup buckets
// of every piece of the nested windows (store.UptimeWindowPieces), grouped
// by piece; window i is the sum of pieces i and after. The steps are
// literals in the statement, so it has a few shapes that stay prepared.
func (s *checkStore) UptimeWindows(ctx context.Context, monitorID string, to time.Time, windows ...time.Duration) ([]*float64, error) {
	starts, segs, err := store.UptimeWindowPieces(to, windows)
	if err != nil {
		return nil, err
	}
	out := make([]*float64, len(windows))
	if len(windows) == 0 {
		return out, nil
	}
	var sb strings.Builder
	args := make([]any, 0, len(starts)+1+2*len(segs))
	sb.WriteString("SELECT CASE")
	for k := len(starts) - 1; k >= 1; k-- {
		sb.WriteString(" WHEN bucket >= ? THEN ")
		sb.WriteString(strconv.Itoa(k))
		args = append(args, starts[k].Unix())
	}
	sb.WriteString(` ELSE 0 END AS piece, CAST(coalesce(sum(up + degraded), 0) AS BIGINT), CAST(coalesce(sum(down), 0) AS BIGINT)
 FROM ` + s.D.rollupsRead() + ` WHERE monitor_id = ? AND (`)
	args = append(args, monitorID)
	for i, sg := range segs {
		if i > 0 {
			sb.WriteString(" OR ")
		}
		sb.WriteString("(step = ")
		sb.WriteString(strconv.FormatInt(sg.Step, 10))
		sb.WriteString(" AND bucket >= ? AND bucket < ?)")
		args = append(args, sg.From.Unix(), sg.To.Unix())
	}
	sb.WriteString(") GROUP BY piece")
	rows, err := s.B.Reader().Query(ctx, sb.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("sum uptime windows: %w", err)
	}
	defer rows.Close()
	good := make([]int64, len(windows))
	bad := make([]int64, len(windows))
	for rows.Next() {
		var piece int
		var g, b int64
		if err := rows.Scan(&piece, &g, &b); err != nil {
			return nil, fmt.Errorf("sum uptime windows: %w", err)
		}
		// Piece k is in windows 0..k (the longer ones reach back further).
		for i := 0; i <= piece && i < len(windows); i++ {
			good[i] += g
			bad[i] += b
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sum uptime windows: %w", err)
	}
	for i := range windows {
		out[i] = store.Stats{Up: good[i], Down: bad[i]}.UptimePercent()
	}
	return out, nil
}
