package reliability

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// SLO targets map onto SLO CRs, one per monitor (create-or-replace).

func sloObject(o *monv1.SLO, monitors *core.ObjectUIDs) restapi.SLOTarget {
	out := restapi.SLOTarget{ID: string(o.UID), MonitorID: monitors.UIDOf(o.Spec.MonitorRef.Name), MonitorName: o.Spec.MonitorRef.Name,
		TargetPercentage: o.Spec.TargetPercentage, SLIType: string(o.Spec.SLIType), WindowMinutes: o.Spec.WindowMinutes,
		BurnRateFastThreshold: o.Spec.BurnRateFastThreshold, BurnRateSlowThreshold: o.Spec.BurnRateSlowThreshold,
		IsEnabled: o.Spec.Enabled == nil || *o.Spec.Enabled, CurrentSLI: o.Status.CurrentSLI,
		ErrorBudgetRemainingPercent: o.Status.ErrorBudgetRemainingPercent, ErrorBudgetRemainingMinutes: o.Status.ErrorBudgetRemainingMinutes,
		CreatedAt: core.ISOTime(o.CreationTimestamp.Time)}
	return out
}

// applySLO writes the sent fields of b onto spec and validates the result.
func applySLO(b *restapi.SLOTargetBody, spec *monv1.SLOSpec) []core.FieldError {
	var errs []core.FieldError
	if b.TargetPercentage.Set {
		spec.TargetPercentage = b.TargetPercentage.Value()
	}
	if b.SLIType.Set {
		spec.SLIType = monv1.SLIType(b.SLIType.Value())
	}
	if b.WindowMinutes.Set {
		spec.WindowMinutes = b.WindowMinutes.Value()
	}
	if b.BurnRateFastThreshold.Set {
		spec.BurnRateFastThreshold = b.BurnRateFastThreshold.Value()
	}
	if b.BurnRateSlowThreshold.Set {
		spec.BurnRateSlowThreshold = b.BurnRateSlowThreshold.Value()
	}
	if b.IsEnabled.Set && !b.IsEnabled.Null {
		spec.Enabled = ptr.To(b.IsEnabled.Value())
	}
	monitor.DefaultSLO(spec)
	if spec.TargetPercentage < 90 || spec.TargetPercentage > 99.999 {
		errs = append(errs, core.FieldErr("target_percentage", "must be between 90 and 99.999"))
	}
	if spec.SLIType != monv1.SLIAvailability && spec.SLIType != monv1.SLILatency {
		errs = append(errs, core.FieldErr("sli_type", "must be availability or latency"))
	}
	if spec.WindowMinutes < 60 || spec.WindowMinutes > 43200 {
		errs = append(errs, core.FieldErr("window_minutes", "must be between 60 and 43200"))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"burn_rate_fast_threshold", spec.BurnRateFastThreshold}, {"burn_rate_slow_threshold", spec.BurnRateSlowThreshold}} {
		if f.v < 0.1 || f.v > 100 {
			errs = append(errs, core.FieldErr(f.name, "must be between 0.1 and 100"))
		}
	}
	return errs
}

func (h *Handlers) listSLOs(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	var list monv1.SLOList
	if err := h.d.List(ctx, &list, c.Namespace); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	monitors, err := h.d.UIDIndex(ctx, &monv1.MonitorList{}, c.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out := []restapi.SLOTarget{}
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil {
			out = append(out, sloObject(&list.Items[i], monitors))
		}
	}
	slices.SortFunc(out, func(a, b restapi.SLOTarget) int { return strings.Compare(a.CreatedAt, b.CreatedAt) })
	httpjson.Write(w, http.StatusOK, out)
}

