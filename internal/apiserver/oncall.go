package apiserver

import (
	"net/http"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/oncall"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// onCallSchedules reads the workspace's OnCallSchedules with their current
// participant.
func (s *Server) onCallSchedules(r *http.Request) ([]restapi.OnCallSchedule, error) {
	var list monv1.OnCallScheduleList
	if err := s.list(r.Context(), &list, CallerFrom(r.Context()).Namespace); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	out := []restapi.OnCallSchedule{}
	for i := range list.Items {
		sc := &list.Items[i]
		o := restapi.OnCallSchedule{ID: string(sc.UID), Name: sc.Name, Description: strPtr(sc.Spec.Description), TimeZone: sc.Spec.TimeZone,
			ShiftHours: sc.Spec.ShiftHours, StartsAt: isoTime(sc.Spec.StartsAt.Time), Participants: []restapi.OnCallPerson{}, Overrides: []restapi.OnCallOverride{}}
		if o.TimeZone == "" {
			o.TimeZone = "UTC"
		}
		if o.ShiftHours == 0 {
			o.ShiftHours = int32(oncall.DefaultShift.Hours())
		}
		for _, p := range sc.Spec.Participants {
			o.Participants = append(o.Participants, restapi.OnCallPerson(p))
		}
		for _, ov := range sc.Spec.Overrides {
			o.Overrides = append(o.Overrides, restapi.OnCallOverride{Person: restapi.OnCallPerson(ov.Participant), StartsAt: isoTime(ov.StartsAt.Time), EndsAt: isoTime(ov.EndsAt.Time)})
		}
		if p, until, ok := oncall.Current(&sc.Spec, now); ok {
			cur := restapi.OnCallPerson(p)
			o.Current = &cur
			u := isoTime(until)
			o.CurrentUntil = &u
		}
		out = append(out, o)
	}
	return out, nil
}

// listOnCallSchedules answers GET /settings/on-call-schedules.
func (s *Server) listOnCallSchedules(w http.ResponseWriter, r *http.Request) {
	out, err := s.onCallSchedules(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, out)
}

// currentOnCall answers GET /settings/on-call-schedules/current: who is on
// call now in each schedule.
func (s *Server) currentOnCall(w http.ResponseWriter, r *http.Request) {
	all, err := s.onCallSchedules(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := []restapi.OnCallNow{}
	for _, o := range all {
		out = append(out, restapi.OnCallNow{ScheduleID: o.ID, ScheduleName: o.Name, OnCall: o.Current, Until: o.CurrentUntil})
	}
	httpjson.Write(w, http.StatusOK, out)
}
