package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Owner-only endpoints. The guard lets only the workspace owner (an
// owner-level Kubernetes user of the aggregated front door) reach these
// handlers; every API key gets 403 WORKSPACE_OWNER_REQUIRED.

// --- incident snooze --------------------------------------------------------

// maxSnooze bounds how far ahead an incident can be snoozed.
const maxSnooze = 30 * 24 * time.Hour

// snoozeBody is the body of POST /incidents/:id/snooze: one of until (ISO
// 8601) or minutes.
type snoozeBody struct {
	Until   nullable[string] `json:"until"`
	Minutes nullable[int]    `json:"minutes"`
}

// snoozeUntil validates b against now and returns the end of the snooze.
func (b *snoozeBody) snoozeUntil(now time.Time) (time.Time, []FieldError) {
	switch {
	case b.Until.Set && !b.Until.Null && b.Minutes.Set && !b.Minutes.Null:
		return time.Time{}, []FieldError{fieldErr("until", "send either until or minutes, not both")}
	case b.Minutes.Set && !b.Minutes.Null:
		m := b.Minutes.value()
		if m < 1 || m > int(maxSnooze/time.Minute) {
			return time.Time{}, []FieldError{fieldErr("minutes", "must be between 1 and %d", int(maxSnooze/time.Minute))}
		}
		return now.Add(time.Duration(m) * time.Minute), nil
	case b.Until.Set && !b.Until.Null:
		t, err := time.Parse(time.RFC3339Nano, b.Until.value())
		switch {
		case err != nil:
			return time.Time{}, []FieldError{fieldErr("until", "must be an ISO 8601 timestamp")}
		case !t.After(now):
			return time.Time{}, []FieldError{fieldErr("until", "must be in the future")}
		case t.Sub(now) > maxSnooze:
			return time.Time{}, []FieldError{fieldErr("until", "must be at most 30 days ahead")}
		}
		return t, nil
	}
	return time.Time{}, []FieldError{fieldErr("until", "until or minutes is required")}
}

func (s *Server) snoozeIncident(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	var b snoozeBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	until, errs := b.snoozeUntil(s.clock.Now())
	if len(errs) > 0 {
		writeValidation(w, errs...)
		return
	}
	if inc.ResolvedAt != nil {
		writeError(w, http.StatusConflict, CodeIncidentResolved, "the incident is already resolved")
		return
	}
	out, err := s.opts.Store.SnoozeIncident(r.Context(), inc.ID, &until)
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

// --- maintenance windows ----------------------------------------------------

// recurrenceBody is a window's recurrence: a frequency string ("weekly") or
// {frequency, interval, until}.
type recurrenceBody struct {
	Frequency string  `json:"frequency"`
	Interval  int32   `json:"interval"`
	Until     *string `json:"until"`
}

// UnmarshalJSON accepts a frequency string or an object.
func (rb *recurrenceBody) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &rb.Frequency)
	}
	type plain recurrenceBody
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return &fieldDecodeError{field: "recurrence", msg: "must be a frequency or {frequency, interval, until}"}
	}
	*rb = recurrenceBody(p)
	return nil
}

// maintenanceBody is the create and update body of a maintenance window;
// on update only sent fields change.
type maintenanceBody struct {
	Title       nullable[string]         `json:"title"`
	Description nullable[string]         `json:"description"`
	StartsAt    nullable[string]         `json:"starts_at"`
	EndsAt      nullable[string]         `json:"ends_at"`
	TimeZone    nullable[string]         `json:"time_zone"`
	Recurrence  nullable[recurrenceBody] `json:"recurrence"`
	Scope       nullable[string]         `json:"scope"`
	MonitorIDs  nullable[[]string]       `json:"monitor_ids"`
	GroupIDs    nullable[[]string]       `json:"group_ids"`
	Impact      nullable[string]         `json:"impact"`
	Cancelled   nullable[bool]           `json:"cancelled"`
}

// refsByID resolves ids of one kind to references; unknown ids are field
// errors of field[i].
func refsByID(ids []string, idx *objectUIDs, field, what string) ([]monv1.LocalObjectReference, []FieldError) {
	var out []monv1.LocalObjectReference
	var errs []FieldError
	seen := map[string]bool{}
	for i, id := range ids {
		name, ok := idx.byUID[id]
		if !ok {
			errs = append(errs, fieldErr(fmt.Sprintf("%s[%d]", field, i), "%s not found", what))
			continue
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, monv1.LocalObjectReference{Name: name})
		}
	}
	return out, errs
}