func (h *Handlers) writeSLO(w http.ResponseWriter, r *http.Request, o *monv1.SLO, code int, monitorID string) {
	monitors, err := h.d.UIDIndex(r.Context(), &monv1.MonitorList{}, o.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out := sloObject(o, monitors)
	if out.MonitorID == nil {
		out.MonitorID = core.StrPtr(monitorID)
	}
	httpjson.Write(w, code, out)
}

// upsertSLO creates the monitor's SLO target or replaces the existing one.
func (h *Handlers) upsertSLO(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	var b restapi.SLOTargetBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	var errs []core.FieldError
	if !b.MonitorID.Set || b.MonitorID.Value() == "" {
		errs = append(errs, core.FieldErr("monitor_id", "is required"))
	}
	if !b.TargetPercentage.Set {
		errs = append(errs, core.FieldErr("target_percentage", "is required"))
	}
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	m, err := h.d.MonitorByID(ctx, c.Namespace, b.MonitorID.Value())
	if err != nil {
		core.WriteValidation(w, core.FieldErr("monitor_id", "monitor not found"))
		return
	}
	var list monv1.SLOList
	if err := h.d.Reader.List(ctx, &list, client.InNamespace(c.Namespace)); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	idx := slices.IndexFunc(list.Items, func(o monv1.SLO) bool { return o.Spec.MonitorRef.Name == m.Name && o.DeletionTimestamp == nil })
	if idx < 0 {
		o := &monv1.SLO{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, GenerateName: m.Name + "-slo-"},
			Spec: monv1.SLOSpec{MonitorRef: monv1.LocalObjectReference{Name: m.Name}}}
		if errs := applySLO(&b, &o.Spec); len(errs) > 0 {
			core.WriteValidation(w, errs...)
			return
		}
		if err := h.d.Client.Create(ctx, o); err != nil {
			core.WriteErr(w, r, h.d.WriteFailed(ctx, c.Namespace, err, core.SnakePath))
			return
		}
		h.writeSLO(w, r, o, http.StatusCreated, string(m.UID))
		return
	}
	o := &list.Items[idx]
	// Replace: unsent fields go back to their defaults.
	err = h.d.Mutate(ctx, o, func() error {
		o.Spec = monv1.SLOSpec{MonitorRef: o.Spec.MonitorRef}
		if errs := applySLO(&b, &o.Spec); len(errs) > 0 {
			return core.ValidationError(errs...)
		}
		return nil
	})
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, c.Namespace, err, core.SnakePath))
		return
	}
	h.writeSLO(w, r, o, http.StatusOK, string(m.UID))
}

func (h *Handlers) pathSLO(w http.ResponseWriter, r *http.Request) *monv1.SLO {
	return core.PathObject[*monv1.SLO](h.d, w, r, &monv1.SLOList{}, "id", "SLO target")
}

func (h *Handlers) updateSLO(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	o := h.pathSLO(w, r)
	if o == nil {
		return
	}
	var b restapi.SLOTargetBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if b.MonitorID.Set {
		core.WriteValidation(w, core.FieldErr("monitor_id", "cannot change; create a target for the other monitor"))
		return
	}
	err := h.d.Mutate(ctx, o, func() error {
		if errs := applySLO(&b, &o.Spec); len(errs) > 0 {
			return core.ValidationError(errs...)
		}
		return nil
	})
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, o.Namespace, err, core.SnakePath))
		return
	}
	h.writeSLO(w, r, o, http.StatusOK, "")
}

func (h *Handlers) deleteSLO(w http.ResponseWriter, r *http.Request) {
	o := h.pathSLO(w, r)
	if o == nil {
		return
	}
	if err := h.d.DeleteObject(r.Context(), o); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Dependency is one parent → child edge of the reliability API. It is
// stored as the child Monitor's spec.dependsOn entry; its id is derived from
// the two monitor ids, so it is stable without a store of its own.
type Dependency struct {
	ID              string `json:"id"`
	ParentMonitorID string `json:"parent_monitor_id" openapi:"format=uuid"`
	ChildMonitorID  string `json:"child_monitor_id" openapi:"format=uuid"`
	SuppressionMode string `json:"suppression_mode"`
	ParentName      string `json:"parent_monitor_name"`
	ChildName       string `json:"child_monitor_name"`
}

const suppressChildIfParentDown = "suppress_child_if_parent_down"

func dependencyID(child, parent string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(child+"/"+parent)).String()
}

