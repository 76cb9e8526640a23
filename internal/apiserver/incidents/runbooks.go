package incidents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Runbooks are configuration, so they live in the cluster like the rest of
// it: one ConfigMap per runbook, labelled RunbookLabel, holding the runbook
// as JSON under runbookDataKey. The id is the ConfigMap's uid. They are read
// without the cache (the manager does not cache ConfigMaps).

// RunbookLabel marks the ConfigMaps that hold runbooks.
const RunbookLabel = "uptime-operator.io/runbook"

const runbookDataKey = "runbook.json"

// storedRunbook is a runbook as its ConfigMap holds it: the answer
// (restapi.Runbook) without the id and creation time, which are the
// ConfigMap's.
type storedRunbook struct {
	Name        string                    `json:"name"`
	Steps       []restapi.RunbookStepBody `json:"steps"`
	MonitorType *string                   `json:"monitor_type"`
	ServiceTag  *string                   `json:"service_tag"`
	IsActive    bool                      `json:"is_active"`
}

// validateRunbook checks a runbook body.
func validateRunbook(b *restapi.RunbookBody) []core.FieldError {
	var errs []core.FieldError
	if b.Name == nil || len(strings.TrimSpace(*b.Name)) < 1 || len(*b.Name) > 255 {
		errs = append(errs, core.FieldErr("name", "is required, 1-255 characters"))
	}
	if len(b.Steps) < 1 || len(b.Steps) > 100 {
		errs = append(errs, core.FieldErr("steps", "must have 1-100 steps"))
	}
	for i, st := range b.Steps {
		if len(strings.TrimSpace(st.Title)) < 1 || len(st.Title) > 255 {
			errs = append(errs, core.FieldErr(fmt.Sprintf("steps[%d].title", i), "is required, 1-255 characters"))
		}
		if len(st.Description) > 5000 {
			errs = append(errs, core.FieldErr(fmt.Sprintf("steps[%d].description", i), "must be at most 5000 characters"))
		}
	}
	if b.MonitorType != nil && *b.MonitorType != "" && !slices.Contains(monv1.MonitorTypes, monv1.MonitorType(strings.ToLower(*b.MonitorType))) {
		errs = append(errs, core.FieldErr("monitor_type", "must be a monitor type"))
	}
	if b.ServiceTag != nil && len(*b.ServiceTag) > 32 {
		errs = append(errs, core.FieldErr("service_tag", "must be at most 32 characters"))
	}
	return errs
}

// runbookOf is the runbook of a valid body.
func runbookOf(b *restapi.RunbookBody) storedRunbook {
	rb := storedRunbook{Name: strings.TrimSpace(*b.Name), Steps: b.Steps, MonitorType: b.MonitorType, ServiceTag: b.ServiceTag, IsActive: true}
	if b.IsActive != nil {
		rb.IsActive = *b.IsActive
	}
	return rb
}

// runbookFrom is the runbook a ConfigMap holds.
func runbookFrom(cm *corev1.ConfigMap) (restapi.Runbook, bool) {
	var rb storedRunbook
	if err := json.Unmarshal([]byte(cm.Data[runbookDataKey]), &rb); err != nil {
		return restapi.Runbook{}, false
	}
	return restapi.Runbook{ID: string(cm.UID), Name: rb.Name, Steps: core.NonNil(rb.Steps), MonitorType: rb.MonitorType,
		ServiceTag: rb.ServiceTag, IsActive: rb.IsActive, CreatedAt: core.ISOTime(cm.CreationTimestamp.Time)}, true
}

func (h *Handlers) runbookMaps(ctx context.Context, ns string) ([]corev1.ConfigMap, error) {
	var list corev1.ConfigMapList
	if err := h.d.Reader.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{RunbookLabel: "true"}); err != nil {
		return nil, fmt.Errorf("list runbooks: %w", err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.ConfigMap) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	return list.Items, nil
}

func (h *Handlers) findRunbook(ctx context.Context, ns, id string) (*corev1.ConfigMap, error) {
	maps, err := h.runbookMaps(ctx, ns)
	if err != nil {
		return nil, err
	}
	for i := range maps {
		if string(maps[i].UID) == id && maps[i].DeletionTimestamp == nil {
			return &maps[i], nil
		}
	}
	return nil, core.ErrNotFound
}

