package apiserver

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// SLO targets map onto SLO CRs, one per monitor (create-or-replace).

func sloObject(o *monv1.SLO, monitors *objectUIDs) restapi.SLOTarget {
	out := restapi.SLOTarget{ID: string(o.UID), MonitorID: monitors.uidOf(o.Spec.MonitorRef.Name), MonitorName: o.Spec.MonitorRef.Name,
		TargetPercentage: o.Spec.TargetPercentage, SLIType: string(o.Spec.SLIType), WindowMinutes: o.Spec.WindowMinutes,
		BurnRateFastThreshold: o.Spec.BurnRateFastThreshold, BurnRateSlowThreshold: o.Spec.BurnRateSlowThreshold,
		IsEnabled: o.Spec.Enabled == nil || *o.Spec.Enabled, CurrentSLI: o.Status.CurrentSLI,
		ErrorBudgetRemainingPercent: o.Status.ErrorBudgetRemainingPercent, ErrorBudgetRemainingMinutes: o.Status.ErrorBudgetRemainingMinutes,
		CreatedAt: isoTime(o.CreationTimestamp.Time)}
	return out
}

type sloBody struct {
	MonitorID             nullable[string]  `json:"monitor_id"`
	TargetPercentage      nullable[float64] `json:"target_percentage"`
	SLIType               nullable[string]  `json:"sli_type"`
	WindowMinutes         nullable[int32]   `json:"window_minutes"`
	BurnRateFastThreshold nullable[float64] `json:"burn_rate_fast_threshold"`
	BurnRateSlowThreshold nullable[float64] `json:"burn_rate_slow_threshold"`
	IsEnabled             nullable[bool]    `json:"is_enabled"`
}

// apply writes the sent fields onto spec and validates the result.
func (b *sloBody) apply(spec *monv1.SLOSpec) []FieldError {
	var errs []FieldError
	if b.TargetPercentage.Set {
		spec.TargetPercentage = b.TargetPercentage.value()
	}
	if b.SLIType.Set {
		spec.SLIType = monv1.SLIType(b.SLIType.value())
	}
	if b.WindowMinutes.Set {
		spec.WindowMinutes = b.WindowMinutes.value()
	}
	if b.BurnRateFastThreshold.Set {
		spec.BurnRateFastThreshold = b.BurnRateFastThreshold.value()
	}
	if b.BurnRateSlowThreshold.Set {
		spec.BurnRateSlowThreshold = b.BurnRateSlowThreshold.value()
	}
	if b.IsEnabled.Set && !b.IsEnabled.Null {
		spec.Enabled = ptrTo(b.IsEnabled.value())
	}
	monitor.DefaultSLO(spec)
	if spec.TargetPercentage < 90 || spec.TargetPercentage > 99.999 {
		errs = append(errs, fieldErr("target_percentage", "must be between 90 and 99.999"))
	}
	if spec.SLIType != monv1.SLIAvailability && spec.SLIType != monv1.SLILatency {
		errs = append(errs, fieldErr("sli_type", "must be availability or latency"))
	}
	if spec.WindowMinutes < 60 || spec.WindowMinutes > 43200 {
		errs = append(errs, fieldErr("window_minutes", "must be between 60 and 43200"))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"burn_rate_fast_threshold", spec.BurnRateFastThreshold}, {"burn_rate_slow_threshold", spec.BurnRateSlowThreshold}} {
		if f.v < 0.1 || f.v > 100 {
			errs = append(errs, fieldErr(f.name, "must be between 0.1 and 100"))
		}
	}
	return errs
}

