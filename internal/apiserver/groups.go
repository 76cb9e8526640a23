package apiserver

import (
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// groupBody is the create and rename body of a group.
type groupBody struct {
	Name               nullable[string]   `json:"name"`
	Description        nullable[string]   `json:"description"`
	NotificationEmails nullable[[]string] `json:"notification_emails"`
}

func groupObject(g *monv1.MonitorGroup, monitors []monv1.Monitor) restapi.MonitorGroup {
	n := 0
	for _, m := range monitors {
		if m.Spec.GroupRef != nil && m.Spec.GroupRef.Name == g.Name {
			n++
		}
	}
	return restapi.MonitorGroup{ID: string(g.UID), Name: g.Spec.Name, Description: strPtr(g.Spec.Description),
		NotificationEmails: nonNil(g.Spec.NotificationEmails), MonitorCount: n, CreatedAt: isoTime(g.CreationTimestamp.Time)}
}

func (s *Server) namespaceMonitors(r *http.Request) ([]monv1.Monitor, error) {
	var list monv1.MonitorList
	if err := s.list(r.Context(), &list, CallerFrom(r.Context()).Namespace); err != nil {
		return nil, err
	}
	return liveMonitors(list.Items), nil
}

func (s *Server) listGroups(w http.ResponseWriter, r *http.Request) {
	var list monv1.MonitorGroupList
	if err := s.list(r.Context(), &list, CallerFrom(r.Context()).Namespace); err != nil {
		s.writeErr(w, r, err)
		return
	}
	monitors, err := s.namespaceMonitors(r)
	if err != nil {
		s.writeErr(w, r, err)
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

func (s *Server) pathGroup(w http.ResponseWriter, r *http.Request) *monv1.MonitorGroup {
	return pathObject[*monv1.MonitorGroup](s, w, r, &monv1.MonitorGroupList{}, "id", "Monitor group")
}

func (s *Server) groupSummary(w http.ResponseWriter, r *http.Request) {
	g := s.pathGroup(w, r)
	if g == nil {
		return
	}
	monitors, err := s.namespaceMonitors(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	var members []monv1.Monitor
	for _, m := range monitors {
		if m.Spec.GroupRef != nil && m.Spec.GroupRef.Name == g.Name {
			members = append(members, m)
		}
	}
	sum := summarize(members)
	httpjson.Write(w, http.StatusOK, restapi.GroupSummary{Group: groupObject(g, monitors), Total: sum.Total, Counts: sum.Counts,
		OpenIncidents: sum.OpenIncidents, Uptime24h: sum.Uptime24h})
}

// applyGroupBody writes a group body; notification_emails are owner-only.
func applyGroupBody(g *monv1.MonitorGroup, b *groupBody, create bool) error {
	if b.NotificationEmails.Set {
		return newAPIError(http.StatusForbidden, CodeWorkspaceOwner, "a group's notification_emails can only be changed by the workspace owner")
	}
	if b.Name.Set {
		g.Spec.Name = strings.TrimSpace(b.Name.value())
	} else if create {
		return validationError(fieldErr("name", "is required"))
	}
	if b.Description.Set {
		g.Spec.Description = b.Description.value()
	}
	errs := monitor.ValidateMonitorGroupSpec(&g.Spec, field.NewPath("spec"))
	if len(b.Description.value()) > 1000 {
		errs = append(errs, field.TooLong(field.NewPath("spec", "description"), "", 1000))
	}
	if len(errs) > 0 {
		return validationError(fromFieldErrors(errs, snakePath)...)
	}
	return nil
}

func (s *Server) createGroup(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	var b groupBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	g := &monv1.MonitorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace}}
	if err := applyGroupBody(g, &b, true); err != nil {
		s.writeErr(w, r, err)
		return
	}
	g.GenerateName = objectNamePrefix(g.Spec.Name, "group")
	if err := s.opts.Client.Create(ctx, g); err != nil {
		s.writeErr(w, r, s.writeFailed(ctx, c.Namespace, err, snakePath))
		return
	}
	httpjson.Write(w, http.StatusCreated, groupObject(g, nil))
}

func (s *Server) updateGroup(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	g := s.pathGroup(w, r)
	if g == nil {
		return
	}
	var b groupBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := s.mutate(ctx, g, func() error { return applyGroupBody(g, &b, false) }); err != nil {
		s.writeErr(w, r, s.writeFailed(ctx, g.Namespace, err, snakePath))
		return
	}
	monitors, err := s.namespaceMonitors(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, groupObject(g, monitors))
}

// deleteGroup deletes a group and takes its monitors out of it, so their
// later updates do not fail admission on a missing group.
func (s *Server) deleteGroup(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	g := s.pathGroup(w, r)
	if g == nil {
		return
	}
	if err := s.deleteObject(ctx, g); err != nil {
		s.writeErr(w, r, err)
		return
	}
	monitors, err := s.namespaceMonitors(r)
	if err == nil {
		for i := range monitors {
			m := &monitors[i]
			if m.Spec.GroupRef == nil || m.Spec.GroupRef.Name != g.Name {
				continue
			}
			if err := s.mutate(ctx, m, func() error { m.Spec.GroupRef = nil; return nil }); err != nil {
				ctrlLog(ctx).Error(err, "unable to take a monitor out of a deleted group", "monitor", m.Name)
			}
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