// applyMaintenanceBody writes the sent fields of b onto mw and validates the
// result the way admission does, with REST field names.
func applyMaintenanceBody(mw *monv1.MaintenanceWindow, b *maintenanceBody, create bool, monitors, groups *objectUIDs) []FieldError {
	var errs []FieldError
	sp := &mw.Spec
	if b.Title.Set {
		sp.Title = strings.TrimSpace(b.Title.value())
	}
	if (create || b.Title.Set) && (sp.Title == "" || len(sp.Title) > 255) {
		errs = append(errs, fieldErr("title", "must be 1-255 characters"))
	}
	if b.Description.Set {
		sp.Description = b.Description.value()
		if len(sp.Description) > 5000 {
			errs = append(errs, fieldErr("description", "must be at most 5000 characters"))
		}
	}
	parseTime := func(f string, v nullable[string], dst *metav1.Time) {
		if !v.Set {
			if create {
				errs = append(errs, fieldErr(f, "is required"))
			}
			return
		}
		t, err := time.Parse(time.RFC3339Nano, v.value())
		if err != nil {
			errs = append(errs, fieldErr(f, "must be an ISO 8601 timestamp"))
			return
		}
		*dst = metav1.NewTime(t.UTC())
	}
	parseTime("starts_at", b.StartsAt, &sp.StartsAt)
	parseTime("ends_at", b.EndsAt, &sp.EndsAt)
	if !sp.StartsAt.IsZero() && !sp.EndsAt.IsZero() && !sp.EndsAt.After(sp.StartsAt.Time) {
		errs = append(errs, fieldErr("ends_at", "must be after starts_at"))
	}
	if b.TimeZone.Set {
		sp.TimeZone = b.TimeZone.value()
		if _, err := time.LoadLocation(sp.TimeZone); err != nil || len(sp.TimeZone) > 64 {
			errs = append(errs, fieldErr("time_zone", "must be an IANA time zone such as Europe/Berlin"))
		}
	}
	if b.Recurrence.Set {
		rb := b.Recurrence.value()
		switch {
		case b.Recurrence.Null || rb.Frequency == "" || rb.Frequency == "none":
			sp.Recurrence = nil
		case rb.Frequency != "daily" && rb.Frequency != "weekly" && rb.Frequency != "monthly":
			errs = append(errs, fieldErr("recurrence.frequency", "must be one of none, daily, weekly, monthly"))
		case rb.Interval < 0 || rb.Interval > 52:
			errs = append(errs, fieldErr("recurrence.interval", "must be between 1 and 52"))
		default:
			rec := &monv1.Recurrence{Frequency: monv1.RecurrenceFrequency(rb.Frequency), Interval: rb.Interval}
			if rb.Until != nil {
				t, err := time.Parse(time.RFC3339Nano, *rb.Until)
				if err != nil {
					errs = append(errs, fieldErr("recurrence.until", "must be an ISO 8601 timestamp"))
				} else {
					rec.Until = &metav1.Time{Time: t.UTC()}
				}
			}
			sp.Recurrence = rec
		}
	}
	if b.MonitorIDs.Set {
		ids := b.MonitorIDs.value()
		if len(ids) > 500 {
			errs = append(errs, fieldErr("monitor_ids", "must have at most 500 monitors"))
		}
		var fe []FieldError
		sp.Monitors, fe = refsByID(ids, monitors, "monitor_ids", "monitor")
		errs = append(errs, fe...)
	}
	if b.GroupIDs.Set {
		ids := b.GroupIDs.value()
		if len(ids) > 100 {
			errs = append(errs, fieldErr("group_ids", "must have at most 100 groups"))
		}
		var fe []FieldError
		sp.Groups, fe = refsByID(ids, groups, "group_ids", "monitor group")
		errs = append(errs, fe...)
	}
	switch {
	case b.Scope.Set && !b.Scope.Null:
		sp.Scope = monv1.MaintenanceScope(b.Scope.value())
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
			errs = append(errs, fieldErr("monitor_ids", "is required when scope is monitors"))
		}
	case "groups":
		sp.Monitors = nil
		if len(sp.Groups) == 0 {
			errs = append(errs, fieldErr("group_ids", "is required when scope is groups"))
		}
	default:
		errs = append(errs, fieldErr("scope", "must be one of all, monitors, groups"))
	}
	if b.Impact.Set {
		sp.Impact = b.Impact.value()
		if sp.Impact != "" && sp.Impact != "low" && sp.Impact != "medium" && sp.Impact != "high" {
			errs = append(errs, fieldErr("impact", "must be one of low, medium, high"))
		}
	}
	if b.Cancelled.Set && !b.Cancelled.Null {
		sp.Cancelled = b.Cancelled.value()
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
	return snakePath(p)
}