// dependencies lists every edge of the caller's workspace.
func (h *Handlers) dependencies(ctx context.Context, ns string) ([]Dependency, error) {
	var list monv1.MonitorList
	if err := h.d.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	byName := map[string]*monv1.Monitor{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	out := []Dependency{}
	for i := range list.Items {
		child := &list.Items[i]
		for _, ref := range child.Spec.DependsOn {
			parent, ok := byName[ref.Name]
			if !ok {
				continue
			}
			out = append(out, Dependency{
				ID: dependencyID(string(child.UID), string(parent.UID)), ParentMonitorID: string(parent.UID),
				ChildMonitorID: string(child.UID), SuppressionMode: suppressChildIfParentDown,
				ParentName: parent.Spec.Name, ChildName: child.Spec.Name,
			})
		}
	}
	return out, nil
}

// listDependencies answers GET /reliability/dependencies.
func (h *Handlers) listDependencies(w http.ResponseWriter, r *http.Request) {
	deps, err := h.dependencies(r.Context(), core.CallerFrom(r.Context()).Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, deps)
}

// createDependency answers POST /reliability/dependencies (owner only): the
// child monitor gains the parent in spec.dependsOn.
func (h *Handlers) createDependency(w http.ResponseWriter, r *http.Request) {
	var body restapi.DependencyBody
	if err := core.DecodeJSON(r, &body, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	var errs []core.FieldError
	if body.ParentMonitorID == "" {
		errs = append(errs, core.FieldError{Field: "parent_monitor_id", Message: "is required"})
	}
	if body.ChildMonitorID == "" {
		errs = append(errs, core.FieldError{Field: "child_monitor_id", Message: "is required"})
	}
	if body.ParentMonitorID != "" && body.ParentMonitorID == body.ChildMonitorID {
		errs = append(errs, core.FieldError{Field: "child_monitor_id", Message: "a monitor cannot depend on itself"})
	}
	if body.SuppressionMode != nil && *body.SuppressionMode != suppressChildIfParentDown {
		errs = append(errs, core.FieldError{Field: "suppression_mode", Message: "must be " + suppressChildIfParentDown})
	}
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	ctx := r.Context()
	ns := core.CallerFrom(ctx).Namespace
	parent, err := h.d.MonitorByID(ctx, ns, body.ParentMonitorID)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	child, err := h.d.MonitorByID(ctx, ns, body.ChildMonitorID)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	err = h.d.Mutate(ctx, child, func() error {
		for _, ref := range child.Spec.DependsOn {
			if ref.Name == parent.Name {
				return nil
			}
		}
		child.Spec.DependsOn = append(child.Spec.DependsOn, monv1.LocalObjectReference{Name: parent.Name})
		return nil
	})
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusCreated, Dependency{
		ID: dependencyID(string(child.UID), string(parent.UID)), ParentMonitorID: string(parent.UID), ChildMonitorID: string(child.UID),
		SuppressionMode: suppressChildIfParentDown, ParentName: parent.Spec.Name, ChildName: child.Spec.Name,
	})
}

// deleteDependency answers DELETE /reliability/dependencies/{id} (owner only).
func (h *Handlers) deleteDependency(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ns := core.CallerFrom(ctx).Namespace
	deps, err := h.dependencies(ctx, ns)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	for _, d := range deps {
		if d.ID != chi.URLParam(r, "id") {
			continue
		}
		child, err := h.d.MonitorByID(ctx, ns, d.ChildMonitorID)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		parent, err := h.d.MonitorByID(ctx, ns, d.ParentMonitorID)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		err = h.d.Mutate(ctx, child, func() error {
			kept := child.Spec.DependsOn[:0]
			for _, ref := range child.Spec.DependsOn {
				if ref.Name != parent.Name {
					kept = append(kept, ref)
				}
			}
			child.Spec.DependsOn = kept
			return nil
		})
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	core.WriteErr(w, r, core.ErrNotFound)
}