func (h *Handlers) listRunbooks(w http.ResponseWriter, r *http.Request) {
	maps, err := h.runbookMaps(r.Context(), core.CallerFrom(r.Context()).Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out := []restapi.Runbook{}
	for i := range maps {
		if rb, ok := runbookFrom(&maps[i]); ok {
			out = append(out, rb)
		}
	}
	httpjson.Write(w, http.StatusOK, out)
}

func (h *Handlers) decodeRunbook(w http.ResponseWriter, r *http.Request) (*storedRunbook, []byte) {
	var b restapi.RunbookBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return nil, nil
	}
	if errs := validateRunbook(&b); len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return nil, nil
	}
	rb := runbookOf(&b)
	raw, _ := json.Marshal(rb)
	return &rb, raw
}

func (h *Handlers) createRunbook(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	rb, raw := h.decodeRunbook(w, r)
	if rb == nil {
		return
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, GenerateName: "runbook-", Labels: map[string]string{RunbookLabel: "true"}},
		Data:       map[string]string{runbookDataKey: string(raw)},
	}
	if err := h.d.Client.Create(ctx, cm); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out, _ := runbookFrom(cm)
	httpjson.Write(w, http.StatusCreated, out)
}

func (h *Handlers) replaceRunbook(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	cm, err := h.findRunbook(ctx, c.Namespace, chi.URLParam(r, "runbookId"))
	if errors.Is(err, core.ErrNotFound) {
		core.WriteNotFound(w, "Runbook")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	rb, raw := h.decodeRunbook(w, r)
	if rb == nil {
		return
	}
	if err := h.d.Mutate(ctx, cm, func() error { cm.Data = map[string]string{runbookDataKey: string(raw)}; return nil }); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out, _ := runbookFrom(cm)
	httpjson.Write(w, http.StatusOK, out)
}

func (h *Handlers) deleteRunbook(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	cm, err := h.findRunbook(ctx, c.Namespace, chi.URLParam(r, "runbookId"))
	if err == nil {
		err = h.d.DeleteObject(ctx, cm)
	}
	if errors.Is(err, core.ErrNotFound) {
		core.WriteNotFound(w, "Runbook")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// attachRunbook attaches the named runbook, or without runbook_id the first
// active runbook for the monitor's type or one of its tags.
func (h *Handlers) attachRunbook(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	var b restapi.RunbookAttach
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	maps, err := h.runbookMaps(ctx, inc.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	var tags []string
	if m, err := h.d.MonitorByID(ctx, inc.Namespace, inc.MonitorID); err == nil {
		tags = m.Spec.Tags
	}
	var chosen *restapi.Runbook
	for i := range maps {
		rb, ok := runbookFrom(&maps[i])
		if !ok {
			continue
		}
		if b.RunbookID != "" {
			if rb.ID == b.RunbookID {
				chosen = &rb
				break
			}
			continue
		}
		matchType := rb.MonitorType != nil && *rb.MonitorType == inc.MonitorType
		matchTag := rb.ServiceTag != nil && slices.Contains(tags, strings.ToLower(*rb.ServiceTag))
		if rb.IsActive && (matchType || matchTag) {
			chosen = &rb
			break
		}
	}
	if chosen == nil {
		if b.RunbookID != "" {
			core.WriteNotFound(w, "Runbook")
		} else {
			core.WriteValidation(w, core.FieldErr("runbook_id", "no active runbook matches this incident's monitor; name one"))
		}
		return
	}
	irb := store.IncidentRunbook{RunbookID: chosen.ID, Name: chosen.Name}
	for _, st := range chosen.Steps {
		irb.Steps = append(irb.Steps, store.RunbookStep{ID: uuid.NewString(), Title: st.Title, Description: st.Description})
	}
	out, err := h.st.AttachRunbook(ctx, inc.ID, irb)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.AttachedRunbook{IncidentID: out.ID, Runbook: incidentRunbook(out.Runbook)})
}

func (h *Handlers) setRunbookStep(w http.ResponseWriter, r *http.Request) {
	inc := core.PathIncident(w, r, h.st)
	if inc == nil {
		return
	}
	var b restapi.RunbookStepState
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if b.IsCompleted == nil {
		core.WriteValidation(w, core.FieldErr("is_completed", "is required"))
		return
	}
	out, err := h.st.SetRunbookStep(r.Context(), inc.ID, chi.URLParam(r, "stepId"), *b.IsCompleted, h.d.Clock.Now())
	if errors.Is(err, store.ErrNotFound) {
		core.WriteNotFound(w, "Runbook step")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.AttachedRunbook{IncidentID: out.ID, Runbook: incidentRunbook(out.Runbook)})
}

// codeHostSources are deploy sources that must use the signed deploy hook.
var codeHostSources = []string{"github", "gitlab", "bitbucket", "gitea", "forgejo", "azure-devops", "azure_devops"}

func deployEventObject(e store.DeployEvent) restapi.DeployEvent {
	md := e.Metadata
	if len(md) == 0 {
		md = json.RawMessage("{}")
	}
	return restapi.DeployEvent{ID: e.ID, ServiceName: e.ServiceName, Environment: core.StrPtr(e.Environment), Version: core.StrPtr(e.Version),
		Source: core.StrPtr(e.Source), DeployedAt: core.ISOTime(e.DeployedAt), Metadata: md, CreatedAt: core.ISOTime(e.CreatedAt)}
}

func (h *Handlers) listDeployEvents(w http.ResponseWriter, r *http.Request) {
	limit, fe := core.IntParam(r, "limit", 20, 1, 100)
	if fe != nil {
		core.WriteValidation(w, *fe)
		return
	}
	events, err := h.st.ListDeployEvents(r.Context(), store.DeployEventQuery{Namespace: core.CallerFrom(r.Context()).Namespace, Limit: limit})
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out := restapi.DeployEvents{Events: make([]restapi.DeployEvent, 0, len(events))}
	for _, e := range events {
		out.Events = append(out.Events, deployEventObject(e))
	}
	httpjson.Write(w, http.StatusOK, out)
}

func (h *Handlers) createDeployEvent(w http.ResponseWriter, r *http.Request) {
	var b struct {
		restapi.DeployEventBody
		// Fields of code-hosting deployment payloads, which are not this
		// body: they are refused with USE_SIGNED_DEPLOY_HOOK.
		Deployment json.RawMessage `json:"deployment"`
		Repository json.RawMessage `json:"repository"`
	}
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if slices.Contains(codeHostSources, strings.ToLower(b.Source)) || r.Header.Get("X-GitHub-Event") != "" ||
		(len(b.Deployment) > 0 && len(b.Repository) > 0) {
		core.WriteError(w, http.StatusBadRequest, core.CodeSignedDeployHook, "code-hosting deploy payloads go to the signed deploy webhook URL (GET /incidents/deploy-events/config)")
		return
	}
	var errs []core.FieldError
	if b.ServiceName == nil || len(strings.TrimSpace(*b.ServiceName)) < 1 || len(*b.ServiceName) > 255 {
		errs = append(errs, core.FieldErr("service_name", "is required, 1-255 characters"))
	}
	if len(b.Environment) > 64 {
		errs = append(errs, core.FieldErr("environment", "must be 1-64 characters"))
	}
	if len(b.Version) > 120 {
		errs = append(errs, core.FieldErr("version", "must be 1-120 characters"))
	}
	at := h.d.Clock.Now()
	if b.DeployedAt != "" {
		t, ok := core.ParseISO(b.DeployedAt)
		if !ok {
			errs = append(errs, core.FieldErr("deployed_at", "must be an ISO 8601 timestamp"))
		}
		at = t
	}
	if md := strings.TrimSpace(string(b.Metadata)); md != "" && md != "null" && md[0] != '{' {
		errs = append(errs, core.FieldErr("metadata", "must be an object"))
	}
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	md := b.Metadata
	if strings.TrimSpace(string(md)) == "null" {
		md = nil
	}
	e, err := h.st.InsertDeployEvent(r.Context(), store.DeployEvent{Namespace: core.CallerFrom(r.Context()).Namespace,
		ServiceName: strings.TrimSpace(*b.ServiceName), Environment: b.Environment, Version: b.Version, Source: b.Source,
		DeployedAt: at.UTC(), Metadata: md})
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusCreated, deployEventObject(e))
}

// deployEventsConfig reports the signed deploy hook settings. The signed
// hook itself is not served yet (see docs/rest-api.md).
func (h *Handlers) deployEventsConfig(w http.ResponseWriter, _ *http.Request) {
	httpjson.Write(w, http.StatusOK, restapi.DeployHookConfig{Signature: "HMAC-SHA256"})
}
