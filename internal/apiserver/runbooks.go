package apiserver

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

// runbook is a runbook as stored and as the API shows it.
type runbook struct {
	ID          string        `json:"id,omitempty"`
	Name        string        `json:"name"`
	Steps       []runbookStep `json:"steps"`
	MonitorType *string       `json:"monitor_type"`
	ServiceTag  *string       `json:"service_tag"`
	IsActive    bool          `json:"is_active"`
	CreatedAt   string        `json:"created_at,omitempty"`
}

type runbookStep struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

type runbookBody struct {
	Name        *string       `json:"name"`
	Steps       []runbookStep `json:"steps"`
	MonitorType *string       `json:"monitor_type"`
	ServiceTag  *string       `json:"service_tag"`
	IsActive    *bool         `json:"is_active"`
}

func (b *runbookBody) validate() []FieldError {
	var errs []FieldError
	if b.Name == nil || len(strings.TrimSpace(*b.Name)) < 1 || len(*b.Name) > 255 {
		errs = append(errs, fieldErr("name", "is required, 1-255 characters"))
	}
	if len(b.Steps) < 1 || len(b.Steps) > 100 {
		errs = append(errs, fieldErr("steps", "must have 1-100 steps"))
	}
	for i, st := range b.Steps {
		if len(strings.TrimSpace(st.Title)) < 1 || len(st.Title) > 255 {
			errs = append(errs, fieldErr(fmt.Sprintf("steps[%d].title", i), "is required, 1-255 characters"))
		}
		if len(st.Description) > 5000 {
			errs = append(errs, fieldErr(fmt.Sprintf("steps[%d].description", i), "must be at most 5000 characters"))
		}
	}
	if b.MonitorType != nil && *b.MonitorType != "" && !slices.Contains(monitorTypes, monv1.MonitorType(strings.ToLower(*b.MonitorType))) {
		errs = append(errs, fieldErr("monitor_type", "must be a monitor type"))
	}
	if b.ServiceTag != nil && len(*b.ServiceTag) > 32 {
		errs = append(errs, fieldErr("service_tag", "must be at most 32 characters"))
	}
	return errs
}

func (b *runbookBody) runbook() runbook {
	rb := runbook{Name: strings.TrimSpace(*b.Name), Steps: b.Steps, MonitorType: b.MonitorType, ServiceTag: b.ServiceTag, IsActive: true}
	if b.IsActive != nil {
		rb.IsActive = *b.IsActive
	}
	return rb
}

func runbookFrom(cm *corev1.ConfigMap) (runbook, bool) {
	var rb runbook
	if err := json.Unmarshal([]byte(cm.Data[runbookDataKey]), &rb); err != nil {
		return rb, false
	}
	rb.ID = string(cm.UID)
	rb.CreatedAt = isoTime(cm.CreationTimestamp.Time)
	rb.Steps = nonNil(rb.Steps)
	return rb, true
}

func (s *Server) runbookMaps(ctx context.Context, ns string) ([]corev1.ConfigMap, error) {
	var list corev1.ConfigMapList
	if err := s.opts.Reader.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{RunbookLabel: "true"}); err != nil {
		return nil, fmt.Errorf("list runbooks: %w", err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.ConfigMap) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	return list.Items, nil
}

func (s *Server) findRunbook(ctx context.Context, ns, id string) (*corev1.ConfigMap, error) {
	maps, err := s.runbookMaps(ctx, ns)
	if err != nil {
		return nil, err
	}
	for i := range maps {
		if string(maps[i].UID) == id && maps[i].DeletionTimestamp == nil {
			return &maps[i], nil
		}
	}
	return nil, errNotFound
}

func (s *Server) listRunbooks(w http.ResponseWriter, r *http.Request) {
	maps, err := s.runbookMaps(r.Context(), CallerFrom(r.Context()).Namespace)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := []runbook{}
	for i := range maps {
		if rb, ok := runbookFrom(&maps[i]); ok {
			out = append(out, rb)
		}
	}
	httpjson.Write(w, http.StatusOK, out)
}

