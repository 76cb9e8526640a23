package reliability

import (
	"testing"
	"time"
)

func TestHealthScore(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	from := now.Add(-30 * 24 * time.Hour)
	inc := func(ago, d time.Duration) Incident {
		start := now.Add(-ago)
		end := start.Add(d)
		return Incident{StartedAt: start, ResolvedAt: &end}
	}
	f := func(v float64) *float64 { return &v }
	const day = 24 * time.Hour
	for _, tc := range []struct {
		name string
		in   HealthInput
		want *int
	}{
		{name: "no data", in: HealthInput{}},
		{name: "perfect", in: HealthInput{Uptime: f(100)}, want: ptr(100)},
		{name: "three nines, one quick incident", in: Incidents(from, now, []Incident{inc(time.Hour, 2*time.Minute)}).Health(f(99.9)), want: ptr(98)},
		{name: "two nines", in: HealthInput{Uptime: f(99)}, want: ptr(81)},
		{name: "slow repairs", in: Incidents(from, now, []Incident{inc(time.Hour, 3*time.Hour), inc(2*time.Hour, 3*time.Hour)}).Health(f(100)), want: ptr(76)},
		{name: "budget half spent", in: HealthInput{Uptime: f(100), BudgetRemaining: f(50)}, want: ptr(90)},
		{name: "burning fast", in: HealthInput{Uptime: f(100), BudgetRemaining: f(50), BurningFast: true}, want: ptr(80)},
		// The incident saturation scales with the window: 10 per 30 days.
		{name: "two incidents in 30 days", in: HealthInput{Uptime: f(100), Window: 30 * day, Incidents: 2}, want: ptr(95)},
		{name: "one incident in 7 days", in: HealthInput{Uptime: f(100), Window: 7 * day, Incidents: 1}, want: ptr(89)},
		{name: "three incidents in 7 days get no incident points", in: HealthInput{Uptime: f(100), Window: 7 * day, Incidents: 3}, want: ptr(75)},
		{name: "zero window means 30 days", in: HealthInput{Uptime: f(100), Incidents: 2}, want: ptr(95)},
		{name: "MTTR of 2 hours gets no recovery points", in: HealthInput{Uptime: f(100), Incidents: 0, MTTRSeconds: f(7200)}, want: ptr(81)},
		{name: "open incident caps at 50", in: Incidents(from, now, []Incident{{StartedAt: now.Add(-time.Minute)}}).Health(f(100)), want: ptr(50)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := HealthScore(tc.in)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("HealthScore = %v, want %v", str(got), str(tc.want))
			}
		})
	}
}
