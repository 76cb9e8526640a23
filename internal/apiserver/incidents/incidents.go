package incidents

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

func noteObject(n store.Note) restapi.Note {
	return restapi.Note{ID: n.ID, Body: n.Body, Public: n.Public, Author: core.StrPtr(n.Author), CreatedAt: core.ISOTime(n.CreatedAt)}
}

// incidentQuery reads the list filters of GET /incidents and its export.
func incidentQuery(r *http.Request, ns string) (store.IncidentQuery, []core.FieldError) {
	q := r.URL.Query()
	iq := store.IncidentQuery{Namespace: ns, MonitorID: q.Get("monitor_id"), Q: q.Get("q")}
	var errs []core.FieldError
	switch st := store.IncidentStatus(q.Get("status")); st {
	case "", store.IncidentOngoing, store.IncidentResolved, store.IncidentSuppressed, store.IncidentAcknowledged:
		iq.Status = st
	default:
		errs = append(errs, core.FieldErr("status", "must be one of ongoing, resolved, suppressed, acknowledged"))
	}
	for _, p := range []struct {
		name string
		dst  **time.Time
	}{{"from", &iq.From}, {"to", &iq.To}} {
		if v := q.Get(p.name); v != "" {
			t, ok := core.ParseISO(v)
			if !ok {
				errs = append(errs, core.FieldErr(p.name, "must be an ISO 8601 timestamp"))
				continue
			}
			*p.dst = &t
		}
	}
	if len(iq.Q) > 200 {
		errs = append(errs, core.FieldErr("q", "must be at most 200 characters"))
	}
	page, fe := core.IntParam(r, "page", 1, 1, 1<<30)
	if fe != nil {
		errs = append(errs, *fe)
	}
	size, fe := core.IntParam(r, "page_size", 25, 1, 100)
	if fe != nil {
		errs = append(errs, *fe)
	}
	iq.Page, iq.PageSize = page, size
	return iq, errs
}

func (h *Handlers) listIncidents(w http.ResponseWriter, r *http.Request) {
	iq, errs := incidentQuery(r, core.CallerFrom(r.Context()).Namespace)
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	list, err := h.st.ListIncidents(r.Context(), iq)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	regions := h.d.RegionNames(r.Context())
	items := make([]restapi.Incident, 0, len(list.Items))
	for _, inc := range list.Items {
		items = append(items, core.IncidentObject(inc, regions, h.d.Clock.Now()))
	}
	httpjson.Write(w, http.StatusOK, restapi.IncidentPage{Items: items, Total: list.Total, Page: iq.Page, PageSize: iq.PageSize, Counts: restapi.IncidentCounts(list.Counts)})
}

// maxIncidentExport bounds an incident export.
const maxIncidentExport = 50000

