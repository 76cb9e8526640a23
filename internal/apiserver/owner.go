package apiserver

import (
	"context"
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
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
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
	Until   core.Nullable[string] `json:"until"`
	Minutes core.Nullable[int]    `json:"minutes"`
}

// snoozeUntil validates b against now and returns the end of the snooze.
func (b *snoozeBody) snoozeUntil(now time.Time) (time.Time, []core.FieldError) {
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

func (s *Server) snoozeIncident(w http.ResponseWriter, r *http.Request) {
	inc := s.pathIncident(w, r)
	if inc == nil {
		return
	}
	var b snoozeBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	until, errs := b.snoozeUntil(s.clock.Now())
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	if inc.ResolvedAt != nil {
		core.WriteError(w, http.StatusConflict, core.CodeIncidentResolved, "the incident is already resolved")
		return
	}
	out, err := s.opts.Store.SnoozeIncident(r.Context(), inc.ID, &until)
	if errors.Is(err, store.ErrIncidentResolved) {
		core.WriteError(w, http.StatusConflict, core.CodeIncidentResolved, "the incident is already resolved")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, s.incidentObject(out, s.regionNames(r.Context())))
}

// --- status page access and domain ------------------------------------------

// pageAccessSuffix names the Secret holding a page's password.
const (
	pageAccessSuffix = "-access"
	pagePasswordKey  = "password"
)

// pageAccessBody is the body of PUT /status/pages/:id/access.
type pageAccessBody struct {
	Mode     string                `json:"mode"`
	Password core.Nullable[string] `json:"password"`
	IsPublic core.Nullable[bool]   `json:"is_public"`
}

func pageAccessObject(p *monv1.StatusPage) map[string]any {
	mode, hasPassword := monv1.AccessPublic, false
	var revoked *string
	if a := p.Spec.Access; a != nil {
		mode, hasPassword, revoked = a.Mode, a.PasswordSecretRef != nil, core.MetaTimePtr(a.SessionsRevokedAt)
	}
	return map[string]any{"mode": mode, "is_public": p.Spec.IsPublic, "has_password": hasPassword, "sessions_revoked_at": revoked}
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
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	mode := monv1.StatusPageAccessMode(b.Mode)
	var errs []core.FieldError
	switch mode {
	case monv1.AccessPublic, monv1.AccessPassword, monv1.AccessSSO:
	default:
		errs = append(errs, core.FieldErr("mode", "must be one of public, password, sso"))
	}
	password := ""
	if b.Password.Set && !b.Password.Null {
		password = b.Password.Value()
		if len(password) < 8 || len(password) > 128 {
			errs = append(errs, core.FieldErr("password", "must be 8-128 characters"))
		}
	}
	hadPassword := p.Spec.Access != nil && p.Spec.Access.PasswordSecretRef != nil
	if mode == monv1.AccessPassword && password == "" && !hadPassword {
		errs = append(errs, core.FieldErr("password", "is required for password access"))
	}
	if mode != monv1.AccessPassword && password != "" {
		errs = append(errs, core.FieldErr("password", "is only used with mode password"))
	}
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	secretName := p.Name + pageAccessSuffix
	if password != "" {
		if err := s.putOwnedSecret(ctx, p, "StatusPage", secretName, map[string]string{pagePasswordKey: password}); err != nil {
			core.WriteErr(w, r, err)
			return
		}
	}
	now := metav1.NewTime(s.clock.Now())
	err := s.Mutate(ctx, p, func() error {
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
			p.Spec.IsPublic = b.IsPublic.Value()
		}
		return nil
	})
	if err != nil {
		core.WriteErr(w, r, s.WriteFailed(ctx, p.Namespace, err, pageFieldPath))
		return
	}
	if mode != monv1.AccessPassword && hadPassword {
		if err := s.deleteOwnedSecret(ctx, p, secretName); err != nil {
			core.LogFrom(ctx).Error(err, "unable to delete a status page password", "page", p.Name)
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
	err := s.Mutate(r.Context(), p, func() error {
		if p.Spec.Access == nil {
			p.Spec.Access = &monv1.StatusPageAccess{Mode: monv1.AccessPublic}
		}
		p.Spec.Access.SessionsRevokedAt = &now
		return nil
	})
	if err != nil {
		core.WriteErr(w, r, s.WriteFailed(r.Context(), p.Namespace, err, pageFieldPath))
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
		Domain core.Nullable[string] `json:"domain"`
	}
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	domain := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(b.Domain.Value()), "."))
	if !b.Domain.Set || (domain != "" && (len(domain) > 253 || !domainRE.MatchString(domain))) {
		core.WriteValidation(w, core.FieldErr("domain", "must be a host name such as status.example.com, or null"))
		return
	}
	err := s.Mutate(r.Context(), p, func() error { p.Spec.CustomDomain = domain; return nil })
	if err != nil {
		core.WriteErr(w, r, s.WriteFailed(r.Context(), p.Namespace, err, pageFieldPath))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"domain": core.StrPtr(domain)})
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
		core.WriteValidation(w, core.FieldErr("type", "only webhook connections have a signing secret"))
		return
	}
	ref := ch.SigningSecret()
	if ref == nil {
		ref = &monv1.SecretKeySelector{Name: monv1.SigningSecretName(ch.Name), Key: monv1.SigningSecretKey}
	}
	secret, err := monv1.NewSigningSecret()
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if err := s.putSecret(ctx, ch, ref.Name, map[string]string{ref.Key: secret}); err != nil {
		core.WriteErr(w, r, fmt.Errorf("store signing secret: %w", err))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"connection_id": string(ch.UID), "signing_secret": secret,
		"rotated_at": core.ISOTime(s.clock.Now())})
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
			return core.NewError(http.StatusConflict, core.CodeConflict, fmt.Sprintf("secret %s exists and is not managed by this %s", name, kind))
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
