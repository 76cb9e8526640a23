package monitors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
)

// credentialSecrets keep the credentials of monitors in their Secrets.
type credentialSecrets struct {
	d *core.Deps
	// secrets reads the Secrets a monitor may reference (the
	// CredentialSecrets option); nil means d.Reader.
	secrets client.Reader
}

// Credentials written through the REST API (monitor header values: basic
// auth, bearer tokens, API keys) never stay in the Monitor's spec: before
// the Monitor is written they go to its credentials Secret, owned by the
// Monitor, and the spec references them (package credentials). Responses
// show them as [REDACTED], and a [REDACTED] sent back keeps the stored
// value.

// keep moves the literal credential values of m's spec into m's
// credentials Secret, creating or updating it, so that the spec written
// next holds references only. A Monitor not created yet is named here
// (from its GenerateName) so the Secret's name is known; its Secret is
// owned once the Monitor exists (adoptCredentials). heartbeat, when not
// empty, is the heartbeat token of a cron Monitor being created, kept in
// the same Secret (monv1.HeartbeatTokenKey). It reports whether it created
// the Secret.
func (c *credentialSecrets) keep(ctx context.Context, m *monv1.Monitor, heartbeat string) (bool, error) {
	need := credentials.HasInline(&m.Spec) || heartbeat != ""
	if m.Name == "" {
		if !need {
			return false, nil
		}
		m.Name, m.GenerateName = m.GenerateName+utilrand.String(5), ""
	}
	var sec corev1.Secret
	key := client.ObjectKey{Namespace: m.Namespace, Name: credentials.SecretName(m.Name)}
	err := c.d.Reader.Get(ctx, key, &sec)
	switch {
	case apierrors.IsNotFound(err):
		if !need {
			return false, nil
		}
		sec = corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{monv1.CredentialsOfLabel: m.Name}},
			Type:       corev1.SecretTypeOpaque,
			Data:       credentials.Externalize(&m.Spec, m.Name, nil),
		}
		if heartbeat != "" {
			sec.Data[monv1.HeartbeatTokenKey] = []byte(heartbeat)
		}
		if !credentials.SetOwner(&sec, m) {
			// m is about to be created: its UID, which owns the Secret
			// (credentials.IsOwn), is not known yet. adopt owns it
			// right after the create.
			sec.Annotations = map[string]string{monv1.CredentialsPendingAnnotation: "true"}
		}
		if err := c.d.Client.Create(ctx, &sec); err != nil {
			return false, fmt.Errorf("create credentials secret: %w", err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("read credentials secret: %w", err)
	case !credentials.IsOwn(&sec, m):
		// Someone else's Secret has the name, or an earlier Monitor's of
		// the same name (deleted with --cascade=orphan): never write over
		// it, nor let this Monitor use what it holds.
		return false, core.ValidationError(core.FieldErr("config.headers",
			"secret %s exists and does not hold this monitor's credentials; rename the monitor or the Secret", key.Name))
	}
	old := sec.Data
	if m.UID == "" {
		old = nil // a Monitor being created keeps no stored value
	}
	data := credentials.Externalize(&m.Spec, m.Name, old)
	if heartbeat != "" {
		data[monv1.HeartbeatTokenKey] = []byte(heartbeat)
	}
	if maps.EqualFunc(data, sec.Data, bytes.Equal) && !credentials.SetOwner(&sec, m) {
		return false, nil
	}
	sec.Data = data
	if err := c.d.Client.Update(ctx, &sec); err != nil {
		return false, fmt.Errorf("update credentials secret: %w", err)
	}
	return false, nil
}

// adopt runs after a Monitor was created: its credentials
// Secret, made before it, gets it as owner. Without an owner the Secret
// would outlive the Monitor, so a failure is returned.
func (c *credentialSecrets) adopt(ctx context.Context, m *monv1.Monitor) error {
	var sec corev1.Secret
	err := c.d.Reader.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: credentials.SecretName(m.Name)}, &sec)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read credentials secret: %w", err)
	}
	if !credentials.Pending(&sec, m.Name) || !credentials.SetOwner(&sec, m) {
		return nil // not the Secret made for this create: not ours to own
	}
	if err := c.d.Client.Update(ctx, &sec); err != nil {
		return fmt.Errorf("own credentials secret: %w", err)
	}
	return nil
}

// drop deletes the credentials Secret made for a Monitor whose
// creation then failed.
func (c *credentialSecrets) drop(ctx context.Context, m *monv1.Monitor) {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: credentials.SecretName(m.Name)}}
	_ = client.IgnoreNotFound(c.d.Client.Delete(ctx, sec))
}

// create creates m after moving its credentials (and heartbeat, the
// token of a cron monitor, if any) to its Secret, and makes m the Secret's
// owner.
func (c *credentialSecrets) create(ctx context.Context, m *monv1.Monitor, heartbeat string) error {
	made, err := c.keep(ctx, m, heartbeat)
	if err != nil {
		return err
	}
	if err := c.d.Client.Create(ctx, m); err != nil {
		if made {
			c.drop(ctx, m)
		}
		return err
	}
	return c.adopt(ctx, m)
}

