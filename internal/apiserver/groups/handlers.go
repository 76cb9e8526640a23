package groups

import (
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

func groupObject(g *monv1.MonitorGroup, monitors []monv1.Monitor) restapi.MonitorGroup {
	n := 0
	for _, m := range monitors {
		if m.Spec.GroupRef != nil && m.Spec.GroupRef.Name == g.Name {
			n++
		}
	}
	return restapi.MonitorGroup{ID: string(g.UID), Name: g.Spec.Name, Description: core.StrPtr(g.Spec.Description),
		NotificationEmails: core.NonNil(g.Spec.NotificationEmails), MonitorCount: n, CreatedAt: core.ISOTime(g.CreationTimestamp.Time)}
}

func (h *Handlers) listGroups(w http.ResponseWriter, r *http.Request) {
	var list monv1.MonitorGroupList
	if err := h.d.List(r.Context(), &list, core.CallerFrom(r.Context()).Namespace); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	monitors, err := h.d.NamespaceMonitors(r)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out := []restapi.MonitorGroup{}
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil {
			out = append(out, groupObject(&list.Items[i], monitors))
		}
	}
	httpjson.Write(w, http.StatusOK, out)
}

func (h *Handlers) pathGroup(w http.ResponseWriter, r *http.Request) *monv1.MonitorGroup {
	return core.PathObject[*monv1.MonitorGroup](h.d, w, r, &monv1.MonitorGroupList{}, "id", "Monitor group")
}

func (h *Handlers) groupSummary(w http.ResponseWriter, r *http.Request) {
	g := h.pathGroup(w, r)
	if g == nil {
		return
	}
	monitors, err := h.d.NamespaceMonitors(r)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	var members []monv1.Monitor
	for _, m := range monitors {
		if m.Spec.GroupRef != nil && m.Spec.GroupRef.Name == g.Name {
			members = append(members, m)
		}
	}
	sum := core.Summarize(members)
	httpjson.Write(w, http.StatusOK, restapi.GroupSummary{Group: groupObject(g, monitors), Total: sum.Total, Counts: sum.Counts,
		OpenIncidents: sum.OpenIncidents, Uptime24h: sum.Uptime24h})
}

// applyGroupBody writes a group body; notification_emails are owner-only.
func applyGroupBody(g *monv1.MonitorGroup, b *restapi.MonitorGroupBody, create bool) error {
	if b.NotificationEmails.Set {
		return core.NewError(http.StatusForbidden, core.CodeWorkspaceOwner, "a group's notification_emails can only be changed by the workspace owner")
	}
	if b.Name.Set {
		g.Spec.Name = strings.TrimSpace(b.Name.Value())
	} else if create {
		return core.ValidationError(core.FieldErr("name", "is required"))
	}
	if b.Description.Set {
		g.Spec.Description = b.Description.Value()
	}
	errs := monitor.ValidateMonitorGroupSpec(&g.Spec, field.NewPath("spec"))
	if len(b.Description.Value()) > 1000 {
		errs = append(errs, field.TooLong(field.NewPath("spec", "description"), "", 1000))
	}
	if len(errs) > 0 {
		return core.ValidationError(core.FromFieldErrors(errs, core.SnakePath)...)
	}
	return nil
}

func (h *Handlers) createGroup(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	var b restapi.MonitorGroupBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	g := &monv1.MonitorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace}}
	if err := applyGroupBody(g, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	g.GenerateName = core.ObjectNamePrefix(g.Spec.Name, "group")
	if err := h.d.Client.Create(ctx, g); err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, c.Namespace, err, core.SnakePath))
		return
	}
	httpjson.Write(w, http.StatusCreated, groupObject(g, nil))
}

func (h *Handlers) updateGroup(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	g := h.pathGroup(w, r)
	if g == nil {
		return
	}
	var b restapi.MonitorGroupBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if err := h.d.Mutate(ctx, g, func() error { return applyGroupBody(g, &b, false) }); err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, g.Namespace, err, core.SnakePath))
		return
	}
	monitors, err := h.d.NamespaceMonitors(r)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, groupObject(g, monitors))
}

// deleteGroup deletes a group and takes its monitors out of it, so their
// later updates do not fail admission on a missing group.
func (h *Handlers) deleteGroup(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	g := h.pathGroup(w, r)
	if g == nil {
		return
	}
	if err := h.d.DeleteObject(ctx, g); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	monitors, err := h.d.NamespaceMonitors(r)
	if err == nil {
		for i := range monitors {
			m := &monitors[i]
			if m.Spec.GroupRef == nil || m.Spec.GroupRef.Name != g.Name {
				continue
			}
			if err := h.d.Mutate(ctx, m, func() error { m.Spec.GroupRef = nil; return nil }); err != nil {
				core.LogFrom(ctx).Error(err, "unable to take a monitor out of a deleted group", "monitor", m.Name)
			}
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
