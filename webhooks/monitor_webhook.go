package webhooks

import (
	"context"
	"errors"
	"fmt"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// MonitorWebhook defaults and validates Monitors.
type MonitorWebhook struct{ *Deps }

var _ admission.Defaulter[*monv1.Monitor] = MonitorWebhook{}
var _ admission.Validator[*monv1.Monitor] = MonitorWebhook{}

// Default fills in the name, interval and type defaults, normalises tags and
// clamps the ping packet count. Only the default interval depends on the
// plan, so the plan is read only when it is needed: every write of a Monitor
// passes here, the controller's finalizer update too.
//
// A new Monitor gets the history finalizer here, so the controller does not
// need a write of its own (and another pass through these webhooks) to
// add it; the controller still adds it to Monitors created without it.
func (w MonitorWebhook) Default(ctx context.Context, m *monv1.Monitor) error {
	if req, err := admission.RequestFromContext(ctx); err == nil && req.Operation == admissionv1.Create {
		controllerutil.AddFinalizer(m, monv1.HistoryFinalizer)
	}
	var plan *monv1.Plan
	if m.Spec.IntervalSeconds == 0 {
		var err error
		if plan, err = w.Plans.ForNamespace(ctx, m.Namespace); err != nil {
			return err
		}
	}
	monitor.DefaultMonitor(m, plan)
	return nil
}

// ValidateCreate checks a new Monitor, including plan limits.
func (w MonitorWebhook) ValidateCreate(ctx context.Context, m *monv1.Monitor) (admission.Warnings, error) {
	return nil, w.validate(ctx, nil, m)
}

// ValidateUpdate checks a changed Monitor; its type cannot change. An
// update that leaves the spec as it was (finalizers, labels, annotations)
// is not checked again: the spec was checked when it was written, and a
// rule that changed since (a region removed, a lower plan limit) must not
// block the controller's finalizer or a label edit.
//
// A changed heartbeat token is checked either way (validateHeartbeatToken).
func (w MonitorWebhook) ValidateUpdate(ctx context.Context, old, m *monv1.Monitor) (admission.Warnings, error) {
	if !m.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	if equality.Semantic.DeepEqual(old.Spec, m.Spec) {
		errs, err := w.validateHeartbeatToken(ctx, old, m)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return nil, invalid(m, errs)
	}
	return nil, w.validate(ctx, old, m)
}

// ValidateDelete allows every delete.
func (w MonitorWebhook) ValidateDelete(context.Context, *monv1.Monitor) (admission.Warnings, error) {
	return nil, nil
}

func (w MonitorWebhook) validate(ctx context.Context, old, m *monv1.Monitor) error {
	plan, err := w.Plans.ForNamespace(ctx, m.Namespace)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	errs := monitor.ValidateMonitorSpec(ctx, &m.Spec, w.Guard(), field.NewPath("spec"))
	if old != nil && old.Spec.Type != m.Spec.Type {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "type"), "type cannot change after creation"))
	}
	errs = append(errs, validateInlineCredentials(old, m)...)
	refErrs, err := w.validateMonitorRefs(ctx, old, m, plan)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	errs = append(errs, refErrs...)
	tokenErrs, err := w.validateHeartbeatToken(ctx, old, m)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	errs = append(errs, tokenErrs...)
	return invalid(m, errs)
}