// inline is m's spec with the values of its credentials Secret
// in place of the references to it, so a plan compares credentials as
// written (code sends them in plain text). A plan inlines every monitor it
// compares, so the Secrets are read with one list of the namespace's
// credentials Secrets per request (core.Deps.ListOnce), and only when m
// references its own Secret at all.
func (c *credentialSecrets) inline(ctx context.Context, m *monv1.Monitor) (*monv1.MonitorSpec, error) {
	own := credentials.SecretName(m.Name)
	if !slices.ContainsFunc(credentials.References(&m.Spec), func(r credentials.Reference) bool { return r.Secret.Name == own }) {
		return &m.Spec, nil
	}
	l, err := c.d.ListOnce(ctx, &corev1.SecretList{}, m.Namespace, client.HasLabels{monv1.CredentialsOfLabel})
	if err != nil {
		return nil, fmt.Errorf("read credentials secrets: %w", err)
	}
	for _, sec := range l.(*corev1.SecretList).Items {
		if credentials.IsOwn(&sec, m) {
			return credentials.Inline(&m.Spec, m.Name, sec.Data), nil
		}
	}
	return &m.Spec, nil
}

// checkRefs refuses the Secret references a write of m makes (new
// ones, or ones whose header now goes to another origin; was is the stored
// spec, nil on create) that its caller may not make. Below the owner level
// a caller makes none: a Standard or Automation key cannot read Secrets,
// so it must not have the manager send one to a target it picks (not even
// the monitor's own credentials, which the key sees only as [REDACTED]); it
// sends values, which go to the monitor's own Secret. References the
// monitor already has stay as long as their target's origin does. An
// owner may reference any Secret the monitor may read
// (credentials.Referable). The resolver checks again when the value is
// read, so a Secret relabelled later is refused too.
func (c *credentialSecrets) checkRefs(ctx context.Context, m *monv1.Monitor, was *monv1.MonitorSpec) error {
	caller := core.CallerFrom(ctx)
	owner := caller != nil && caller.Owner
	var errs []core.FieldError
	for _, ref := range credentials.NewReferences(&m.Spec, was) {
		f := restHeaderField(ref)
		if !owner {
			errs = append(errs, core.FieldErr(f, "secret_ref needs the workspace owner; send the value instead (it is kept in a Secret owned by the monitor and shown as %s)", credentials.Redacted))
			continue
		}
		if len(validation.IsDNS1123Subdomain(ref.Secret.Name)) > 0 {
			continue // not a Secret name: the spec validation refuses it
		}
		if err := credentials.KeyReferable(ref.Secret, m); err != nil {
			errs = append(errs, core.FieldErr(f, "%v", err))
			continue
		}
		var sec corev1.Secret
		err := c.reader().Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Secret.Name}, &sec)
		if apierrors.IsNotFound(err) {
			continue // may come later; the resolver checks it then
		}
		if notAllowed := (*credentials.NotAllowedError)(nil); errors.As(err, &notAllowed) {
			errs = append(errs, core.FieldErr(f, "%v", notAllowed))
			continue
		}
		if err != nil {
			return fmt.Errorf("read secret %s: %w", ref.Secret.Name, err)
		}
		if err := credentials.Referable(&sec, m); err != nil {
			errs = append(errs, core.FieldErr(f, "%v", err))
		}
	}
	if len(errs) > 0 {
		return core.ValidationError(errs...)
	}
	return nil
}

// reader reads the Secrets a monitor may reference: the
// CredentialSecrets option, else Deps.Reader.
func (c *credentialSecrets) reader() client.Reader {
	if c.secrets != nil {
		return c.secrets
	}
	return c.d.Reader
}

// restHeaderField is the REST field of a referencing header:
// config.headers.<name>, or config.steps[N].headers.<name>.
func restHeaderField(ref credentials.Reference) string {
	if n, ok := strings.CutPrefix(ref.List, "step"); ok {
		if i, err := strconv.Atoi(n); err == nil {
			return credentials.StepPath(i) + "." + ref.Header
		}
	}
	return "config.headers." + ref.Header
}

// heartbeatToken is the heartbeat token of cron monitor m: one set by hand
// and not moved yet (monv1.HeartbeatTokenAnnotation), else the one its
// credentials Secret keeps (credentials.HeartbeatToken); "" when there is
// none, or none whose hash m's pings are matched by. The Secret is read
// through the cache of credentials Secrets.
func (c *credentialSecrets) heartbeatToken(ctx context.Context, m *monv1.Monitor) (string, error) {
	if tok := m.Annotations[monv1.HeartbeatTokenAnnotation]; tok != "" {
		return tok, nil
	}
	if monv1.HeartbeatTokenHash(m) == "" {
		return "", nil
	}
	var sec corev1.Secret
	err := c.reader().Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: credentials.SecretName(m.Name)}, &sec)
	if notAllowed := (*credentials.NotAllowedError)(nil); apierrors.IsNotFound(err) || errors.As(err, &notAllowed) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read credentials secret: %w", err)
	}
	return credentials.HeartbeatToken(&sec, m), nil
}

// rotateHeartbeat gives cron monitor m the new heartbeat token tok: the
// Secret first, then the hash in the object, which is what stops the old
// URL; a failure between the two leaves the old URL working.
func (c *credentialSecrets) rotateHeartbeat(ctx context.Context, m *monv1.Monitor, tok string) error {
	var sec corev1.Secret
	err := c.d.Reader.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: credentials.SecretName(m.Name)}, &sec)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("read credentials secret: %w", err)
	}
	if err := credentials.KeepHeartbeatToken(&sec, m, tok); err != nil {
		return core.ValidationError(core.FieldErr("type", "%v", err))
	}
	if sec.ResourceVersion == "" {
		err = c.d.Client.Create(ctx, &sec)
	} else {
		err = c.d.Client.Update(ctx, &sec)
	}
	if err != nil {
		return fmt.Errorf("keep heartbeat token: %w", err)
	}
	return nil
}
