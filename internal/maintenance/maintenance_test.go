package maintenance

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestState(t *testing.T) {
	once := monv1.MaintenanceWindowSpec{StartsAt: metav1.NewTime(at("2030-01-10T22:00:00Z")), EndsAt: metav1.NewTime(at("2030-01-10T23:00:00Z"))}
	weekly := once
	weekly.Recurrence = &monv1.Recurrence{Frequency: "weekly", Interval: 1, Until: &metav1.Time{Time: at("2030-02-01T00:00:00Z")}}
	cancelled := once
	cancelled.Cancelled = true
	berlin := monv1.MaintenanceWindowSpec{
		StartsAt: metav1.NewTime(at("2030-03-30T10:00:00Z")), EndsAt: metav1.NewTime(at("2030-03-30T11:00:00Z")),
		TimeZone: "Europe/Berlin", Recurrence: &monv1.Recurrence{Frequency: "daily"},
	}
	for _, tc := range []struct {
		name  string
		spec  monv1.MaintenanceWindowSpec
		now   string
		want  monv1.MaintenanceState
		start string
	}{
		{"before", once, "2030-01-10T21:00:00Z", monv1.MaintenanceScheduled, "2030-01-10T22:00:00Z"},
		{"during", once, "2030-01-10T22:30:00Z", monv1.MaintenanceOngoing, "2030-01-10T22:00:00Z"},
		{"end is exclusive", once, "2030-01-10T23:00:00Z", monv1.MaintenanceCompleted, ""},
		{"cancelled", cancelled, "2030-01-10T22:30:00Z", monv1.MaintenanceCancelled, ""},
		{"second week", weekly, "2030-01-17T22:15:00Z", monv1.MaintenanceOngoing, "2030-01-17T22:00:00Z"},
		{"between weeks", weekly, "2030-01-12T00:00:00Z", monv1.MaintenanceScheduled, "2030-01-17T22:00:00Z"},
		{"after until", weekly, "2030-02-02T00:00:00Z", monv1.MaintenanceCompleted, ""},
		// Berlin moves to summer time on 2030-03-31: the window stays at
		// 11:00 local time, so it starts an hour earlier in UTC.
		{"daylight saving", berlin, "2030-03-31T09:30:00Z", monv1.MaintenanceOngoing, "2030-03-31T09:00:00Z"},
	} {
		got, occ := State(&tc.spec, at(tc.now))
		if got != tc.want {
			t.Errorf("%s: state = %s, want %s", tc.name, got, tc.want)
		}
		if tc.start != "" && !occ.Start.Equal(at(tc.start)) {
			t.Errorf("%s: start = %s, want %s", tc.name, occ.Start.UTC(), tc.start)
		}
	}
}

func TestCovers(t *testing.T) {
	m := &monv1.Monitor{}
	m.Name = "api"
	m.Spec.GroupRef = &monv1.LocalObjectReference{Name: "backend"}
	other := &monv1.Monitor{}
	other.Name = "web"
	for _, tc := range []struct {
		spec monv1.MaintenanceWindowSpec
		m    *monv1.Monitor
		want bool
	}{
		{monv1.MaintenanceWindowSpec{Scope: "all"}, other, true},
		{monv1.MaintenanceWindowSpec{Scope: "monitors", Monitors: []monv1.LocalObjectReference{{Name: "api"}}}, m, true},
		{monv1.MaintenanceWindowSpec{Scope: "monitors", Monitors: []monv1.LocalObjectReference{{Name: "api"}}}, other, false},
		{monv1.MaintenanceWindowSpec{Scope: "groups", Groups: []monv1.LocalObjectReference{{Name: "backend"}}}, m, true},
		{monv1.MaintenanceWindowSpec{Scope: "groups", Groups: []monv1.LocalObjectReference{{Name: "backend"}}}, other, false},
	} {
		if got := Covers(&tc.spec, tc.m); got != tc.want {
			t.Errorf("Covers(%s, %s) = %v, want %v", tc.spec.Scope, tc.m.Name, got, tc.want)
		}
	}
}

func TestOccurrencesAndSubtract(t *testing.T) {
	daily := monv1.MaintenanceWindowSpec{
		StartsAt: metav1.NewTime(at("2030-01-01T02:00:00Z")), EndsAt: metav1.NewTime(at("2030-01-01T03:00:00Z")),
		Recurrence: &monv1.Recurrence{Frequency: "daily", Interval: 1},
	}
	from, to := at("2030-01-02T02:30:00Z"), at("2030-01-04T02:30:00Z")
	occs := Occurrences(&daily, from, to)
	if len(occs) != 3 {
		t.Fatalf("got %d occurrences, want 3: %v", len(occs), occs)
	}
	if !occs[0].Start.Equal(from) || !occs[2].End.Equal(to) {
		t.Errorf("occurrences not clipped to the range: %v", occs)
	}
	rest := Subtract(from, to, occs)
	var total time.Duration
	for _, r := range rest {
		total += r.End.Sub(r.Start)
	}
	if want := 48*time.Hour - 2*time.Hour; total != want {
		t.Errorf("time outside maintenance = %s, want %s", total, want)
	}
}
