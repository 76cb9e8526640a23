package apiserver

import (
	"net/http"
	"slices"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Maintenance windows and alerting settings: readable with every key;
// changing them is owner-only (see routes).

// maintenanceObject renders a window; references are shown as ids.
func maintenanceObject(mw *monv1.MaintenanceWindow, monitors, groups *objectUIDs) restapi.MaintenanceWindow {
	ids := func(refs []monv1.LocalObjectReference, idx *objectUIDs) []string {
		out := []string{}
		for _, ref := range refs {
			if u := idx.uidOf(ref.Name); u != nil {
				out = append(out, *u)
			}
		}
		return out
	}
	sp := mw.Spec
	state := string(mw.Status.State)
	if state == "" {
		state = string(monv1.MaintenanceScheduled)
	}
	if sp.Cancelled {
		state = string(monv1.MaintenanceCancelled)
	}
	var rec *string
	if sp.Recurrence != nil {
		rec = strPtr(string(sp.Recurrence.Frequency))
	}
	tz := sp.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	impact := sp.Impact
	if impact == "" {
		impact = "medium"
	}
	return restapi.MaintenanceWindow{ID: string(mw.UID), Title: sp.Title, Description: strPtr(sp.Description),
		StartsAt: isoTime(sp.StartsAt.Time), EndsAt: isoTime(sp.EndsAt.Time), TimeZone: tz, Recurrence: rec,
		Scope: string(sp.Scope), MonitorIDs: ids(sp.Monitors, monitors), GroupIDs: ids(sp.Groups, groups), Impact: impact,
		State: state, CurrentStart: metaTimePtr(mw.Status.CurrentStart), CurrentEnd: metaTimePtr(mw.Status.CurrentEnd),
		Cancelled: sp.Cancelled}
}

func (s *Server) listMaintenance(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	var list monv1.MaintenanceWindowList
	if err := s.list(ctx, &list, c.Namespace); err != nil {
		s.writeErr(w, r, err)
		return
	}
	monitors, err := s.uidIndex(ctx, &monv1.MonitorList{}, c.Namespace)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	groups, err := s.uidIndex(ctx, &monv1.MonitorGroupList{}, c.Namespace)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := []restapi.MaintenanceWindow{}
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil {
			out = append(out, maintenanceObject(&list.Items[i], monitors, groups))
		}
	}
	slices.SortFunc(out, func(a, b restapi.MaintenanceWindow) int { return strings.Compare(b.StartsAt, a.StartsAt) })
	httpjson.Write(w, http.StatusOK, out)
}

func (s *Server) listEscalationPolicies(w http.ResponseWriter, r *http.Request) {
	var list monv1.EscalationPolicyList
	if err := s.list(r.Context(), &list, CallerFrom(r.Context()).Namespace); err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := []restapi.EscalationPolicy{}
	for _, p := range list.Items {
		steps := []restapi.EscalationPolicyStep{}
		for _, st := range p.Spec.Steps {
			var channels []string
			for _, ch := range st.Channels {
				channels = append(channels, ch.Name)
			}
			steps = append(steps, restapi.EscalationPolicyStep{DelayMinutes: st.DelayMinutes, Channels: nonNil(channels), Emails: nonNil(st.Emails)})
		}
		out = append(out, restapi.EscalationPolicy{ID: string(p.UID), Name: p.Name, Description: strPtr(p.Spec.Description),
			Repeat: p.Spec.Repeat, Steps: steps, CreatedAt: isoTime(p.CreationTimestamp.Time)})
	}
	httpjson.Write(w, http.StatusOK, out)
}

// emptyList answers settings the operator does not model (suppression
// windows beyond maintenance) with an empty list.
func emptyList(w http.ResponseWriter, _ *http.Request) { httpjson.Write(w, http.StatusOK, []any{}) }