// validateMonitorRefs checks the rules that read other objects: the plan's
// limits, referenced groups and policies, region codes and key uniqueness.
func (w MonitorWebhook) validateMonitorRefs(ctx context.Context, old, m *monv1.Monitor, plan *monv1.Plan) (field.ErrorList, error) {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if min := plans.MinIntervalSeconds(plan); m.Spec.IntervalSeconds < min {
		errs = append(errs, field.Invalid(spec.Child("intervalSeconds"), m.Spec.IntervalSeconds,
			fmt.Sprintf("must not be below the plan's minimum interval of %d seconds", min)))
	}
	if old == nil && plan.Spec.Limits.Monitors > 0 {
		var list monv1.MonitorList
		if err := w.Reader.List(ctx, &list, client.InNamespace(m.Namespace)); err != nil {
			return nil, fmt.Errorf("list monitors: %w", err)
		}
		if n := countLive(list.Items, m.Name); n >= int(plan.Spec.Limits.Monitors) {
			errs = append(errs, (&plans.LimitError{Resource: "monitors", Current: n, Limit: int(plan.Spec.Limits.Monitors)}).Field(spec))
		}
	}
	if ref := m.Spec.GroupRef; ref != nil {
		if err := w.mustExist(ctx, m.Namespace, ref.Name, &monv1.MonitorGroup{}); err != nil {
			errs = append(errs, field.NotFound(spec.Child("groupRef", "name"), ref.Name))
		}
	}
	if ref := m.Spec.EscalationPolicyRef; ref != nil {
		if err := w.mustExist(ctx, m.Namespace, ref.Name, &monv1.EscalationPolicy{}); err != nil {
			errs = append(errs, field.NotFound(spec.Child("escalationPolicyRef", "name"), ref.Name))
		}
	}
	if len(m.Spec.DependsOn) > 0 && !plans.HasFeature(plan, monv1.FeatureDependencies) {
		errs = append(errs, featureError(spec.Child("dependsOn"), plan, monv1.FeatureDependencies))
	}
	for i, ref := range m.Spec.DependsOn {
		p := spec.Child("dependsOn").Index(i).Child("name")
		if ref.Name == m.Name {
			errs = append(errs, field.Invalid(p, ref.Name, "a monitor cannot depend on itself"))
			continue
		}
		if err := w.mustExist(ctx, m.Namespace, ref.Name, &monv1.Monitor{}); err != nil {
			errs = append(errs, field.NotFound(p, ref.Name))
		}
	}
	regionErrs, err := w.validateRegions(ctx, m.Spec.Regions, plan, spec.Child("regions"))
	if err != nil {
		return nil, err
	}
	errs = append(errs, regionErrs...)
	secretErrs, err := w.validateSecretRefs(ctx, old, m)
	if err != nil {
		return nil, err
	}
	errs = append(errs, secretErrs...)
	moveErrs, err := w.validateCredentialMoves(ctx, old, m)
	if err != nil {
		return nil, err
	}
	errs = append(errs, moveErrs...)
	if m.Spec.Key != "" && (old == nil || old.Spec.Key != m.Spec.Key) {
		// Only the monitors carrying the key are read: kube-apiserver
		// selects them on the CRD's selectable field, so a create costs the
		// same in a namespace of 10 or 100,000 Monitors.
		list, err := w.keyed(ctx, m.Namespace, m.Spec.Key)
		if err != nil {
			return nil, err
		}
		for _, other := range list.Items {
			// One being deleted does not hold its key: a replace deletes the
			// old Monitor and creates the new one while the old one's
			// history finalizer still runs.
			if other.Name != m.Name && other.Spec.Key == m.Spec.Key && other.DeletionTimestamp.IsZero() {
				errs = append(errs, field.Duplicate(spec.Child("key"), m.Spec.Key))
				break
			}
		}
	}
	return errs, nil
}

// validateSecretRefs refuses a header valueFrom, new in this write, that
// names a Secret the Monitor may not read (credentials.Referable): a
// Monitor writer must not obtain, through the manager's permission, a
// Secret RBAC keeps from them. A Secret that does not exist yet passes (it
// may come later; resolution checks it again, and the Configured condition
// reports SecretNotAllowed). References kept as they were are not checked
// again.
func (w MonitorWebhook) validateSecretRefs(ctx context.Context, old, m *monv1.Monitor) (field.ErrorList, error) {
	var was *monv1.MonitorSpec
	if old != nil {
		was = &old.Spec
	}
	var errs field.ErrorList
	for _, ref := range credentials.NewReferences(&m.Spec, was) {
		if len(validation.IsDNS1123Subdomain(ref.Secret.Name)) > 0 {
			continue // not a Secret name: the spec validation refuses it
		}
		if err := credentials.KeyReferable(ref.Secret, m); err != nil {
			errs = append(errs, field.Forbidden(ref.Path.Child("valueFrom", "key"), err.Error()))
			continue
		}
		var sec corev1.Secret
		err := w.secrets().Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Secret.Name}, &sec)
		if apierrors.IsNotFound(err) {
			continue
		}
		if notAllowed := (*credentials.NotAllowedError)(nil); errors.As(err, &notAllowed) {
			errs = append(errs, field.Forbidden(ref.Path.Child("valueFrom", "name"), notAllowed.Error()))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read secret %s: %w", ref.Secret.Name, err)
		}
		if err := credentials.Referable(&sec, m); err != nil {
			errs = append(errs, field.Forbidden(ref.Path.Child("valueFrom", "name"), err.Error()))
		}
	}
	return errs, nil
}

