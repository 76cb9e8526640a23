package apiserver

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// regionLabels maps region codes to display labels.
type regionLabels map[string]string

func (l regionLabels) name(code string) string {
	if n, ok := l[code]; ok && n != "" {
		return n
	}
	return code
}

func (s *Server) regionNames(ctx context.Context) regionLabels {
	var list monv1.ProbeRegionList
	out := regionLabels{}
	if err := s.opts.Client.List(ctx, &list); err != nil {
		return out
	}
	for _, pr := range list.Items {
		label := pr.Spec.DisplayName
		if label == "" && pr.Spec.City != "" {
			label = pr.Spec.City
		}
		out[monitor.RegionCode(&pr)] = label
	}
	return out
}

func (s *Server) incidentObject(inc store.Incident, regions regionLabels) restapi.Incident {
	names := make([]string, 0, len(inc.ConfirmingRegions))
	for _, c := range inc.ConfirmingRegions {
		names = append(names, regions.name(c))
	}
	return restapi.Incident{
		ID: inc.ID, MonitorID: inc.MonitorID, MonitorName: inc.MonitorName, MonitorURL: inc.MonitorURL, MonitorType: inc.MonitorType,
		StartedAt: isoTime(inc.StartedAt), ResolvedAt: isoTimePtr(inc.ResolvedAt), DurationSeconds: inc.DurationSeconds(s.clock.Now()),
		AlertSuppressed: inc.AlertSuppressed, SuppressionReason: strPtr(inc.SuppressionReason), IsFlapping: inc.IsFlapping,
		Confirmations: inc.Confirmations, ConfirmingRegions: nonNil(inc.ConfirmingRegions), ConfirmingRegionNames: names,
		RegionsTotal: inc.RegionsTotal, AcknowledgedAt: isoTimePtr(inc.AcknowledgedAt), AcknowledgedByName: strPtr(inc.AcknowledgedBy),
		SnoozedUntil: isoTimePtr(inc.SnoozedUntil), ResolvedManually: inc.ResolvedManually, CodeHostIssueURL: strPtr(inc.IssueURL),
	}
}

func noteObject(n store.Note) restapi.Note {
	return restapi.Note{ID: n.ID, Body: n.Body, Public: n.Public, Author: strPtr(n.Author), CreatedAt: isoTime(n.CreatedAt)}
}

// incidentQuery reads the list filters of GET /incidents and its export.
func incidentQuery(r *http.Request, ns string) (store.IncidentQuery, []FieldError) {
	q := r.URL.Query()
	iq := store.IncidentQuery{Namespace: ns, MonitorID: q.Get("monitor_id"), Q: q.Get("q")}
	var errs []FieldError
	switch st := store.IncidentStatus(q.Get("status")); st {
	case "", store.IncidentOngoing, store.IncidentResolved, store.IncidentSuppressed, store.IncidentAcknowledged:
		iq.Status = st
	default:
		errs = append(errs, fieldErr("status", "must be one of ongoing, resolved, suppressed, acknowledged"))
	}
	for _, p := range []struct {
		name string
		dst  **time.Time
	}{{"from", &iq.From}, {"to", &iq.To}} {
		if v := q.Get(p.name); v != "" {
			t, ok := parseISO(v)
			if !ok {
				errs = append(errs, fieldErr(p.name, "must be an ISO 8601 timestamp"))
				continue
			}
			*p.dst = &t
		}
	}
	if len(iq.Q) > 200 {
		errs = append(errs, fieldErr("q", "must be at most 200 characters"))
	}
	page, fe := intParam(r, "page", 1, 1, 1<<30)
	if fe != nil {
		errs = append(errs, *fe)
	}
	size, fe := intParam(r, "page_size", 25, 1, 100)
	if fe != nil {
		errs = append(errs, *fe)
	}
	iq.Page, iq.PageSize = page, size
	return iq, errs
}

func (s *Server) listIncidents(w http.ResponseWriter, r *http.Request) {
	iq, errs := incidentQuery(r, CallerFrom(r.Context()).Namespace)
	if len(errs) > 0 {
		writeValidation(w, errs...)
		return
	}
	list, err := s.opts.Store.ListIncidents(r.Context(), iq)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	regions := s.regionNames(r.Context())
	items := make([]restapi.Incident, 0, len(list.Items))
	for _, inc := range list.Items {
		items = append(items, s.incidentObject(inc, regions))
	}
	httpjson.Write(w, http.StatusOK, restapi.IncidentPage{Items: items, Total: list.Total, Page: iq.Page, PageSize: iq.PageSize, Counts: list.Counts})
}

