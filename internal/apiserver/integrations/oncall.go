package integrations

import (
	"net/http"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/oncall"
)

// onCallJSON is an on-call schedule with who is on call now.
type onCallJSON struct {
	ID           string              `json:"id"`
	Name         string              `json:"name"`
	Description  *string             `json:"description"`
	TimeZone     string              `json:"time_zone"`
	ShiftHours   int32               `json:"shift_hours"`
	StartsAt     string              `json:"starts_at"`
	Participants []onCallPerson      `json:"participants"`
	Overrides    []onCallOverrideOut `json:"overrides"`
	Current      *onCallPerson       `json:"current"`
	CurrentUntil *string             `json:"current_until"`
}

type onCallPerson struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

type onCallOverrideOut struct {
	Person   onCallPerson `json:"participant"`
	StartsAt string       `json:"starts_at"`
	EndsAt   string       `json:"ends_at"`
}

// onCallSchedules reads the workspace's OnCallSchedules with their current
// participant.
func (h *Handlers) onCallSchedules(r *http.Request) ([]onCallJSON, error) {
	var list monv1.OnCallScheduleList
	if err := h.d.List(r.Context(), &list, core.CallerFrom(r.Context()).Namespace); err != nil {
		return nil, err
	}
	now := h.d.Clock.Now()
	out := []onCallJSON{}
	for i := range list.Items {
		sc := &list.Items[i]
		o := onCallJSON{ID: string(sc.UID), Name: sc.Name, Description: core.StrPtr(sc.Spec.Description), TimeZone: sc.Spec.TimeZone,
			ShiftHours: sc.Spec.ShiftHours, StartsAt: core.ISOTime(sc.Spec.StartsAt.Time), Participants: []onCallPerson{}, Overrides: []onCallOverrideOut{}}
		if o.TimeZone == "" {
			o.TimeZone = "UTC"
		}
		if o.ShiftHours == 0 {
			o.ShiftHours = int32(oncall.DefaultShift.Hours())
		}
		for _, p := range sc.Spec.Participants {
			o.Participants = append(o.Participants, onCallPerson(p))
		}
		for _, ov := range sc.Spec.Overrides {
			o.Overrides = append(o.Overrides, onCallOverrideOut{Person: onCallPerson(ov.Participant), StartsAt: core.ISOTime(ov.StartsAt.Time), EndsAt: core.ISOTime(ov.EndsAt.Time)})
		}
		if p, until, ok := oncall.Current(&sc.Spec, now); ok {
			cur := onCallPerson(p)
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
	out := []map[string]any{}
	for _, o := range all {
		out = append(out, map[string]any{"schedule_id": o.ID, "schedule_name": o.Name, "on_call": o.Current, "until": o.CurrentUntil})
	}
	httpjson.Write(w, http.StatusOK, out)
}