func (s *Server) decodeRunbook(w http.ResponseWriter, r *http.Request) (*runbook, []byte) {
	var b runbookBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return nil, nil
	}
	if errs := b.validate(); len(errs) > 0 {
		writeValidation(w, errs...)
		return nil, nil
	}
	rb := b.runbook()
	raw, _ := json.Marshal(rb)
	return &rb, raw
}

func (s *Server) createRunbook(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	rb, raw := s.decodeRunbook(w, r)
	if rb == nil {
		return
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, GenerateName: "runbook-", Labels: map[string]string{RunbookLabel: "true"}},
		Data:       map[string]string{runbookDataKey: string(raw)},
	}
	if err := s.opts.Client.Create(ctx, cm); err != nil {
		s.writeErr(w, r, err)
		return
	}
	out, _ := runbookFrom(cm)
	httpjson.Write(w, http.StatusCreated, out)
}

func (s *Server) replaceRunbook(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	cm, err := s.findRunbook(ctx, c.Namespace, chi.URLParam(r, "runbookId"))
	if errors.Is(err, errNotFound) {
		writeNotFound(w, "Runbook")
		return
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	rb, raw := s.decodeRunbook(w, r)
	if rb == nil {
		return
	}
	if err := s.mutate(ctx, cm, func() error { cm.Data = map[string]string{runbookDataKey: string(raw)}; return nil }); err != nil {
		s.writeErr(w, r, err)
		return
	}
	out, _ := runbookFrom(cm)
	httpjson.Write(w, http.StatusOK, out)
}

func (s *Server) deleteRunbook(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	cm, err := s.findRunbook(ctx, c.Namespace, chi.URLParam(r, "runbookId"))
	if err == nil {
		err = s.deleteObject(ctx, cm)
	}
	if errors.Is(err, errNotFound) {
		writeNotFound(w, "Runbook")
		return
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// attachRunbook attaches the named runbook, or without runbook_id the first
// active runbook for the monitor's type or one of its tags.
func (s *Server) attachRunbook(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	var b struct {
		RunbookID string `json:"runbook_id"`
	}
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	maps, err := s.runbookMaps(ctx, inc.Namespace)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	var tags []string
	if m, err := s.monitorByID(ctx, inc.Namespace, inc.MonitorID); err == nil {
		tags = m.Spec.Tags
	}
	var chosen *runbook
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
			writeNotFound(w, "Runbook")
		} else {
			writeValidation(w, fieldErr("runbook_id", "no active runbook matches this incident's monitor; name one"))
		}
		return
	}
	irb := store.IncidentRunbook{RunbookID: chosen.ID, Name: chosen.Name}
	for _, st := range chosen.Steps {
		irb.Steps = append(irb.Steps, store.RunbookStep{ID: uuid.NewString(), Title: st.Title, Description: st.Description})
	}
	out, err := s.opts.Store.AttachRunbook(ctx, inc.ID, irb)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.AttachedRunbook{IncidentID: out.ID, Runbook: out.Runbook})
}

func (s *Server) setRunbookStep(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	var b struct {
		IsCompleted *bool `json:"is_completed"`
	}
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.IsCompleted == nil {
		writeValidation(w, fieldErr("is_completed", "is required"))
		return
	}
	out, err := s.opts.Store.SetRunbookStep(r.Context(), inc.ID, chi.URLParam(r, "stepId"), *b.IsCompleted, s.clock.Now())
	if errors.Is(err, store.ErrNotFound) {
		writeNotFound(w, "Runbook step")
		return
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.AttachedRunbook{IncidentID: out.ID, Runbook: out.Runbook})
}

// codeHostSources are deploy sources that must use the signed deploy hook.
var codeHostSources = []string{"github", "gitlab", "bitbucket", "gitea", "forgejo", "azure-devops", "azure_devops"}

type deployEventJSON struct {
	ID          string          `json:"id"`
	ServiceName string          `json:"service_name"`
	Environment *string         `json:"environment"`
	Version     *string         `json:"version"`
	Source      *string         `json:"source"`
	DeployedAt  string          `json:"deployed_at"`
	Metadata    json.RawMessage `json:"metadata"`
	CreatedAt   string          `json:"created_at"`
}

