package monitor

import (
	"strings"
	"testing"
	"time"
)

// TestParseCron covers the inputs robfig/cron v3.0.1 panics on (issue 28
// row 7): each must come back as an error, never a panic, and the schedules
// that match no date (issue 41), while ordinary expressions keep parsing,
// February 29 included, and a day of the week ORs with the day of the month
// as in cron.
func TestParseCron(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		wantErr string
	}{
		{"TZ=Europe/Berlin", "spec.cron.timeZone"},
		{"CRON_TZ=UTC", "spec.cron.timeZone"},
		{"TZ=", "spec.cron.timeZone"},
		{" TZ=UTC 0 * * * *", "spec.cron.timeZone"},
		{"CRON_TZ=Europe/Berlin 0 3 * * *", "spec.cron.timeZone"},
		{"61 * * * *", "end of range"},
		{"* * * *", "expected exactly 5 fields"},
		{"0 0 30 2 *", "never fires"},
		{"0 0 31 4,6,9,11 *", "never fires"},
		{"0 0 31 2 *", "never fires"},
		{"0 0 29 2 *", ""},
		{"0 0 30 2 MON", ""},
		{"*/15 * * * *", ""},
		{"@hourly", ""},
		{"0 3 * * MON-FRI", ""},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			sched, err := ParseCron(tc.expr)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseCron(%q) = %v, want no error", tc.expr, err)
				}
				from := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
				if next := sched.Next(from); !next.After(from) {
					t.Fatalf("ParseCron(%q).Next = %v, want after %v", tc.expr, next, from)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ParseCron(%q) error = %v, want one containing %q", tc.expr, err, tc.wantErr)
			}
		})
	}
}
