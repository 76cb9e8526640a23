// Package oncall computes who is on call in an OnCallSchedule: the rotation
// of participants taking turns of shiftHours from startsAt, replaced by
// overrides during their periods.
package oncall

import (
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// DefaultShift is the turn length of a schedule that names none.
const DefaultShift = 7 * 24 * time.Hour

// Current returns who is on call at now and until when. ok is false before
// the schedule starts (and no override covers now).
func Current(s *monv1.OnCallScheduleSpec, now time.Time) (p monv1.OnCallParticipant, until time.Time, ok bool) {
	// An override wins; the latest-starting one when several overlap.
	var best *monv1.OnCallOverride
	for i := range s.Overrides {
		o := &s.Overrides[i]
		if !now.Before(o.StartsAt.Time) && now.Before(o.EndsAt.Time) && (best == nil || o.StartsAt.After(best.StartsAt.Time)) {
			best = o
		}
	}
	turn, turnEnd, inRotation := rotation(s, now)
	if best != nil {
		end := best.EndsAt.Time
		return best.Participant, end, true
	}
	if !inRotation {
		return monv1.OnCallParticipant{}, time.Time{}, false
	}
	// The turn ends early when an override starts before its end.
	for i := range s.Overrides {
		if st := s.Overrides[i].StartsAt.Time; st.After(now) && st.Before(turnEnd) {
			turnEnd = st
		}
	}
	return turn, turnEnd, true
}

// rotation is the rotation's participant at now and the end of the turn.
func rotation(s *monv1.OnCallScheduleSpec, now time.Time) (monv1.OnCallParticipant, time.Time, bool) {
	if len(s.Participants) == 0 || now.Before(s.StartsAt.Time) {
		return monv1.OnCallParticipant{}, time.Time{}, false
	}
	shift := DefaultShift
	if s.ShiftHours > 0 {
		shift = time.Duration(s.ShiftHours) * time.Hour
	}
	n := int64(now.Sub(s.StartsAt.Time) / shift)
	end := s.StartsAt.Time.Add(time.Duration(n+1) * shift)
	return s.Participants[n%int64(len(s.Participants))], end, true
}
