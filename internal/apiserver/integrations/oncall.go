package integrations

import (
	"net/http"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/oncall"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// onCallSchedules reads the workspace's OnCallSchedules with their current
// participant.
func (h *Handlers) onCallSchedules(r *http.Request) ([]restapi.OnCallSchedule, error) {
	var list monv1.OnCallScheduleList
	if err := h.d.List(r.Context(), &list, core.CallerFrom(r.Context()).Namespace); err != nil {
		return nil, err
	}
	now := h.d.Clock.Now()
	out := []restapi.OnCallSchedule{}
	for i := range list.Items {
		sc := &list.Items[i]
		o := restapi.OnCallSchedule{ID: string(sc.UID), Name: sc.Name, Description: core.StrPtr(sc.Spec.Description), TimeZone: sc.Spec.TimeZone,
			ShiftHours: sc.Spec.ShiftHours, StartsAt: core.ISOTime(sc.Spec.StartsAt.Time), Participants: []restapi.OnCallPerson{}, Overrides: []restapi.OnCallOverride{}}
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
			o.Overrides = append(o.Overrides, restapi.OnCallOverride{Person: restapi.OnCallPerson(ov.Participant), StartsAt: core.ISOTime(ov.StartsAt.Time), EndsAt: core.ISOTime(ov.EndsAt.Time)})
		}
		if p, until, ok := oncall.Current(&sc.Spec, now); ok {
			cur := restapi.OnCallPerson(p)
			o.Current = &cur
			u := core.ISOTime(until)
			o.CurrentUntil = &u
		}
		out = append(out, o)
	}
	return out, nil
}

// listOnCallSchedules answers GET /settings/on-call-schedules.
func (h *Handlers) listOnCallSchedules(w http.ResponseWriter, r *http.Request) {
	out, err := h.onCallSchedules(r)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, out)
}

// currentOnCall answers GET /settings/on-call-schedules/current: who is on
// call now in each schedule.
func (h *Handlers) currentOnCall(w http.ResponseWriter, r *http.Request) {
	all, err := h.onCallSchedules(r)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out := []restapi.OnCallNow{}
	for _, o := range all {
		out = append(out, restapi.OnCallNow{ScheduleID: o.ID, ScheduleName: o.Name, OnCall: o.Current, Until: o.CurrentUntil})
	}
	httpjson.Write(w, http.StatusOK, out)
}
