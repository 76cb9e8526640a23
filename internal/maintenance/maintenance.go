// Package maintenance computes the occurrences and live state of maintenance
// windows: scheduled → ongoing → completed, or cancelled, with daily, weekly
// or monthly recurrence in the window's time zone.
package maintenance

import (
	"slices"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// Occurrence is one period of a window.
type Occurrence struct {
	Start, End time.Time
}

// maxSteps bounds the walk over recurrences (ten years of daily windows).
const maxSteps = 3660

// Current returns the occurrence in effect at now, else the next one. ok is
// false when the window is cancelled or has no occurrence left.
func Current(s *monv1.MaintenanceWindowSpec, now time.Time) (Occurrence, bool) {
	if s.Cancelled {
		return Occurrence{}, false
	}
	loc := time.UTC
	if s.TimeZone != "" {
		if l, err := time.LoadLocation(s.TimeZone); err == nil {
			loc = l
		}
	}
	start, end := s.StartsAt.Time.In(loc), s.EndsAt.Time.In(loc)
	length := end.Sub(start)
	r := s.Recurrence
	if r == nil || r.Frequency == "none" || r.Frequency == "" {
		if now.Before(end) {
			return Occurrence{start, end}, true
		}
		return Occurrence{}, false
	}
	every := int(max(r.Interval, 1))
	for i := 0; i < maxSteps; i++ {
		var s0 time.Time
		switch r.Frequency {
		case "daily":
			s0 = start.AddDate(0, 0, i*every)
		case "weekly":
			s0 = start.AddDate(0, 0, 7*i*every)
		case "monthly":
			s0 = start.AddDate(0, i*every, 0)
		default:
			return Occurrence{}, false
		}
		if r.Until != nil && s0.After(r.Until.Time) {
			return Occurrence{}, false
		}
		if e0 := s0.Add(length); now.Before(e0) {
			return Occurrence{s0, e0}, true
		}
	}
	return Occurrence{}, false
}

// State is the live state of a window at now.
func State(s *monv1.MaintenanceWindowSpec, now time.Time) (monv1.MaintenanceState, Occurrence) {
	if s.Cancelled {
		return monv1.MaintenanceCancelled, Occurrence{}
	}
	occ, ok := Current(s, now)
	switch {
	case !ok:
		return monv1.MaintenanceCompleted, Occurrence{}
	case now.Before(occ.Start):
		return monv1.MaintenanceScheduled, occ
	default:
		return monv1.MaintenanceOngoing, occ
	}
}

// Covers reports whether the window's scope includes monitor m.
func Covers(s *monv1.MaintenanceWindowSpec, m *monv1.Monitor) bool {
	switch s.Scope {
	case "all":
		return true
	case "monitors":
		return slices.ContainsFunc(s.Monitors, func(r monv1.LocalObjectReference) bool { return r.Name == m.Name })
	case "groups":
		return m.Spec.GroupRef != nil && slices.ContainsFunc(s.Groups, func(r monv1.LocalObjectReference) bool { return r.Name == m.Spec.GroupRef.Name })
	}
	return false
}

// Occurrences returns the window's occurrences that overlap [from, to),
// clipped to it, in order.
func Occurrences(s *monv1.MaintenanceWindowSpec, from, to time.Time) []Occurrence {
	var out []Occurrence
	at := from
	for range maxSteps {
		occ, ok := Current(s, at)
		if !ok || !occ.Start.Before(to) {
			return out
		}
		clipped := Occurrence{Start: maxTime(occ.Start, from), End: minTime(occ.End, to)}
		if clipped.Start.Before(clipped.End) {
			out = append(out, clipped)
		}
		at = occ.End
	}
	return out
}

// Subtract returns [from, to) minus the occurrences (which must be sorted
// and inside the range), as ordered intervals.
func Subtract(from, to time.Time, occs []Occurrence) []Occurrence {
	var out []Occurrence
	cur := from
	for _, o := range occs {
		if o.Start.After(cur) {
			out = append(out, Occurrence{Start: cur, End: o.Start})
		}
		if o.End.After(cur) {
			cur = o.End
		}
	}
	if cur.Before(to) {
		out = append(out, Occurrence{Start: cur, End: to})
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
