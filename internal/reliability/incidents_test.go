package reliability

import (
	"testing"
	"time"
)

func TestIncidents(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	from := now.Add(-10 * time.Hour)
	end := func(t time.Time) *time.Time { return &t }
	st := Incidents(from, now, []Incident{
		{StartedAt: from.Add(-time.Hour), ResolvedAt: end(from.Add(time.Hour))}, // before the window: downtime only
		{StartedAt: now.Add(-5 * time.Hour), ResolvedAt: end(now.Add(-4 * time.Hour))},
		{StartedAt: now.Add(-time.Hour)},
	})
	if st.Count != 2 || st.Resolved != 1 || !st.Open || st.Downtime != 3*time.Hour {
		t.Fatalf("figures = %+v", st)
	}
	if got := *st.MTTR(); got != 3600 {
		t.Errorf("mttr = %v, want 3600", got)
	}
	if got := *st.MTBF(); got != 7*3600/2 {
		t.Errorf("mtbf = %v, want %v", got, 7*3600/2)
	}
}
