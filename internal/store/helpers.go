package store

// Helpers shared by the backends, so both compute ranges, cursors and pages the
// same way.

import (
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Rollup bucket widths in seconds, largest first.
const (
	StepMinute int64 = 60
	StepHour   int64 = 3600
	StepDay    int64 = 86400
)

// RollupSteps are the rollup bucket widths, largest first.
var RollupSteps = []int64{StepDay, StepHour, StepMinute}

// UTC normalises a timestamp the way the store keeps it: UTC, microseconds.
func UTC(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// Segment is a part of a time range. Step is a rollup width in seconds whose
// whole buckets [From, To) cover the segment, or 0 for a segment read from raw
// checks.
type Segment struct {
	Step     int64
	From, To time.Time
}

// SplitRange covers [from, to) with as few rollup buckets as possible: whole UTC
// days in the middle, then whole hours, whole minutes, and raw-check segments for
// the partial minutes at the edges.
func SplitRange(from, to time.Time) []Segment {
	return splitRange(UTC(from), UTC(to), RollupSteps)
}

func splitRange(from, to time.Time, steps []int64) []Segment {
	if !from.Before(to) {
		return nil
	}
	if len(steps) == 0 {
		return []Segment{{From: from, To: to}}
	}
	step := time.Duration(steps[0]) * time.Second
	lo := from.Truncate(step)
	if lo.Before(from) {
		lo = lo.Add(step)
	}
	hi := to.Truncate(step)
	if !lo.Before(hi) {
		return splitRange(from, to, steps[1:])
	}
	out := splitRange(from, lo, steps[1:])
	out = append(out, Segment{Step: steps[0], From: lo, To: hi})
	return append(out, splitRange(hi, to, steps[1:])...)
}

// Bucket returns the start (unix seconds) of the bucket of width step holding t.
func Bucket(t time.Time, step int64) int64 {
	s := t.Unix()
	b := s - s%step
	if s < 0 && s%step != 0 {
		b -= step
	}
	return b
}

// RollupKey identifies one rollup bucket.
type RollupKey struct {
	MonitorID string
	Region    string
	Step      int64
	Bucket    int64
}

// Rollup is a bucket's increment.
type Rollup struct {
	RollupKey
	Stats
}

// AggregateRollups folds checks into their minute, hour and day buckets, sorted
// by key so concurrent writers lock rows in the same order.
func AggregateRollups(checks []Check) []Rollup {
	m := make(map[RollupKey]*Rollup)
	for i := range checks {
		c := &checks[i]
		for _, step := range RollupSteps {
			k := RollupKey{MonitorID: c.MonitorID, Region: c.Region, Step: step, Bucket: Bucket(c.CheckedAt, step)}
			r := m[k]
			if r == nil {
				r = &Rollup{RollupKey: k}
				m[k] = r
			}
			r.AddCheck(c.Status, c.ResponseTimeMs)
		}
	}
	out := make([]Rollup, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].RollupKey, out[j].RollupKey
		if a.MonitorID != b.MonitorID {
			return a.MonitorID < b.MonitorID
		}
		if a.Region != b.Region {
			return a.Region < b.Region
		}
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		return a.Bucket < b.Bucket
	})
	return out
}

// NormalizeCheck validates a check and normalises its timestamp.
func NormalizeCheck(c *Check) error {
	if c.ID == "" || c.MonitorID == "" {
		return fmt.Errorf("%w: check needs id and monitor_id", ErrInvalid)
	}
	if !c.Status.Valid() {
		return fmt.Errorf("%w: check %s has status %q", ErrInvalid, c.ID, c.Status)
	}
	if c.CheckedAt.IsZero() {
		return fmt.Errorf("%w: check %s has no checked_at", ErrInvalid, c.ID)
	}
	c.CheckedAt = UTC(c.CheckedAt)
	return nil
}

// Limit clamps a requested page size: def when <= 0, at most max.
func Limit(n, def, max int) int {
	if n <= 0 {
		return def
	}
	if n > max {
		return max
	}
	return n
}

// MaxChecksPage is the largest check page a backend returns (CSV export size).
const MaxChecksPage = 50000

// PageChecks cuts a newest-first result of up to limit+1 checks into a page and
// its next cursor. A cursor is a timestamp, so the page never ends between two
// checks with the same checked_at: it is cut before such a group. When the whole
// page shares one timestamp, tie is that timestamp and the caller must return
// every check at it (with nextBefore = tie).
func PageChecks(rows []Check, limit int) (page []Check, nextBefore, tie *time.Time) {
	if len(rows) <= limit {
		return rows, nil, nil
	}
	boundary := rows[limit].CheckedAt
	k := limit
	for k > 0 && rows[k-1].CheckedAt.Equal(boundary) {
		k--
	}
	if k == 0 {
		t := boundary
		return nil, &t, &t
	}
	t := rows[k-1].CheckedAt
	return rows[:k], &t, nil
}

// EncodeTimelineCursor makes the opaque cursor that follows event (at, id).
func EncodeTimelineCursor(at time.Time, id int64) string {
	return strconv.FormatInt(UTC(at).UnixMicro(), 10) + "_" + strconv.FormatInt(id, 10)
}

// DecodeTimelineCursor parses a cursor made by EncodeTimelineCursor.
func DecodeTimelineCursor(s string) (time.Time, int64, error) {
	a, b, ok := strings.Cut(s, "_")
	if !ok {
		return time.Time{}, 0, fmt.Errorf("%w: bad cursor %q", ErrInvalid, s)
	}
	us, err1 := strconv.ParseInt(a, 10, 64)
	id, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, 0, fmt.Errorf("%w: bad cursor %q", ErrInvalid, s)
	}
	return time.UnixMicro(us).UTC(), id, nil
}

// DayRange is one local calendar day, clipped to now.
type DayRange struct {
	Date     string
	From, To time.Time
}

// DailyRanges returns the last days local days in loc ending with today
// (clipped at now), oldest first.
func DailyRanges(now time.Time, days int, loc *time.Location) []DayRange {
	if loc == nil {
		loc = time.UTC
	}
	local := now.In(loc)
	today := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	out := make([]DayRange, 0, days)
	for i := days - 1; i >= 0; i-- {
		start := today.AddDate(0, 0, -i)
		end := today.AddDate(0, 0, -i+1)
		if end.After(now) {
			end = now
		}
		out = append(out, DayRange{Date: start.Format("2006-01-02"), From: start, To: end})
	}
	return out
}

// IncidentPage normalises page and page size (defaults 1 and 25, size at most
// 100) and returns the row offset.
func IncidentPage(q *IncidentQuery) (offset int) {
	if q.Page < 1 {
		q.Page = 1
	}
	q.PageSize = Limit(q.PageSize, 25, 100)
	return (q.Page - 1) * q.PageSize
}

// Migration is one versioned schema migration.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// LoadMigrations reads files named NNNN_name.sql from dir of fsys, sorted by
// version.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: name must be NNNN_name.sql", name)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %q and %q share version %d", prev, name, v)
		}
		seen[v] = name
		b, err := fs.ReadFile(fsys, dir+"/"+name)
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}