// maintenanceRefs indexes the monitors and groups of ns by uid.
func (s *Server) maintenanceRefs(ctx context.Context, ns string) (monitors, groups *objectUIDs, err error) {
	if monitors, err = s.uidIndex(ctx, &monv1.MonitorList{}, ns); err != nil {
		return nil, nil, err
	}
	if groups, err = s.uidIndex(ctx, &monv1.MonitorGroupList{}, ns); err != nil {
		return nil, nil, err
	}
	return monitors, groups, nil
}

func (s *Server) createMaintenance(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	var b maintenanceBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	monitors, groups, err := s.maintenanceRefs(ctx, c.Namespace)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	mw := &monv1.MaintenanceWindow{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace}}
	if errs := applyMaintenanceBody(mw, &b, true, monitors, groups); len(errs) > 0 {
		writeValidation(w, errs...)
		return
	}
	mw.GenerateName = objectNamePrefix(mw.Spec.Title, "maintenance")
	if err := s.opts.Client.Create(ctx, mw); err != nil {
		s.writeErr(w, r, s.writeFailed(ctx, c.Namespace, err, maintenanceFieldPath))
		return
	}
	httpjson.Write(w, http.StatusCreated, maintenanceObject(mw, monitors, groups))
}

func (s *Server) pathMaintenance(w http.ResponseWriter, r *http.Request) *monv1.MaintenanceWindow {
	return pathObject[*monv1.MaintenanceWindow](s, w, r, &monv1.MaintenanceWindowList{}, "id", "Maintenance window")
}

// updateMaintenance serves PUT and PATCH: only sent fields change.
func (s *Server) updateMaintenance(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	mw := s.pathMaintenance(w, r)
	if mw == nil {
		return
	}
	var b maintenanceBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	monitors, groups, err := s.maintenanceRefs(ctx, mw.Namespace)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	err = s.mutate(ctx, mw, func() error {
		if errs := applyMaintenanceBody(mw, &b, false, monitors, groups); len(errs) > 0 {
			return validationError(errs...)
		}
		return nil
	})
	if err != nil {
		s.writeErr(w, r, s.writeFailed(ctx, mw.Namespace, err, maintenanceFieldPath))
		return
	}
	httpjson.Write(w, http.StatusOK, maintenanceObject(mw, monitors, groups))
}

