package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// UptimeWindows checks Store.UptimeWindows against Store.Uptime over the
// same windows: checks every 7 minutes over 32 days in two regions (some
// down, some blocked), windows ending on several minutes of the day (so
// their pieces split into days, hours and minutes differently), and a
// monitor without checks.
func testUptimeWindows(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	end := time.Date(2026, 11, 26, 14, 37, 0, 0, time.UTC)
	var batch []store.Check
	i := 0
	for at := end.Add(-32 * 24 * time.Hour); at.Before(end.Add(2 * time.Minute)); at = at.Add(7 * time.Minute) {
		status := store.StatusUp
		switch {
		case i%13 == 0:
			status = store.StatusDown
		case i%17 == 0:
			status = store.StatusBlocked
		case i%5 == 0:
			status = store.StatusDegraded
		}
		batch = append(batch, check(m, []string{"eu", "us"}[i%2], at.Add(time.Duration(i%50)*time.Second), status, 100))
		i++
	}
	for lo := 0; lo < len(batch); lo += 1000 {
		_, err := s.InsertChecks(c, batch[lo:min(lo+1000, len(batch))])
		must(t, err)
	}
	windows := []time.Duration{30 * 24 * time.Hour, 7 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute}
	for _, to := range []time.Time{end, end.Add(time.Minute), end.Truncate(time.Hour), end.Truncate(24 * time.Hour), end.Add(-23 * time.Minute)} {
		got, err := s.UptimeWindows(c, m, to, windows...)
		must(t, err)
		for k, w := range windows {
			want, err := s.Uptime(c, m, to.Add(-w), to)
			must(t, err)
			if (got[k] == nil) != (want == nil) || (want != nil && *got[k] != *want) {
				t.Errorf("window %s to %s: %s, Uptime says %s", w, to, show(got[k]), show(want))
			}
		}
	}
	none, err := s.UptimeWindows(c, uuid.NewString(), end, 30*24*time.Hour, 24*time.Hour)
	must(t, err)
	if len(none) != 2 || none[0] != nil || none[1] != nil {
		t.Errorf("a monitor without checks: %v, want two nils", none)
	}
	for _, bad := range [][]time.Duration{{24 * time.Hour, 30 * 24 * time.Hour}, {90 * time.Second}} {
		if _, err := s.UptimeWindows(c, m, end, bad...); err == nil {
			t.Errorf("windows %v: no error", bad)
		}
	}
	if _, err := s.UptimeWindows(c, m, end.Add(time.Second), time.Hour); err == nil {
		t.Error("an end within a minute: no error")
	}
}

func show(p *float64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}