// maxIncidentExport bounds an incident export.
const maxIncidentExport = 50000

func (s *Server) exportIncidents(w http.ResponseWriter, r *http.Request) {
	iq, errs := incidentQuery(r, CallerFrom(r.Context()).Namespace)
	format := r.URL.Query().Get("format")
	if format != "" && format != "csv" && format != "json" {
		errs = append(errs, fieldErr("format", "must be csv or json"))
	}
	if len(errs) > 0 {
		writeValidation(w, errs...)
		return
	}
	regions := s.regionNames(r.Context())
	items := []restapi.Incident{}
	truncated := false
	for page := 1; ; page++ {
		iq.Page, iq.PageSize = page, 100
		list, err := s.opts.Store.ListIncidents(r.Context(), iq)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		for _, inc := range list.Items {
			items = append(items, s.incidentObject(inc, regions))
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
	cw := newCSVExport(w)
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

// pathIncident loads the {id} incident of the caller's workspace.
func (s *Server) pathIncident(w http.ResponseWriter, r *http.Request) *store.Incident {
	inc, err := s.opts.Store.GetIncident(r.Context(), chi.URLParam(r, "id"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && inc.Namespace != CallerFrom(r.Context()).Namespace) {
		writeNotFound(w, "Incident")
		return nil
	}
	if err != nil {
		s.writeErr(w, r, err)
		return nil
	}
	return &inc
}

func (s *Server) getIncident(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	notes, err := s.opts.Store.ListNotes(r.Context(), inc.ID)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeIncidentDetail(w, r, *inc, notes, http.StatusOK)
}

func (s *Server) writeIncidentDetail(w http.ResponseWriter, r *http.Request, inc store.Incident, notes []store.Note, code int) {
	out := restapi.IncidentDetail{Incident: s.incidentObject(inc, s.regionNames(r.Context())), Cause: strPtr(inc.Cause),
		Postmortem: strPtr(inc.Postmortem), Runbook: inc.Runbook, Notes: []restapi.Note{}}
	for _, n := range notes {
		out.Notes = append(out.Notes, noteObject(n))
	}
	httpjson.Write(w, code, out)
}

func (s *Server) incidentExplanation(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	if s.opts.Engine == nil {
		writeError(w, http.StatusServiceUnavailable, CodeInternal, "the engine is not available")
		return
	}
	ex, err := s.opts.Engine.ExplainIncident(r.Context(), *inc)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, ex)
}

func (s *Server) replayTimeline(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	limit, fe := intParam(r, "limit", 200, 1, 1000)
	if fe != nil {
		writeValidation(w, *fe)
		return
	}
	events, next, err := s.opts.Store.ListTimeline(r.Context(), store.TimelineQuery{IncidentID: inc.ID, Cursor: r.URL.Query().Get("cursor"), Limit: limit})
	if errors.Is(err, store.ErrInvalid) {
		writeValidation(w, fieldErr("cursor", "is not a cursor of this timeline"))
		return
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	items := make([]restapi.TimelineEvent, 0, len(events))
	for _, e := range events {
		items = append(items, restapi.TimelineEvent{ID: e.ID, Kind: e.Kind, At: isoTime(e.At), Data: e.Data})
	}
	httpjson.Write(w, http.StatusOK, restapi.TimelinePage{Items: items, NextCursor: strPtr(next)})
}

func (s *Server) createIncident(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	var b struct {
		MonitorID string `json:"monitor_id"`
	}
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.MonitorID == "" {
		writeValidation(w, fieldErr("monitor_id", "is required"))
		return
	}
	m, err := s.monitorByID(ctx, c.Namespace, b.MonitorID)
	if errors.Is(err, errNotFound) {
		writeNotFound(w, "Monitor")
		return
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if s.opts.Engine == nil {
		writeError(w, http.StatusServiceUnavailable, CodeInternal, "the engine is not available")
		return
	}
	inc, err := s.opts.Engine.OpenManualIncident(ctx, m)
	if errors.Is(err, store.ErrIncidentOpen) {
		writeError(w, http.StatusConflict, CodeConflict, "the monitor already has an open incident")
		return
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeIncidentDetail(w, r, inc, nil, http.StatusCreated)
}

func (s *Server) acknowledgeIncident(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	if s.opts.Engine == nil {
		writeError(w, http.StatusServiceUnavailable, CodeInternal, "the engine is not available")
		return
	}
	out, err := s.opts.Engine.AcknowledgeIncident(r.Context(), inc.ID, CallerFrom(r.Context()).Name())
	if err != nil && !errors.Is(err, store.ErrIncidentAcknowledged) {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, s.incidentObject(out, s.regionNames(r.Context())))
}

func (s *Server) resolveIncident(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	var b struct {
		Note string `json:"note"`
	}
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if len(b.Note) > 5000 {
		writeValidation(w, fieldErr("note", "must be at most 5000 characters"))
		return
	}
	if inc.ResolvedAt != nil {
		writeError(w, http.StatusConflict, CodeIncidentResolved, "the incident is already resolved")
		return
	}
	if s.opts.Engine == nil {
		writeError(w, http.StatusServiceUnavailable, CodeInternal, "the engine is not available")
		return
	}
	out, err := s.opts.Engine.ResolveIncident(r.Context(), inc.ID, b.Note, CallerFrom(r.Context()).Name())
	if errors.Is(err, store.ErrIncidentResolved) {
		writeError(w, http.StatusConflict, CodeIncidentResolved, "the incident is already resolved")
		return
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, s.incidentObject(out, s.regionNames(r.Context())))
}

func (s *Server) unsnoozeIncident(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	out, err := s.opts.Store.SnoozeIncident(r.Context(), inc.ID, nil)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, s.incidentObject(out, s.regionNames(r.Context())))
}

// escalation reports the escalation state of an incident: the monitor's
// policy and, per step, when it fires (or fired) unless acknowledged first.
func (s *Server) escalation(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	if s.opts.Escalation != nil {
		state, err := s.opts.Escalation.EscalationStatus(ctx, *inc)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		httpjson.Write(w, http.StatusOK, escalationObject(state))
		return
	}
	out := restapi.Escalation{IncidentID: inc.ID, Acknowledged: inc.AcknowledgedAt != nil,
		AcknowledgedAt: utcTime(inc.AcknowledgedAt), Resolved: inc.ResolvedAt != nil, Steps: []restapi.EscalationStep{}}
	m, err := s.monitorByID(ctx, inc.Namespace, inc.MonitorID)
	if err == nil && m.Spec.EscalationPolicyRef != nil {
		var p monv1.EscalationPolicy
		if err := s.opts.Client.Get(ctx, client.ObjectKey{Namespace: inc.Namespace, Name: m.Spec.EscalationPolicyRef.Name}, &p); err == nil {
			out.Policy = &restapi.EscalationPolicyRef{ID: string(p.UID), Name: p.Name, Repeat: p.Spec.Repeat}
			at := inc.StartedAt
			now := s.clock.Now()
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
					State: state, Targets: restapi.EscalationTargets{Channels: nonNil(channels), Emails: nonNil(step.Emails)}})
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

func (s *Server) listNotes(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	notes, err := s.opts.Store.ListNotes(r.Context(), inc.ID)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := []restapi.Note{}
	for _, n := range notes {
		out = append(out, noteObject(n))
	}
	httpjson.Write(w, http.StatusOK, out)
}

func (s *Server) addNote(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	var b struct {
		Body   *string `json:"body"`
		Public bool    `json:"public"`
	}
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.Body == nil || strings.TrimSpace(*b.Body) == "" || len(*b.Body) > 5000 {
		writeValidation(w, fieldErr("body", "is required, 1-5000 characters"))
		return
	}
	n, err := s.opts.Store.AddNote(r.Context(), store.Note{IncidentID: inc.ID, Body: *b.Body, Public: b.Public, Author: CallerFrom(r.Context()).Name()})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.Public && s.opts.Subscribers != nil {
		if err := s.opts.Subscribers.PublicUpdate(r.Context(), inc.Namespace, inc.MonitorID, inc.ID, n.Body); err != nil {
			s.log(r).Error(err, "notify status page subscribers")
		}
	}
	httpjson.Write(w, http.StatusCreated, noteObject(n))
}

func (s *Server) deleteNote(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	err := s.opts.Store.DeleteNote(r.Context(), inc.ID, chi.URLParam(r, "noteId"))
	if errors.Is(err, store.ErrNotFound) {
		writeNotFound(w, "Note")
		return
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) putPostmortem(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	var b struct {
		Postmortem *string `json:"postmortem"`
	}
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.Postmortem == nil || len(*b.Postmortem) > 50000 {
		writeValidation(w, fieldErr("postmortem", "is required, up to 50000 characters"))
		return
	}
	if err := s.opts.Store.SetPostmortem(r.Context(), inc.ID, *b.Postmortem); err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.IncidentPostmortem{IncidentID: inc.ID, Postmortem: *b.Postmortem})
}