func (s *Server) deleteMaintenance(w http.ResponseWriter, r *http.Request) {
	mw := s.pathMaintenance(w, r)
	if mw == nil {
		return
	}
	if err := s.deleteObject(r.Context(), mw); err != nil {
		s.writeErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// --- status page access and domain ------------------------------------------

// pageAccessSuffix names the Secret holding a page's password.
const (
	pageAccessSuffix = "-access"
	pagePasswordKey  = "password"
)

// pageAccessBody is the body of PUT /status/pages/:id/access.
type pageAccessBody struct {
	Mode     string           `json:"mode"`
	Password nullable[string] `json:"password"`
	IsPublic nullable[bool]   `json:"is_public"`
}

func pageAccessObject(p *monv1.StatusPage) restapi.PageAccessState {
	mode, hasPassword := monv1.AccessPublic, false
	var revoked *string
	if a := p.Spec.Access; a != nil {
		mode, hasPassword, revoked = a.Mode, a.PasswordSecretRef != nil, metaTimePtr(a.SessionsRevokedAt)
	}
	return restapi.PageAccessState{Mode: string(mode), IsPublic: p.Spec.IsPublic, HasPassword: hasPassword, SessionsRevokedAt: revoked}
}

// putPageAccess sets who may view a page. A password is kept in the Secret
// "<page>-access" (owned by the page); setting a new password or leaving
// password mode signs out every visitor session.
func (s *Server) putPageAccess(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := s.pathPage(w, r)
	if p == nil {
		return
	}
	var b pageAccessBody
	if err := decodeJSON(r, &b, true); err != nil {
		s.writeErr(w, r, err)
		return
	}
	mode := monv1.StatusPageAccessMode(b.Mode)
	var errs []FieldError
	switch mode {
	case monv1.AccessPublic, monv1.AccessPassword, monv1.AccessSSO:
	default:
		errs = append(errs, fieldErr("mode", "must be one of public, password, sso"))
	}
	password := ""
	if b.Password.Set && !b.Password.Null {
		password = b.Password.value()
		if len(password) < 8 || len(password) > 128 {
			errs = append(errs, fieldErr("password", "must be 8-128 characters"))
		}
	}
	hadPassword := p.Spec.Access != nil && p.Spec.Access.PasswordSecretRef != nil
	if mode == monv1.AccessPassword && password == "" && !hadPassword {
		errs = append(errs, fieldErr("password", "is required for password access"))
	}
	if mode != monv1.AccessPassword && password != "" {
		errs = append(errs, fieldErr("password", "is only used with mode password"))
	}
	if len(errs) > 0 {
		writeValidation(w, errs...)
		return
	}
	secretName := p.Name + pageAccessSuffix
	if password != "" {
		if err := s.putOwnedSecret(ctx, p, "StatusPage", secretName, map[string]string{pagePasswordKey: password}); err != nil {
			s.writeErr(w, r, err)
			return
		}
	}
	now := metav1.NewTime(s.clock.Now())
	err := s.mutate(ctx, p, func() error {
		a := p.Spec.Access
		if a == nil {
			a = &monv1.StatusPageAccess{}
		}
		if password != "" || (a.Mode == monv1.AccessPassword && mode != monv1.AccessPassword) {
			a.SessionsRevokedAt = &now
		}
		a.Mode = mode
		a.PasswordSecretRef = nil
		if mode == monv1.AccessPassword {
			a.PasswordSecretRef = &monv1.SecretKeySelector{Name: secretName, Key: pagePasswordKey}
		}
		p.Spec.Access = a
		if b.IsPublic.Set && !b.IsPublic.Null {
			p.Spec.IsPublic = b.IsPublic.value()
		}
		return nil
	})
	if err != nil {
		s.writeErr(w, r, s.writeFailed(ctx, p.Namespace, err, pageFieldPath))
		return
	}
	if mode != monv1.AccessPassword && hadPassword {
		if err := s.deleteOwnedSecret(ctx, p, secretName); err != nil {
			ctrlLog(ctx).Error(err, "unable to delete a status page password", "page", p.Name)
		}
	}
	httpjson.Write(w, http.StatusOK, pageAccessObject(p))
}

// revokePageSessions signs out every visitor session of a page.
func (s *Server) revokePageSessions(w http.ResponseWriter, r *http.Request) {
	p := s.pathPage(w, r)
	if p == nil {
		return
	}
	now := metav1.NewTime(s.clock.Now())
	err := s.mutate(r.Context(), p, func() error {
		if p.Spec.Access == nil {
			p.Spec.Access = &monv1.StatusPageAccess{Mode: monv1.AccessPublic}
		}
		p.Spec.Access.SessionsRevokedAt = &now
		return nil
	})
	if err != nil {
		s.writeErr(w, r, s.writeFailed(r.Context(), p.Namespace, err, pageFieldPath))
		return
	}
	httpjson.Write(w, http.StatusOK, pageAccessObject(p))
}

var domainRE = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)

// putPageDomain sets or (with null or "") removes a page's custom domain.
func (s *Server) putPageDomain(w http.ResponseWriter, r *http.Request) {
	p := s.pathPage(w, r)
	if p == nil {
		return
	}
	var b struct {
		Domain nullable[string] `json:"domain"`
	}
	if err := decodeJSON(r, &b, true); err != nil {
		s.writeErr(w, r, err)
		return
	}
	domain := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(b.Domain.value()), "."))
	if !b.Domain.Set || (domain != "" && (len(domain) > 253 || !domainRE.MatchString(domain))) {
		writeValidation(w, fieldErr("domain", "must be a host name such as status.example.com, or null"))
		return
	}
	err := s.mutate(r.Context(), p, func() error { p.Spec.CustomDomain = domain; return nil })
	if err != nil {
		s.writeErr(w, r, s.writeFailed(r.Context(), p.Namespace, err, pageFieldPath))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"domain": strPtr(domain)})
}