func (s *Server) listSLOs(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	var list monv1.SLOList
	if err := s.list(ctx, &list, c.Namespace); err != nil {
		s.writeErr(w, r, err)
		return
	}
	monitors, err := s.uidIndex(ctx, &monv1.MonitorList{}, c.Namespace)
	if err != nil {
		s.writeErr(w, r, err)
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

func (s *Server) writeSLO(w http.ResponseWriter, r *http.Request, o *monv1.SLO, code int, monitorID string) {
	monitors, err := s.uidIndex(r.Context(), &monv1.MonitorList{}, o.Namespace)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := sloObject(o, monitors)
	if out.MonitorID == nil {
		out.MonitorID = strPtr(monitorID)
	}
	httpjson.Write(w, code, out)
}

// upsertSLO creates the monitor's SLO target or replaces the existing one.
func (s *Server) upsertSLO(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	var b sloBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var errs []FieldError
	if !b.MonitorID.Set || b.MonitorID.value() == "" {
		errs = append(errs, fieldErr("monitor_id", "is required"))
	}
	if !b.TargetPercentage.Set {
		errs = append(errs, fieldErr("target_percentage", "is required"))
	}
	if len(errs) > 0 {
		writeValidation(w, errs...)
		return
	}
	m, err := s.monitorByID(ctx, c.Namespace, b.MonitorID.value())
	if err != nil {
		writeValidation(w, fieldErr("monitor_id", "monitor not found"))
		return
	}
	var list monv1.SLOList
	if err := s.opts.Reader.List(ctx, &list, client.InNamespace(c.Namespace)); err != nil {
		s.writeErr(w, r, err)
		return
	}
	idx := slices.IndexFunc(list.Items, func(o monv1.SLO) bool { return o.Spec.MonitorRef.Name == m.Name && o.DeletionTimestamp == nil })
	if idx < 0 {
		o := &monv1.SLO{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, GenerateName: m.Name + "-slo-"},
			Spec: monv1.SLOSpec{MonitorRef: monv1.LocalObjectReference{Name: m.Name}}}
		if errs := b.apply(&o.Spec); len(errs) > 0 {
			writeValidation(w, errs...)
			return
		}
		if err := s.opts.Client.Create(ctx, o); err != nil {
			s.writeErr(w, r, s.writeFailed(ctx, c.Namespace, err, snakePath))
			return
		}
		s.writeSLO(w, r, o, http.StatusCreated, string(m.UID))
		return
	}
	o := &list.Items[idx]
	// Replace: unsent fields go back to their defaults.
	err = s.mutate(ctx, o, func() error {
		o.Spec = monv1.SLOSpec{MonitorRef: o.Spec.MonitorRef}
		if errs := b.apply(&o.Spec); len(errs) > 0 {
			return validationError(errs...)
		}
		return nil
	})
	if err != nil {
		s.writeErr(w, r, s.writeFailed(ctx, c.Namespace, err, snakePath))
		return
	}
	s.writeSLO(w, r, o, http.StatusOK, string(m.UID))
}

func (s *Server) pathSLO(w http.ResponseWriter, r *http.Request) *monv1.SLO {
	return pathObject[*monv1.SLO](s, w, r, &monv1.SLOList{}, "id", "SLO target")
}

func (s *Server) updateSLO(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	o := s.pathSLO(w, r)
	if o == nil {
		return
	}
	var b sloBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.MonitorID.Set {
		writeValidation(w, fieldErr("monitor_id", "cannot change; create a target for the other monitor"))
		return
	}
	err := s.mutate(ctx, o, func() error {
		if errs := b.apply(&o.Spec); len(errs) > 0 {
			return validationError(errs...)
		}
		return nil
	})
	if err != nil {
		s.writeErr(w, r, s.writeFailed(ctx, o.Namespace, err, snakePath))
		return
	}
	s.writeSLO(w, r, o, http.StatusOK, "")
}

func (s *Server) deleteSLO(w http.ResponseWriter, r *http.Request) {
	o := s.pathSLO(w, r)
	if o == nil {
		return
	}
	if err := s.deleteObject(r.Context(), o); err != nil {
		s.writeErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Dependency is one parent → child edge of the reliability API. It is
// stored as the child Monitor's spec.dependsOn entry; its id is derived from
// the two monitor ids, so it is stable without a store of its own.
type Dependency struct {
	ID              string `json:"id"`
	ParentMonitorID string `json:"parent_monitor_id"`
	ChildMonitorID  string `json:"child_monitor_id"`
	SuppressionMode string `json:"suppression_mode"`
	ParentName      string `json:"parent_monitor_name"`
	ChildName       string `json:"child_monitor_name"`
}

const suppressChildIfParentDown = "suppress_child_if_parent_down"

func dependencyID(child, parent string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(child+"/"+parent)).String()
}

// dependencies lists every edge of the caller's workspace.
func (s *Server) dependencies(ctx context.Context, ns string) ([]Dependency, error) {
	var list monv1.MonitorList
	if err := s.opts.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
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
func (s *Server) listDependencies(w http.ResponseWriter, r *http.Request) {
	deps, err := s.dependencies(r.Context(), CallerFrom(r.Context()).Namespace)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, deps)
}

// createDependency answers POST /reliability/dependencies (owner only): the
// child monitor gains the parent in spec.dependsOn.
func (s *Server) createDependency(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ParentMonitorID string  `json:"parent_monitor_id"`
		ChildMonitorID  string  `json:"child_monitor_id"`
		SuppressionMode *string `json:"suppression_mode"`
	}
	if err := decodeJSON(r, &body, true); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var errs []FieldError
	if body.ParentMonitorID == "" {
		errs = append(errs, FieldError{Field: "parent_monitor_id", Message: "is required"})
	}
	if body.ChildMonitorID == "" {
		errs = append(errs, FieldError{Field: "child_monitor_id", Message: "is required"})
	}
	if body.ParentMonitorID != "" && body.ParentMonitorID == body.ChildMonitorID {
		errs = append(errs, FieldError{Field: "child_monitor_id", Message: "a monitor cannot depend on itself"})
	}
	if body.SuppressionMode != nil && *body.SuppressionMode != suppressChildIfParentDown {
		errs = append(errs, FieldError{Field: "suppression_mode", Message: "must be " + suppressChildIfParentDown})
	}
	if len(errs) > 0 {
		writeValidation(w, errs...)
		return
	}
	ctx := r.Context()
	ns := CallerFrom(ctx).Namespace
	parent, err := s.monitorByID(ctx, ns, body.ParentMonitorID)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	child, err := s.monitorByID(ctx, ns, body.ChildMonitorID)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	err = s.mutate(ctx, child, func() error {
		for _, ref := range child.Spec.DependsOn {
			if ref.Name == parent.Name {
				return nil
			}
		}
		child.Spec.DependsOn = append(child.Spec.DependsOn, monv1.LocalObjectReference{Name: parent.Name})
		return nil
	})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusCreated, Dependency{
		ID: dependencyID(string(child.UID), string(parent.UID)), ParentMonitorID: string(parent.UID), ChildMonitorID: string(child.UID),
		SuppressionMode: suppressChildIfParentDown, ParentName: parent.Spec.Name, ChildName: child.Spec.Name,
	})
}

// deleteDependency answers DELETE /reliability/dependencies/{id} (owner only).
func (s *Server) deleteDependency(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ns := CallerFrom(ctx).Namespace
	deps, err := s.dependencies(ctx, ns)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	for _, d := range deps {
		if d.ID != chi.URLParam(r, "id") {
			continue
		}
		child, err := s.monitorByID(ctx, ns, d.ChildMonitorID)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		parent, err := s.monitorByID(ctx, ns, d.ParentMonitorID)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		err = s.mutate(ctx, child, func() error {
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
			s.writeErr(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.writeErr(w, r, errNotFound)
}
