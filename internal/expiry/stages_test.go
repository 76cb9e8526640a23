package expiry

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
)

func TestStageAt(t *testing.T) {
	exp := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := time.Hour
	for _, tc := range []struct {
		name     string
		before   time.Duration // now = exp - before
		reminder int
		stage    string
		next     time.Duration // next = exp - next (0: zero time)
	}{
		{"far away", 40 * day, 0, "", 15 * day},
		{"exactly 15 days", 15 * day, 0, StagePre15d, 7 * day},
		{"just over 15 days", 15*day + time.Second, 0, "", 15 * day},
		{"10 days", 10 * day, 0, StagePre15d, 7 * day},
		{"7 days", 7 * day, 0, StagePre7d, 2 * day},
		{"5 days", 5 * day, 0, StagePre7d, 2 * day},
		{"30 hours", 30 * h, 0, StagePre2d, day},
		{"24 hours", day, 0, StagePre24h, -time.Nanosecond},
		{"3 hours", 3 * h, 0, StagePre24h, -time.Nanosecond},
		{"at expiry", 0, 0, StagePre24h, -time.Nanosecond},
		{"an hour after", -h, 0, StagePost1d, -(day + time.Nanosecond)},
		{"24 hours after", -day, 0, StagePost1d, -(day + time.Nanosecond)},
		{"25 hours after", -25 * h, 0, StagePost2d, -(2*day + time.Nanosecond)},
		{"60 hours after", -60 * h, 0, StagePost3d, -(3*day + time.Nanosecond)},
		{"four days after", -4 * day, 0, "", 0},
		{"reminder 30: 40 days", 40 * day, 30, "", 30 * day},
		{"reminder 30: 20 days", 20 * day, 30, "pre_30d", 15 * day},
		{"reminder 30: 10 days", 10 * day, 30, StagePre15d, 7 * day},
		{"reminder 10: 12 days", 12 * day, 10, StagePre15d, 10 * day},
		{"reminder 10: 9 days", 9 * day, 10, "pre_10d", 7 * day},
		{"reminder 7 adds nothing", 7 * day, 7, StagePre7d, 2 * day},
		{"reminder 1 adds nothing", 20 * h, 1, StagePre24h, -time.Nanosecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stage, next := StageAt(exp, exp.Add(-tc.before), tc.reminder)
			if stage != tc.stage {
				t.Errorf("stage = %q, want %q", stage, tc.stage)
			}
			var want time.Time
			if tc.next != 0 {
				want = exp.Add(-tc.next)
			}
			if !next.Equal(want) {
				t.Errorf("next = %v, want %v", next, want)
			}
		})
	}
}

// Walking the clock from 20 days before to 5 days after an expiry in small
// steps visits every stage once, in order, and the days remaining of each
// notice match its stage.
func TestStageWalk(t *testing.T) {
	exp := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	var seen []string
	days := map[string]int{}
	for now := exp.Add(-20 * day); now.Before(exp.Add(5 * day)); now = now.Add(17 * time.Minute) {
		s, _ := StageAt(exp, now, 12)
		if s != "" && (len(seen) == 0 || seen[len(seen)-1] != s) {
			seen = append(seen, s)
			days[s] = alertevent.DaysRemaining(exp, now)
		}
	}
	want := []string{"pre_15d", "pre_12d", "pre_7d", "pre_2d", "pre_24h", "post_1d", "post_2d", "post_3d"}
	if len(seen) != len(want) {
		t.Fatalf("stages = %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("stages = %v, want %v", seen, want)
		}
	}
	for s, d := range map[string]int{"pre_24h": 0, "post_1d": -1, "post_2d": -2, "post_3d": -3} {
		if days[s] != d {
			t.Errorf("days remaining at %s = %d, want %d", s, days[s], d)
		}
	}
}

func TestReminderDays(t *testing.T) {
	for v, want := range map[string]int{"": 0, "30": 30, " 45 ": 45, "0": 0, "366": 0, "abc": 0, "-3": 0, "365": 365} {
		m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ReminderDaysAnnotation: v}}}
		if got := ReminderDays(m); got != want {
			t.Errorf("ReminderDays(%q) = %d, want %d", v, got, want)
		}
	}
}