// --- webhook signing secret -------------------------------------------------

// rotateSigningSecret replaces a webhook channel's signing secret. The new
// secret is returned once; the old one stops signing at once.
func (s *Server) rotateSigningSecret(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ch := s.pathChannel(w, r)
	if ch == nil {
		return
	}
	if ch.Spec.Type != monv1.ChannelWebhook {
		writeValidation(w, fieldErr("type", "only webhook connections have a signing secret"))
		return
	}
	ref := ch.SigningSecret()
	if ref == nil {
		ref = &monv1.SecretKeySelector{Name: monv1.SigningSecretName(ch.Name), Key: monv1.SigningSecretKey}
	}
	secret, err := monv1.NewSigningSecret()
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := s.putSecret(ctx, ch, ref.Name, map[string]string{ref.Key: secret}); err != nil {
		s.writeErr(w, r, fmt.Errorf("store signing secret: %w", err))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"connection_id": string(ch.UID), "signing_secret": secret,
		"rotated_at": isoTime(s.clock.Now())})
}

// deleteOwnedSecret deletes the Secret name of owner's namespace when owner
// owns it, the ownership putOwnedSecret gives and checks: a Secret of that
// name that someone else made (a page named "db" next to an application's
// "db-access") is left alone. The delete is conditional on the UID and
// resourceVersion read, so a Secret replaced in between is not deleted.
func (s *Server) deleteOwnedSecret(ctx context.Context, owner client.Object, name string) error {
	sec := &corev1.Secret{}
	err := s.opts.Reader.Get(ctx, client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}, sec)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get secret %s: %w", name, err)
	}
	if !slices.ContainsFunc(sec.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == owner.GetUID() }) {
		return nil
	}
	err = s.opts.Client.Delete(ctx, sec, client.Preconditions{UID: &sec.UID, ResourceVersion: &sec.ResourceVersion})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete secret %s: %w", name, err)
	}
	return nil
}

// putOwnedSecret creates or updates the Secret name of owner's namespace,
// controlled by owner (of kind). A Secret of that name that owner does not
// own is left alone: 409 CONFLICT.
//
// Controllers write some of these Secrets too (the AlertChannel controller
// generates a webhook's signing Secret), so the write is create-or-update
// retried on a conflict: a Secret created between the read and the create
// (AlreadyExists) is read again and updated, and an update of a Secret
// changed since the read (Conflict) is redone on the fresh one. The
// controller reference makes a Secret created here one the controller
// accepts as its own.
func (s *Server) putOwnedSecret(ctx context.Context, owner client.Object, kind, name string, data map[string]string) error {
	ref := metav1.OwnerReference{APIVersion: monv1.GroupVersion.String(), Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true)}
	raced := func(err error) bool { return apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) }
	return retry.OnError(retry.DefaultRetry, raced, func() error {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: name}}
		err := s.opts.Reader.Get(ctx, client.ObjectKeyFromObject(sec), sec)
		if apierrors.IsNotFound(err) {
			sec.OwnerReferences = []metav1.OwnerReference{ref}
			sec.Type = corev1.SecretTypeOpaque
			sec.StringData = data
			if err := s.opts.Client.Create(ctx, sec); err != nil {
				return fmt.Errorf("create secret %s: %w", name, err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("get secret %s: %w", name, err)
		}
		i := slices.IndexFunc(sec.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == owner.GetUID() })
		if i < 0 {
			return newAPIError(http.StatusConflict, CodeConflict, fmt.Sprintf("secret %s exists and is not managed by this %s", name, kind))
		}
		if metav1.GetControllerOf(sec) == nil {
			sec.OwnerReferences[i].Controller = ptr.To(true) // written here before it was controlled
		}
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		for k, v := range data {
			sec.Data[k] = []byte(v)
		}
		if err := s.opts.Client.Update(ctx, sec); err != nil {
			return fmt.Errorf("update secret %s: %w", name, err)
		}
		return nil
	})
}