// validateHeartbeatToken checks a heartbeat token set by hand
// (monv1.HeartbeatTokenAnnotation) or a token hash
// (monv1.HeartbeatTokenHashAnnotation) set or changed by this write. The
// token is the only credential of a heartbeat URL, and the URL names no
// workspace: a token set by hand must be as hard to guess as a minted one
// (monv1.ValidHeartbeatToken), and no other Monitor of the cluster may
// hold it (nor its hash), else a writer could copy another workspace's
// token, or its hash, which `view` reads, and receive (or swallow) its
// pings. The Monitors holding a hash are found through the cache's index;
// a cache without the index (a manager that runs no engine) lists them
// from the API server.
func (w MonitorWebhook) validateHeartbeatToken(ctx context.Context, old, m *monv1.Monitor) (field.ErrorList, error) {
	annotations := field.NewPath("metadata", "annotations")
	path := annotations.Key(monv1.HeartbeatTokenAnnotation)
	if tok := m.Annotations[monv1.HeartbeatTokenAnnotation]; tok != "" && (old == nil || old.Annotations[monv1.HeartbeatTokenAnnotation] != tok) {
		if !monv1.ValidHeartbeatToken(tok) {
			return field.ErrorList{field.Invalid(path, "(hidden)",
				"must be at least 32 characters of 0-9 and a-z; leave it out and one is minted")}, nil
		}
	} else {
		path = annotations.Key(monv1.HeartbeatTokenHashAnnotation)
		if h := m.Annotations[monv1.HeartbeatTokenHashAnnotation]; h != "" && !monv1.ValidHeartbeatTokenHash(h) {
			return field.ErrorList{field.Invalid(path, h, "must be the hex SHA-256 of a heartbeat token (64 characters of 0-9 and a-f)")}, nil
		}
	}
	h := monv1.HeartbeatTokenHash(m)
	if h == "" || (old != nil && monv1.HeartbeatTokenHash(old) == h) {
		return nil, nil
	}
	var list monv1.MonitorList
	err := errors.New("no cache")
	if w.Cache != nil {
		err = w.Cache.List(ctx, &list, client.MatchingFields{monv1.HeartbeatTokenIndex: h})
	}
	if err != nil {
		list = monv1.MonitorList{}
		if err := w.Reader.List(ctx, &list); err != nil {
			return nil, fmt.Errorf("list monitors: %w", err)
		}
	}
	for _, other := range list.Items {
		if monv1.HeartbeatTokenHash(&other) == h && (other.Namespace != m.Namespace || other.Name != m.Name) {
			return field.ErrorList{field.Duplicate(path, "(hidden)")}, nil
		}
	}
	return nil, nil
}

// keyed lists the namespace's Monitors that carry key. A cluster whose
// Monitor CRD predates the selectable field (Helm does not upgrade CRDs)
// refuses the selector with 400: then every Monitor of the namespace is
// read, as before, rather than refusing every keyed write until the CRD is
// applied.
func (w MonitorWebhook) keyed(ctx context.Context, namespace, key string) (*monv1.MonitorList, error) {
	var list monv1.MonitorList
	err := w.Reader.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{monv1.MonitorKeyField: key})
	if apierrors.IsBadRequest(err) {
		list = monv1.MonitorList{}
		err = w.Reader.List(ctx, &list, client.InNamespace(namespace))
	}
	if err != nil {
		return nil, fmt.Errorf("list monitors with key %q: %w", key, err)
	}
	return &list, nil
}

// validateRegions checks that every code names a ProbeRegion, is allowed by
// the plan, and that the count fits the plan's location limit.
func (w MonitorWebhook) validateRegions(ctx context.Context, codes []string, plan *monv1.Plan, path *field.Path) (field.ErrorList, error) {
	if len(codes) == 0 {
		return nil, nil
	}
	var errs field.ErrorList
	if limit := plan.Spec.Limits.ProbeLocations; limit > 0 && len(codes) > int(limit) {
		errs = append(errs, field.TooMany(path, len(codes), int(limit)))
	}
	known, err := w.regionCodes(ctx, codes)
	if err != nil {
		return nil, err
	}
	for i, code := range codes {
		switch {
		case !slices.Contains(known, code):
			errs = append(errs, field.NotSupported(path.Index(i), code, known))
		case !plans.RegionAllowed(plan, code):
			errs = append(errs, field.Forbidden(path.Index(i), fmt.Sprintf("region %q is not available on the %s plan", code, plan.Name)))
		}
	}
	return errs, nil
}

func countLive(items []monv1.Monitor, except string) int {
	n := 0
	for _, m := range items {
		if m.Name != except && m.DeletionTimestamp.IsZero() {
			n++
		}
	}
	return n
}

// regionCodes lists the region codes from the cache, and again from the
// API server when one of want is not among them (a region created a
// moment ago).
func (w MonitorWebhook) regionCodes(ctx context.Context, want []string) ([]string, error) {
	if w.Cache != nil {
		known, err := monitor.RegionCodes(ctx, w.Cache)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(want, func(c string) bool { return !slices.Contains(known, c) }) {
			return known, nil
		}
	}
	return monitor.RegionCodes(ctx, w.Reader)
}
