package store

import (
	"fmt"
	"time"
)

// UptimeWindowEnd is where the uptime windows of a monitor's REST answer
// (GET /monitors/:id: the last 24 hours and 30 days) end at now: the end
// of the current UTC minute. Windows of whole minutes are sums of rollup
// buckets, so their uptime changes only when a result of the monitor is
// stored, its history is deleted or pruned, or the minute turns, and an
// answer computed once is exact until one of those happens. Checks of the
// current minute are in; the oldest partial minute is out.
func UptimeWindowEnd(now time.Time) time.Time {
	return UTC(now).Truncate(time.Minute).Add(time.Minute)
}

// UptimeWindowPieces splits the nested windows [to-windows[i], to) into
// disjoint pieces of rollup buckets: piece k covers [to-windows[k],
// to-windows[k+1]) (the last one ends at to) with windows sorted longest
// first, so window i is the sum of pieces i and after, and a bucket starts
// in piece k when its start is at least to-windows[k] and before the next
// piece's start. to and every window must be whole minutes.
func UptimeWindowPieces(to time.Time, windows []time.Duration) (starts []time.Time, segs []Segment, err error) {
	to = UTC(to)
	if !to.Equal(to.Truncate(time.Minute)) {
		return nil, nil, fmt.Errorf("%w: uptime windows must end on a whole minute, not %s", ErrInvalid, to)
	}
	for i, w := range windows {
		if w <= 0 || w%time.Minute != 0 {
			return nil, nil, fmt.Errorf("%w: uptime window %s is not a positive number of whole minutes", ErrInvalid, w)
		}
		if i > 0 && w >= windows[i-1] {
			return nil, nil, fmt.Errorf("%w: uptime windows must be sorted longest first", ErrInvalid)
		}
	}
	for i, w := range windows {
		from, end := to.Add(-w), to
		if i+1 < len(windows) {
			end = to.Add(-windows[i+1])
		}
		starts = append(starts, from)
		segs = append(segs, SplitRange(from, end)...)
	}
	return starts, segs, nil
}
