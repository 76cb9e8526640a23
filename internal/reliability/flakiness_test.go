package reliability

import (
	"strconv"
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func TestFlakiness(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	from := now.Add(-7 * 24 * time.Hour)
	series := func(region string, n int, down func(i int) bool) []Check {
		var out []Check
		for i := range n {
			st := monv1.StatusUp
			if down(i) {
				st = monv1.StatusDown
			}
			out = append(out, Check{Region: region, At: now.Add(-time.Duration(i+1) * time.Hour), Status: st})
		}
		return out
	}
	never := func(int) bool { return false }
	resolved := func(start time.Time, d time.Duration) Incident {
		end := start.Add(d)
		return Incident{StartedAt: start, ResolvedAt: &end}
	}
	for _, tc := range []struct {
		name                  string
		checks                []Check
		incidents             []Incident
		wantScore             *int
		wantFlips, wantUnconf int
		wantShort             int
		wantLevel             string
	}{
		{name: "no data", wantLevel: "unknown"},
		{name: "steady", checks: series("eu-1", 100, never), wantScore: ptr(0), wantLevel: "stable"},
		{name: "blocked checks are ignored", checks: append(series("eu-1", 10, never),
			Check{Region: "eu-1", At: now.Add(-90 * time.Minute), Status: monv1.StatusBlocked}), wantScore: ptr(0), wantLevel: "stable"},
		{name: "one unconfirmed blip", checks: series("eu-1", 100, func(i int) bool { return i == 50 }),
			wantFlips: 2, wantUnconf: 1, wantScore: ptr(5), wantLevel: "stable"},
		{name: "a confirmed outage is not unconfirmed", checks: series("eu-1", 100, func(i int) bool { return i == 50 }),
			incidents: []Incident{resolved(now.Add(-52*time.Hour), 3*time.Hour)}, wantFlips: 2, wantScore: ptr(3), wantLevel: "stable"},
		{name: "saturated", checks: series("eu-1", 168, func(i int) bool { return i%2 == 0 }),
			incidents: []Incident{resolved(now.Add(-200*time.Hour), time.Minute), resolved(now.Add(-5*time.Hour), time.Minute),
				resolved(now.Add(-6*time.Hour), 2*time.Minute), resolved(now.Add(-7*time.Hour), time.Minute)},
			wantFlips: 167, wantUnconf: 82, wantShort: 3, wantScore: ptr(100), wantLevel: "high"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Flakiness(from, now, tc.checks, tc.incidents)
			if (got.Score == nil) != (tc.wantScore == nil) || (got.Score != nil && *got.Score != *tc.wantScore) {
				t.Errorf("score = %v, want %v (%+v)", str(got.Score), str(tc.wantScore), got)
			}
			if got.StateFlips != tc.wantFlips || got.UnconfirmedFailures != tc.wantUnconf || got.ShortIncidents != tc.wantShort || got.Level != tc.wantLevel {
				t.Errorf("got flips %d unconfirmed %d short %d level %s, want %d %d %d %s", got.StateFlips, got.UnconfirmedFailures,
					got.ShortIncidents, got.Level, tc.wantFlips, tc.wantUnconf, tc.wantShort, tc.wantLevel)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// str shows an optional score in failure messages.
func str(p *int) string {
	if p == nil {
		return "<nil>"
	}
	return strconv.Itoa(*p)
}