func (h *Handlers) exportIncidents(w http.ResponseWriter, r *http.Request) {
	iq, errs := incidentQuery(r, core.CallerFrom(r.Context()).Namespace)
	format := r.URL.Query().Get("format")
	if format != "" && format != "csv" && format != "json" {
		errs = append(errs, core.FieldErr("format", "must be csv or json"))
	}
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	regions := h.d.RegionNames(r.Context())
	items := []restapi.Incident{}
	truncated := false
	for page := 1; ; page++ {
		iq.Page, iq.PageSize = page, 100
		list, err := h.st.ListIncidents(r.Context(), iq)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		for _, inc := range list.Items {
			items = append(items, core.IncidentObject(inc, regions, h.d.Clock.Now()))
		}
		if len(list.Items) < 100 || page*100 >= list.Total {
			break
		}
		if len(items) >= maxIncidentExport {
			truncated = true
			break
		}
	}
	if truncated {
		w.Header().Set("X-Export-Truncated", "true")
	}
	if format == "json" {
		httpjson.Write(w, http.StatusOK, restapi.IncidentList{Items: items})
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="incidents.csv"`)
	w.WriteHeader(http.StatusOK)
	cw := core.NewCSVExport(w)
	cw.Row("id", "monitor_id", "monitor_name", "monitor_url", "monitor_type", "started_at", "resolved_at",
		"duration_seconds", "alert_suppressed", "is_flapping", "confirmations", "confirming_regions", "acknowledged_at", "resolved_manually")
	for _, it := range items {
		cw.Row(it.ID, it.MonitorID, it.MonitorName, it.MonitorURL, it.MonitorType, it.StartedAt,
			deref(it.ResolvedAt), strconv.FormatInt(it.DurationSeconds, 10), strconv.FormatBool(it.AlertSuppressed),
			strconv.FormatBool(it.IsFlapping), strconv.Itoa(it.Confirmations), strings.Join(it.ConfirmingRegions, " "),
			deref(it.AcknowledgedAt), strconv.FormatBool(it.ResolvedManually))
	}
	cw.Flush()
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (h *Handlers) getIncident(w http.ResponseWriter, r *http.Request) {
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	notes, err := h.st.ListNotes(r.Context(), inc.ID)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	h.writeIncidentDetail(w, r, *inc, notes, http.StatusOK)
}

func (h *Handlers) writeIncidentDetail(w http.ResponseWriter, r *http.Request, inc store.Incident, notes []store.Note, code int) {
	out := restapi.IncidentDetail{Incident: core.IncidentObject(inc, h.d.RegionNames(r.Context()), h.d.Clock.Now()), Cause: core.StrPtr(inc.Cause),
		Postmortem: core.StrPtr(inc.Postmortem), Runbook: incidentRunbook(inc.Runbook), Notes: []restapi.Note{}}
	for _, n := range notes {
		out.Notes = append(out.Notes, noteObject(n))
	}
	httpjson.Write(w, code, out)
}

func (h *Handlers) incidentExplanation(w http.ResponseWriter, r *http.Request) {
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	if h.engine == nil {
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeInternal, "the engine is not available")
		return
	}
	ex, err := h.engine.ExplainIncident(r.Context(), *inc)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, ex)
}

func (h *Handlers) replayTimeline(w http.ResponseWriter, r *http.Request) {
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	limit, fe := core.IntParam(r, "limit", 200, 1, 1000)
	if fe != nil {
		core.WriteValidation(w, *fe)
		return
	}
	events, next, err := h.st.ListTimeline(r.Context(), store.TimelineQuery{IncidentID: inc.ID, Cursor: r.URL.Query().Get("cursor"), Limit: limit})
	if errors.Is(err, store.ErrInvalid) {
		core.WriteValidation(w, core.FieldErr("cursor", "is not a cursor of this timeline"))
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	items := make([]restapi.TimelineEvent, 0, len(events))
	for _, e := range events {
		items = append(items, restapi.TimelineEvent{ID: e.ID, Kind: e.Kind, At: core.ISOTime(e.At), Data: e.Data})
	}
	httpjson.Write(w, http.StatusOK, restapi.TimelinePage{Items: items, NextCursor: core.StrPtr(next)})
}

func (h *Handlers) createIncident(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	var b restapi.IncidentBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if b.MonitorID == "" {
		core.WriteValidation(w, core.FieldErr("monitor_id", "is required"))
		return
	}
	m, err := h.d.MonitorByID(ctx, c.Namespace, b.MonitorID)
	if errors.Is(err, core.ErrNotFound) {
		core.WriteNotFound(w, "Monitor")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if h.engine == nil {
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeInternal, "the engine is not available")
		return
	}
	inc, err := h.engine.OpenManualIncident(ctx, m)
	if errors.Is(err, store.ErrIncidentOpen) {
		core.WriteError(w, http.StatusConflict, core.CodeConflict, "the monitor already has an open incident")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	h.writeIncidentDetail(w, r, inc, nil, http.StatusCreated)
}

func (h *Handlers) acknowledgeIncident(w http.ResponseWriter, r *http.Request) {
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	if h.engine == nil {
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeInternal, "the engine is not available")
		return
	}
	out, err := h.engine.AcknowledgeIncident(r.Context(), inc.ID, core.CallerFrom(r.Context()).Name())
	if err != nil && !errors.Is(err, store.ErrIncidentAcknowledged) {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, core.IncidentObject(out, h.d.RegionNames(r.Context()), h.d.Clock.Now()))
}

func (h *Handlers) resolveIncident(w http.ResponseWriter, r *http.Request) {
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	var b restapi.ResolveBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if len(b.Note) > 5000 {
		core.WriteValidation(w, core.FieldErr("note", "must be at most 5000 characters"))
		return
	}
	if inc.ResolvedAt != nil {
		core.WriteError(w, http.StatusConflict, core.CodeIncidentResolved, "the incident is already resolved")
		return
	}
	if h.engine == nil {
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeInternal, "the engine is not available")
		return
	}
	out, err := h.engine.ResolveIncident(r.Context(), inc.ID, b.Note, core.CallerFrom(r.Context()).Name())
	if errors.Is(err, store.ErrIncidentResolved) {
		core.WriteError(w, http.StatusConflict, core.CodeIncidentResolved, "the incident is already resolved")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, core.IncidentObject(out, h.d.RegionNames(r.Context()), h.d.Clock.Now()))
}

func (h *Handlers) unsnoozeIncident(w http.ResponseWriter, r *http.Request) {
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	out, err := h.st.SnoozeIncident(r.Context(), inc.ID, nil)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, core.IncidentObject(out, h.d.RegionNames(r.Context()), h.d.Clock.Now()))
}

// escalation reports the escalation state of an incident: the monitor's
// policy and, per step, when it fires (or fired) unless acknowledged first.
func (h *Handlers) escalation(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	if h.escalations != nil {
		state, err := h.escalations.EscalationStatus(ctx, *inc)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		httpjson.Write(w, http.StatusOK, escalationObject(state))
		return
	}
	out := restapi.Escalation{IncidentID: inc.ID, Acknowledged: inc.AcknowledgedAt != nil,
		AcknowledgedAt: utcTime(inc.AcknowledgedAt), Resolved: inc.ResolvedAt != nil, Steps: []restapi.EscalationStep{}}
	m, err := h.d.MonitorByID(ctx, inc.Namespace, inc.MonitorID)
	if err == nil && m.Spec.EscalationPolicyRef != nil {
		var p monv1.EscalationPolicy
		if err := h.d.Client.Get(ctx, client.ObjectKey{Namespace: inc.Namespace, Name: m.Spec.EscalationPolicyRef.Name}, &p); err == nil {
			out.Policy = &restapi.EscalationPolicyRef{ID: string(p.UID), Name: p.Name, Repeat: p.Spec.Repeat}
			at := inc.StartedAt
			now := h.d.Clock.Now()
			stopped := inc.AcknowledgedAt != nil || inc.ResolvedAt != nil
			for i, step := range p.Spec.Steps {
				at = at.Add(time.Duration(step.DelayMinutes) * time.Minute)
				state := "pending"
				switch {
				case !at.After(now) && (!stopped || (inc.AcknowledgedAt != nil && at.Before(*inc.AcknowledgedAt))):
					state = "fired"
				case stopped:
					state = "cancelled"
				}
				var channels []string
				for _, ch := range step.Channels {
					channels = append(channels, ch.Name)
				}
				out.Steps = append(out.Steps, restapi.EscalationStep{Step: i + 1, Cycle: 1, DelayMinutes: step.DelayMinutes, FiresAt: at.UTC(),
					State: state, Targets: restapi.EscalationTargets{Channels: core.NonNil(channels), Emails: core.NonNil(step.Emails)}})
			}
		}
	}
	httpjson.Write(w, http.StatusOK, out)
}

// escalationObject is the escalation of an incident as the API shows it.
func escalationObject(st alerting.EscalationState) restapi.Escalation {
	out := restapi.Escalation{IncidentID: st.IncidentID, Acknowledged: st.Acknowledged, AcknowledgedAt: st.AcknowledgedAt,
		Resolved: st.Resolved, Steps: []restapi.EscalationStep{}, NextStepAt: st.NextStepAt, Stopped: st.Stopped}
	if p := st.Policy; p != nil {
		out.Policy = &restapi.EscalationPolicyRef{ID: p.ID, Name: p.Name, Repeat: p.Repeat}
	}
	for _, s := range st.Steps {
		out.Steps = append(out.Steps, restapi.EscalationStep{Step: s.Step, Cycle: s.Cycle, DelayMinutes: s.DelayMinutes,
			FiresAt: s.FiresAt, FiredAt: s.FiredAt, State: s.State, Targets: restapi.EscalationTargets(s.Targets)})
	}
	return out
}

// utcTime is t in UTC, or nil.
func utcTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func (h *Handlers) listNotes(w http.ResponseWriter, r *http.Request) {
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	notes, err := h.st.ListNotes(r.Context(), inc.ID)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out := []restapi.Note{}
	for _, n := range notes {
		out = append(out, noteObject(n))
	}
	httpjson.Write(w, http.StatusOK, out)
}

func (h *Handlers) addNote(w http.ResponseWriter, r *http.Request) {
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	var b restapi.NoteBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if b.Body == nil || strings.TrimSpace(*b.Body) == "" || len(*b.Body) > 5000 {
		core.WriteValidation(w, core.FieldErr("body", "is required, 1-5000 characters"))
		return
	}
	n, err := h.st.AddNote(r.Context(), store.Note{IncidentID: inc.ID, Body: *b.Body, Public: b.Public, Author: core.CallerFrom(r.Context()).Name()})
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if b.Public && h.subscribers != nil {
		if err := h.subscribers.PublicUpdate(r.Context(), inc.Namespace, inc.MonitorID, inc.ID, n.Body); err != nil {
			core.Log(r).Error(err, "notify status page subscribers")
		}
	}
	httpjson.Write(w, http.StatusCreated, noteObject(n))
}

func (h *Handlers) deleteNote(w http.ResponseWriter, r *http.Request) {
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	err := h.st.DeleteNote(r.Context(), inc.ID, chi.URLParam(r, "noteId"))
	if errors.Is(err, store.ErrNotFound) {
		core.WriteNotFound(w, "Note")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handlers) putPostmortem(w http.ResponseWriter, r *http.Request) {
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	var b restapi.Postmortem
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if b.Postmortem == nil || len(*b.Postmortem) > 50000 {
		core.WriteValidation(w, core.FieldErr("postmortem", "is required, up to 50000 characters"))
		return
	}
	if err := h.st.SetPostmortem(r.Context(), inc.ID, *b.Postmortem); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.IncidentPostmortem{IncidentID: inc.ID, Postmortem: *b.Postmortem})
}

// maxSnooze bounds how far ahead an incident can be snoozed.
const maxSnooze = 30 * 24 * time.Hour

// snoozeBody is the body of POST /incidents/:id/snooze: one of until (ISO
// 8601) or minutes.
// snoozeUntil validates the snooze body b against now and returns the end
// of the snooze.
func snoozeUntil(b *restapi.SnoozeBody, now time.Time) (time.Time, []core.FieldError) {
	switch {
	case b.Until.Set && !b.Until.Null && b.Minutes.Set && !b.Minutes.Null:
		return time.Time{}, []core.FieldError{core.FieldErr("until", "send either until or minutes, not both")}
	case b.Minutes.Set && !b.Minutes.Null:
		m := b.Minutes.Value()
		if m < 1 || m > int(maxSnooze/time.Minute) {
			return time.Time{}, []core.FieldError{core.FieldErr("minutes", "must be between 1 and %d", int(maxSnooze/time.Minute))}
		}
		return now.Add(time.Duration(m) * time.Minute), nil
	case b.Until.Set && !b.Until.Null:
		t, err := time.Parse(time.RFC3339Nano, b.Until.Value())
		switch {
		case err != nil:
			return time.Time{}, []core.FieldError{core.FieldErr("until", "must be an ISO 8601 timestamp")}
		case !t.After(now):
			return time.Time{}, []core.FieldError{core.FieldErr("until", "must be in the future")}
		case t.Sub(now) > maxSnooze:
			return time.Time{}, []core.FieldError{core.FieldErr("until", "must be at most 30 days ahead")}
		}
		return t, nil
	}
	return time.Time{}, []core.FieldError{core.FieldErr("until", "until or minutes is required")}
}

func (h *Handlers) snoozeIncident(w http.ResponseWriter, r *http.Request) {
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	var b restapi.SnoozeBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	until, errs := snoozeUntil(&b, h.d.Clock.Now())
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	if inc.ResolvedAt != nil {
		core.WriteError(w, http.StatusConflict, core.CodeIncidentResolved, "the incident is already resolved")
		return
	}
	out, err := h.st.SnoozeIncident(r.Context(), inc.ID, &until)
	if errors.Is(err, store.ErrIncidentResolved) {
		core.WriteError(w, http.StatusConflict, core.CodeIncidentResolved, "the incident is already resolved")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, core.IncidentObject(out, h.d.RegionNames(r.Context()), h.d.Clock.Now()))
}

// incidentRunbook is the REST shape of an incident's attached runbook, nil
// without one.
func incidentRunbook(rb *store.IncidentRunbook) *restapi.IncidentRunbook {
	if rb == nil {
		return nil
	}
	out := &restapi.IncidentRunbook{RunbookID: rb.RunbookID, Name: rb.Name, Steps: make([]restapi.RunbookStep, 0, len(rb.Steps))}
	for _, st := range rb.Steps {
		out.Steps = append(out.Steps, restapi.RunbookStep(st))
	}
	return out
}
