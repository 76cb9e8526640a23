package maintenance

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Handlers serve the maintenance windows of a workspace (MaintenanceWindow
// custom resources): readable with every key, changed only by the
// workspace owner.
type Handlers struct {
	d *core.Deps
}

// New returns the handlers over d.
func New(d *core.Deps) *Handlers { return &Handlers{d: d} }

// Routes registers /maintenance.
func (h *Handlers) Routes(rt *core.Router) {
	owner := core.WithAccess(core.OwnerOnly)
	rt.Handle(http.MethodGet, "/maintenance", h.list, core.Doc(apidoc.Op{Tag: "Maintenance", Summary: "Maintenance windows", Resp: []restapi.MaintenanceWindow{}}))
	rt.Handle(http.MethodPost, "/maintenance", h.create, owner, core.Doc(apidoc.Op{
		Tag:     "Maintenance",
		Summary: "Create a maintenance window",
		Body:    restapi.MaintenanceBody{},
		Status:  201,
		Resp:    restapi.MaintenanceWindow{},
	}))
	rt.Handle(http.MethodPut, "/maintenance/{id}", h.update, owner, core.Doc(apidoc.Op{
		Tag:     "Maintenance",
		Summary: "Change a maintenance window",
		Body:    restapi.MaintenanceBody{},
		Resp:    restapi.MaintenanceWindow{},
	}))
	rt.Handle(http.MethodPatch, "/maintenance/{id}", h.update, owner, core.Doc(apidoc.Op{
		Tag:     "Maintenance",
		Summary: "Change a maintenance window",
		Body:    restapi.MaintenanceBody{},
		Resp:    restapi.MaintenanceWindow{},
	}))
	rt.Handle(http.MethodDelete, "/maintenance/{id}", h.delete, owner, core.Doc(apidoc.Op{Tag: "Maintenance", Summary: "Delete a maintenance window", Status: 204}))
}

// maintenanceObject renders a window; references are shown as ids.
func maintenanceObject(mw *monv1.MaintenanceWindow, monitors, groups *core.ObjectUIDs) restapi.MaintenanceWindow {
	ids := func(refs []monv1.LocalObjectReference, idx *core.ObjectUIDs) []string {
		out := []string{}
		for _, ref := range refs {
			if u := idx.UIDOf(ref.Name); u != nil {
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
		rec = core.StrPtr(string(sp.Recurrence.Frequency))
	}
	tz := sp.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	impact := sp.Impact
	if impact == "" {
		impact = "medium"
	}
	return restapi.MaintenanceWindow{ID: string(mw.UID), Title: sp.Title, Description: core.StrPtr(sp.Description),
		StartsAt: core.ISOTime(sp.StartsAt.Time), EndsAt: core.ISOTime(sp.EndsAt.Time), TimeZone: tz, Recurrence: rec,
		Scope: string(sp.Scope), MonitorIDs: ids(sp.Monitors, monitors), GroupIDs: ids(sp.Groups, groups), Impact: impact,
		State: state, CurrentStart: core.MetaTimePtr(mw.Status.CurrentStart), CurrentEnd: core.MetaTimePtr(mw.Status.CurrentEnd),
		Cancelled: sp.Cancelled}
}

func (h *Handlers) list(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	var list monv1.MaintenanceWindowList
	if err := h.d.List(ctx, &list, c.Namespace); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	monitors, err := h.d.UIDIndex(ctx, &monv1.MonitorList{}, c.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	groups, err := h.d.UIDIndex(ctx, &monv1.MonitorGroupList{}, c.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
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

// The longest lists of ids a window names (the document's field bounds,
// restapi.MaintenanceBody).
const (
	maxWindowMonitors = 500
	maxWindowGroups   = 100
)

// windowRefs are the monitors and groups a body names, resolved once per
// request, with the field errors of the ids that name nothing.
type windowRefs struct {
	monitors, groups       []monv1.LocalObjectReference
	monitorErrs, groupErrs []core.FieldError
}

// resolveRefs refuses an over-limit list of ids before looking any up
// (VALIDATION_ERROR naming the list), then resolves the ids b sends with
// core.Deps.RefsByID: bounded reads, however many ids name nothing.
func (h *Handlers) resolveRefs(ctx context.Context, ns string, b *restapi.MaintenanceBody) (*windowRefs, error) {
	var over []core.FieldError
	for _, ae := range []*core.Error{
		core.TooManyIDs("monitor_ids", len(b.MonitorIDs.Value()), maxWindowMonitors, "monitors"),
		core.TooManyIDs("group_ids", len(b.GroupIDs.Value()), maxWindowGroups, "monitor groups"),
	} {
		if ae != nil {
			over = append(over, ae.Body.Errors...)
		}
	}
	if len(over) > 0 {
		return nil, core.ValidationError(over...)
	}
	x := &windowRefs{}
	var err error
	if b.MonitorIDs.Set {
		if x.monitors, x.monitorErrs, err = h.d.RefsByID(ctx, &monv1.MonitorList{}, ns, b.MonitorIDs.Value(), "monitor_ids", "monitor"); err != nil {
			return nil, err
		}
	}
	if b.GroupIDs.Set {
		if x.groups, x.groupErrs, err = h.d.RefsByID(ctx, &monv1.MonitorGroupList{}, ns, b.GroupIDs.Value(), "group_ids", "monitor group"); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// applyMaintenanceBody writes the sent fields of b onto mw and validates the
// result the way admission does, with REST field names.
func applyMaintenanceBody(mw *monv1.MaintenanceWindow, b *restapi.MaintenanceBody, create bool, refs *windowRefs) []core.FieldError {
	var errs []core.FieldError
	sp := &mw.Spec
	if b.Title.Set {
		sp.Title = strings.TrimSpace(b.Title.Value())
	}
	if (create || b.Title.Set) && (sp.Title == "" || len(sp.Title) > 255) {
		errs = append(errs, core.FieldErr("title", "must be 1-255 characters"))
	}
	if b.Description.Set {
		sp.Description = b.Description.Value()
		if len(sp.Description) > 5000 {
			errs = append(errs, core.FieldErr("description", "must be at most 5000 characters"))
		}
	}
	parseTime := func(f string, v core.Nullable[string], dst *metav1.Time) {
		if !v.Set {
			if create {
				errs = append(errs, core.FieldErr(f, "is required"))
			}
			return
		}
		t, err := time.Parse(time.RFC3339Nano, v.Value())
		if err != nil {
			errs = append(errs, core.FieldErr(f, "must be an ISO 8601 timestamp"))
			return
		}
		*dst = metav1.NewTime(t.UTC())
	}
	parseTime("starts_at", b.StartsAt, &sp.StartsAt)
	parseTime("ends_at", b.EndsAt, &sp.EndsAt)
	if !sp.StartsAt.IsZero() && !sp.EndsAt.IsZero() && !sp.EndsAt.After(sp.StartsAt.Time) {
		errs = append(errs, core.FieldErr("ends_at", "must be after starts_at"))
	}
	if b.TimeZone.Set {
		sp.TimeZone = b.TimeZone.Value()
		if _, err := time.LoadLocation(sp.TimeZone); err != nil || len(sp.TimeZone) > 64 {
			errs = append(errs, core.FieldErr("time_zone", "must be an IANA time zone such as Europe/Berlin"))
		}
	}
	if b.Recurrence.Set {
		rb := b.Recurrence.Value()
		switch {
		case b.Recurrence.Null || rb.Frequency == "" || rb.Frequency == "none":
			sp.Recurrence = nil
		case rb.Frequency != "daily" && rb.Frequency != "weekly" && rb.Frequency != "monthly":
			errs = append(errs, core.FieldErr("recurrence.frequency", "must be one of none, daily, weekly, monthly"))
		case rb.Interval < 0 || rb.Interval > 52:
			errs = append(errs, core.FieldErr("recurrence.interval", "must be between 1 and 52"))
		default:
			rec := &monv1.Recurrence{Frequency: monv1.RecurrenceFrequency(rb.Frequency), Interval: rb.Interval}
			if rb.Until != nil {
				t, err := time.Parse(time.RFC3339Nano, *rb.Until)
				if err != nil {
					errs = append(errs, core.FieldErr("recurrence.until", "must be an ISO 8601 timestamp"))
				} else {
					rec.Until = &metav1.Time{Time: t.UTC()}
				}
			}
			sp.Recurrence = rec
		}
	}
	if b.MonitorIDs.Set {
		sp.Monitors = refs.monitors
		errs = append(errs, refs.monitorErrs...)
	}
	if b.GroupIDs.Set {
		sp.Groups = refs.groups
		errs = append(errs, refs.groupErrs...)
	}
	switch {
	case b.Scope.Set && !b.Scope.Null:
		sp.Scope = monv1.MaintenanceScope(b.Scope.Value())
	case create && len(sp.Monitors) > 0:
		sp.Scope = "monitors"
	case create && len(sp.Groups) > 0:
		sp.Scope = "groups"
	case create || sp.Scope == "":
		sp.Scope = "all"
	}
	switch sp.Scope {
	case "all":
		sp.Monitors, sp.Groups = nil, nil
	case "monitors":
		sp.Groups = nil
		if len(sp.Monitors) == 0 {
			errs = append(errs, core.FieldErr("monitor_ids", "is required when scope is monitors"))
		}
	case "groups":
		sp.Monitors = nil
		if len(sp.Groups) == 0 {
			errs = append(errs, core.FieldErr("group_ids", "is required when scope is groups"))
		}
	default:
		errs = append(errs, core.FieldErr("scope", "must be one of all, monitors, groups"))
	}
	if b.Impact.Set {
		sp.Impact = b.Impact.Value()
		if sp.Impact != "" && sp.Impact != "low" && sp.Impact != "medium" && sp.Impact != "high" {
			errs = append(errs, core.FieldErr("impact", "must be one of low, medium, high"))
		}
	}
	if b.Cancelled.Set && !b.Cancelled.Null {
		sp.Cancelled = b.Cancelled.Value()
	}
	return errs
}

// maintenanceFieldPath maps a MaintenanceWindow field path to the REST name.
func maintenanceFieldPath(p string) string {
	switch {
	case strings.HasPrefix(p, "spec.monitors"):
		return "monitor_ids"
	case strings.HasPrefix(p, "spec.groups"):
		return "group_ids"
	}
	return core.SnakePath(p)
}

// uids indexes the monitors and groups of ns by uid (from the cache), to
// show a window's references as ids.
func (h *Handlers) uids(ctx context.Context, ns string) (monitors, groups *core.ObjectUIDs, err error) {
	if monitors, err = h.d.UIDIndex(ctx, &monv1.MonitorList{}, ns); err != nil {
		return nil, nil, err
	}
	if groups, err = h.d.UIDIndex(ctx, &monv1.MonitorGroupList{}, ns); err != nil {
		return nil, nil, err
	}
	return monitors, groups, nil
}

func (h *Handlers) create(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	var b restapi.MaintenanceBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	refs, err := h.resolveRefs(ctx, c.Namespace, &b)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	mw := &monv1.MaintenanceWindow{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace}}
	if errs := applyMaintenanceBody(mw, &b, true, refs); len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	mw.GenerateName = core.ObjectNamePrefix(mw.Spec.Title, "maintenance")
	if err := h.d.Client.Create(ctx, mw); err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, c.Namespace, err, maintenanceFieldPath))
		return
	}
	h.respond(w, r, mw, http.StatusCreated)
}

// respond answers with window mw, its references shown as ids.
func (h *Handlers) respond(w http.ResponseWriter, r *http.Request, mw *monv1.MaintenanceWindow, status int) {
	monitors, groups, err := h.uids(r.Context(), mw.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, status, maintenanceObject(mw, monitors, groups))
}

func (h *Handlers) pathWindow(w http.ResponseWriter, r *http.Request) *monv1.MaintenanceWindow {
	return core.PathObject[*monv1.MaintenanceWindow](h.d, w, r, &monv1.MaintenanceWindowList{}, "id", "Maintenance window")
}

// update serves PUT and PATCH: only sent fields change.
func (h *Handlers) update(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var b restapi.MaintenanceBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	refs, err := h.resolveRefs(ctx, core.CallerFrom(ctx).Namespace, &b)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	mw := h.pathWindow(w, r)
	if mw == nil {
		return
	}
	err = h.d.Mutate(ctx, mw, func() error {
		if errs := applyMaintenanceBody(mw, &b, false, refs); len(errs) > 0 {
			return core.ValidationError(errs...)
		}
		return nil
	})
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, mw.Namespace, err, maintenanceFieldPath))
		return
	}
	h.respond(w, r, mw, http.StatusOK)
}

func (h *Handlers) delete(w http.ResponseWriter, r *http.Request) {
	mw := h.pathWindow(w, r)
	if mw == nil {
		return
	}
	if err := h.d.DeleteObject(r.Context(), mw); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