func deployEventObject(e store.DeployEvent) deployEventJSON {
	md := e.Metadata
	if len(md) == 0 {
		md = json.RawMessage("{}")
	}
	return deployEventJSON{ID: e.ID, ServiceName: e.ServiceName, Environment: strPtr(e.Environment), Version: strPtr(e.Version),
		Source: strPtr(e.Source), DeployedAt: isoTime(e.DeployedAt), Metadata: md, CreatedAt: isoTime(e.CreatedAt)}
}

func (s *Server) listDeployEvents(w http.ResponseWriter, r *http.Request) {
	limit, fe := intParam(r, "limit", 20, 1, 100)
	if fe != nil {
		writeValidation(w, *fe)
		return
	}
	events, err := s.opts.Store.ListDeployEvents(r.Context(), store.DeployEventQuery{Namespace: CallerFrom(r.Context()).Namespace, Limit: limit})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := make([]deployEventJSON, 0, len(events))
	for _, e := range events {
		out = append(out, deployEventObject(e))
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"events": out})
}

func (s *Server) createDeployEvent(w http.ResponseWriter, r *http.Request) {
	var b struct {
		ServiceName *string         `json:"service_name"`
		Environment string          `json:"environment"`
		Version     string          `json:"version"`
		DeployedAt  string          `json:"deployed_at"`
		Metadata    json.RawMessage `json:"metadata"`
		Source      string          `json:"source"`
		// Fields of code-hosting deployment payloads.
		Deployment json.RawMessage `json:"deployment"`
		Repository json.RawMessage `json:"repository"`
	}
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if slices.Contains(codeHostSources, strings.ToLower(b.Source)) || r.Header.Get("X-GitHub-Event") != "" ||
		(len(b.Deployment) > 0 && len(b.Repository) > 0) {
		writeError(w, http.StatusBadRequest, CodeSignedDeployHook, "code-hosting deploy payloads go to the signed deploy webhook URL (GET /incidents/deploy-events/config)")
		return
	}
	var errs []FieldError
	if b.ServiceName == nil || len(strings.TrimSpace(*b.ServiceName)) < 1 || len(*b.ServiceName) > 255 {
		errs = append(errs, fieldErr("service_name", "is required, 1-255 characters"))
	}
	if len(b.Environment) > 64 {
		errs = append(errs, fieldErr("environment", "must be 1-64 characters"))
	}
	if len(b.Version) > 120 {
		errs = append(errs, fieldErr("version", "must be 1-120 characters"))
	}
	at := s.clock.Now()
	if b.DeployedAt != "" {
		t, ok := parseISO(b.DeployedAt)
		if !ok {
			errs = append(errs, fieldErr("deployed_at", "must be an ISO 8601 timestamp"))
		}
		at = t
	}
	if md := strings.TrimSpace(string(b.Metadata)); md != "" && md != "null" && md[0] != '{' {
		errs = append(errs, fieldErr("metadata", "must be an object"))
	}
	if len(errs) > 0 {
		writeValidation(w, errs...)
		return
	}
	md := b.Metadata
	if strings.TrimSpace(string(md)) == "null" {
		md = nil
	}
	e, err := s.opts.Store.InsertDeployEvent(r.Context(), store.DeployEvent{Namespace: CallerFrom(r.Context()).Namespace,
		ServiceName: strings.TrimSpace(*b.ServiceName), Environment: b.Environment, Version: b.Version, Source: b.Source,
		DeployedAt: at.UTC(), Metadata: md})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusCreated, deployEventObject(e))
}

// deployEventsConfig reports the signed deploy hook settings. The signed
// hook itself is not served yet (see docs/rest-api.md).
func (s *Server) deployEventsConfig(w http.ResponseWriter, _ *http.Request) {
	httpjson.Write(w, http.StatusOK, map[string]any{"enabled": false, "webhook_url": nil, "signature": "HMAC-SHA256"})
}
