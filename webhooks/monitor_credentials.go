package webhooks

import (
	"context"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// AccessReviewer creates SubjectAccessReviews (the manager's client).
type AccessReviewer interface {
	Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error
}

// A credential follows its origin through kubectl and GitOps too.
//
// The REST API drops a stored credential when a write moves its header to
// another origin without sending it again (package credentials). A kubectl
// write cannot "send it again" short of naming another Secret or a value,
// and whoever may write Monitors need not read Secrets (the chart's
// uptime-operator-editor role). So admission refuses a write that sends a
// Secret's value to a new place unless the requesting user may read that
// Secret themselves (a SubjectAccessReview of "get secrets/<name>" for the
// user of the admission request): a reference kept while its header's url
// (the monitor's, or the step's) moves to another origin, and a reference
// to the monitor's own credentials Secret (a credential stored through the
// REST API) that the write adds, which would otherwise undo a refusal in
// two writes (drop the header, move the url, add it back). A reference a
// write adds to a Secret that opts in is that Secret's consent and is
// checked by validateSecretRefs alone. Agents check the same binding where
// the request is sent (probeapi.Credential).

// validateCredentialMoves refuses the references of m that this write
// moves to another origin, or adds to m's own credentials Secret, when
// the requesting user may not read their Secret.
func (w MonitorWebhook) validateCredentialMoves(ctx context.Context, old, m *monv1.Monitor) (field.ErrorList, error) {
	var was *monv1.MonitorSpec
	if old != nil {
		was = &old.Spec
	}
	own := credentials.SecretName(m.Name)
	var (
		errs    field.ErrorList
		user    *authenticationv1.UserInfo
		allowed = map[string]bool{}
	)
	for _, ref := range credentials.NewReferences(&m.Spec, was) {
		if ref.Was == "" && ref.Secret.Name != own {
			continue
		}
		if user == nil {
			req, err := admission.RequestFromContext(ctx)
			if err != nil {
				return nil, fmt.Errorf("read the admission request: %w", err)
			}
			user = &req.UserInfo
		}
		ok, seen := allowed[ref.Secret.Name]
		if !seen {
			var err error
			if ok, err = w.mayReadSecret(ctx, user, m.Namespace, ref.Secret.Name); err != nil {
				return nil, err
			}
			allowed[ref.Secret.Name] = ok
		}
		if !ok {
			errs = append(errs, field.Forbidden(ref.Path.Child("valueFrom"), credentialMoveRefusal(ref, user.Username, own)))
		}
	}
	return errs, nil
}

// credentialMoveRefusal says what a write did with a credential its user
// may not read, and the ways out.
func credentialMoveRefusal(ref credentials.Reference, user, own string) string {
	where := "the url"
	if strings.HasPrefix(ref.List, "step") {
		where = "the step's url"
	}
	var what string
	if ref.Was != "" {
		from, _ := probeapi.Origin(ref.Was)
		to, ok := probeapi.Origin(ref.URL)
		if !ok {
			to = ref.URL
		}
		what = fmt.Sprintf("%s moves from %s to %s and the header %s keeps its value from secret %s", where, orText(from, ref.Was), to, ref.Header, ref.Secret.Name)
	} else {
		what = fmt.Sprintf("the header %s takes its value from secret %s, the monitor's own credentials (stored through the REST API for where they were sent then)", ref.Header, ref.Secret.Name)
	}
	return fmt.Sprintf("%s, which user %q may not read (get secrets/%s): supply the credential again "+
		"(valueFrom a Secret you may read, or the value through the REST API), drop the header, "+
		"or have someone who may read the Secret make this change", what, user, ref.Secret.Name)
}

func orText(origin, raw string) string {
	if origin != "" {
		return origin
	}
	return raw
}

// mayReadSecret asks kube-apiserver whether user may get the Secret.
func (w MonitorWebhook) mayReadSecret(ctx context.Context, user *authenticationv1.UserInfo, namespace, name string) (bool, error) {
	if w.Reviews == nil {
		return false, nil
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "get", Resource: "secrets", Name: name},
	}}
	if len(user.Extra) > 0 {
		sar.Spec.Extra = make(map[string]authorizationv1.ExtraValue, len(user.Extra))
		for k, v := range user.Extra {
			sar.Spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	if err := w.Reviews.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("review access to secret %s: %w", name, err)
	}
	return sar.Status.Allowed, nil
}
