package oncall

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func TestCurrent(t *testing.T) {
	start := time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)
	ann := monv1.OnCallParticipant{Name: "Ann", Email: "ann@example.com"}
	bob := monv1.OnCallParticipant{Name: "Bob", Email: "bob@example.com"}
	cat := monv1.OnCallParticipant{Name: "Cat", Email: "cat@example.com"}
	s := &monv1.OnCallScheduleSpec{
		Participants: []monv1.OnCallParticipant{ann, bob}, ShiftHours: 24, StartsAt: metav1.NewTime(start),
		Overrides: []monv1.OnCallOverride{{Participant: cat, StartsAt: metav1.NewTime(start.Add(50 * time.Hour)), EndsAt: metav1.NewTime(start.Add(52 * time.Hour))}},
	}
	for _, tc := range []struct {
		name  string
		at    time.Duration
		want  string
		until time.Duration
		ok    bool
	}{
		{"before the start", -time.Hour, "", 0, false},
		{"first turn", time.Hour, "Ann", 24 * time.Hour, true},
		{"second turn", 30 * time.Hour, "Bob", 48 * time.Hour, true},
		{"wraps around", 49 * time.Hour, "Ann", 50 * time.Hour, true}, // cut short by the override
		{"override", 51 * time.Hour, "Cat", 52 * time.Hour, true},
		{"after the override", 53 * time.Hour, "Ann", 72 * time.Hour, true},
	} {
		p, until, ok := Current(s, start.Add(tc.at))
		if ok != tc.ok || p.Name != tc.want || (ok && !until.Equal(start.Add(tc.until))) {
			t.Errorf("%s: got %q until %s (ok %v), want %q until %s (ok %v)", tc.name, p.Name, until, ok, tc.want, start.Add(tc.until), tc.ok)
		}
	}
}
