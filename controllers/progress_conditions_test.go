package controllers

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
)

func TestSetProgressConditions(t *testing.T) {
	type want struct{ reconciling, stalled string } // reasons; "" = absent
	for _, tc := range []struct {
		name  string
		cause *metav1.Condition // the Ready condition before; nil = none
		prior []string          // progress conditions already present
		want  want
	}{
		{"no cause yet", nil, nil, want{}},
		{"ready", &metav1.Condition{Status: "True", Reason: monv1.ReasonReconciled}, nil, want{}},
		{"ready again clears both", &metav1.Condition{Status: "True", Reason: monv1.ReasonReconciled},
			[]string{monv1.ConditionReconciling, monv1.ConditionStalled}, want{}},
		{"secret missing", &metav1.Condition{Status: "False", Reason: monv1.ReasonSecretNotFound}, nil, want{stalled: monv1.ReasonSecretNotFound}},
		{"secret not allowed", &metav1.Condition{Status: "False", Reason: monv1.ReasonSecretNotAllowed}, nil, want{stalled: monv1.ReasonSecretNotAllowed}},
		{"no regions", &metav1.Condition{Status: "False", Reason: monv1.ReasonNoRegions}, nil, want{stalled: monv1.ReasonNoRegions}},
		{"slug taken", &metav1.Condition{Status: "False", Reason: monv1.ReasonSlugTaken}, nil, want{stalled: monv1.ReasonSlugTaken}},
		{"pods refused", &metav1.Condition{Status: "False", Reason: monv1.ReasonPodsRefused}, nil, want{stalled: monv1.ReasonPodsRefused}},
		{"reference missing", &metav1.Condition{Status: "False", Reason: monv1.ReasonReferenceNotFound},
			[]string{monv1.ConditionReconciling}, want{stalled: monv1.ReasonReferenceNotFound}},
		{"deployment rejected", &metav1.Condition{Status: "False", Reason: monv1.ReasonProbeDeploymentRejected}, nil,
			want{stalled: monv1.ReasonProbeDeploymentRejected}},
		{"deployment failed is retried", &metav1.Condition{Status: "False", Reason: monv1.ReasonProbeDeploymentFailed}, nil,
			want{reconciling: monv1.ReasonProbeDeploymentFailed}},
		{"reconcile error is retried", &metav1.Condition{Status: "False", Reason: monv1.ReasonReconcileError},
			[]string{monv1.ConditionStalled}, want{reconciling: monv1.ReasonReconcileError}},
		{"awaiting agents", &metav1.Condition{Status: "False", Reason: "AwaitingAgents"}, nil, want{reconciling: "AwaitingAgents"}},
		{"unknown is in progress", &metav1.Condition{Status: "Unknown", Reason: monv1.ReasonSecretNotFound}, nil,
			want{stalled: monv1.ReasonSecretNotFound}},
	} {
		var conds []metav1.Condition
		if tc.cause != nil {
			conditions.Set(&conds, 1, monv1.ConditionReady, tc.cause.Status == "True", tc.cause.Reason, "why")
			if tc.cause.Status == "Unknown" {
				meta.FindStatusCondition(conds, monv1.ConditionReady).Status = metav1.ConditionUnknown
			}
		}
		for _, p := range tc.prior {
			conditions.Set(&conds, 1, p, true, "Old", "old")
		}
		setProgressConditions(&conds, 3, monv1.ConditionReady)
		for typ, reason := range map[string]string{monv1.ConditionReconciling: tc.want.reconciling, monv1.ConditionStalled: tc.want.stalled} {
			c := meta.FindStatusCondition(conds, typ)
			switch {
			case reason == "" && c != nil:
				t.Errorf("%s: %s = %s/%s, want absent", tc.name, typ, c.Status, c.Reason)
			case reason != "" && c == nil:
				t.Errorf("%s: no %s, want %s", tc.name, typ, reason)
			case reason != "" && (c.Status != metav1.ConditionTrue || c.Reason != reason || c.Message != "why" || c.ObservedGeneration != 3):
				t.Errorf("%s: %s = %+v, want True/%s/why at generation 3", tc.name, typ, *c, reason)
			}
		}
	}
}

func TestNewlyStalled(t *testing.T) {
	stalled := func(reason, msg string) []metav1.Condition {
		var c []metav1.Condition
		conditions.Set(&c, 1, monv1.ConditionStalled, true, reason, msg)
		return c
	}
	for _, tc := range []struct {
		name          string
		before, after []metav1.Condition
		want          string // reason of the Event; "" = none
	}{
		{"healthy", nil, nil, ""},
		{"stalls", nil, stalled(monv1.ReasonSlugTaken, "a"), monv1.ReasonSlugTaken},
		{"stays stalled", stalled(monv1.ReasonSlugTaken, "a"), stalled(monv1.ReasonSlugTaken, "a"), ""},
		{"another secret", stalled(monv1.ReasonSecretNotFound, "secret a not found"), stalled(monv1.ReasonSecretNotFound, "secret b not found"), monv1.ReasonSecretNotFound},
		{"another reason", stalled(monv1.ReasonSecretNotFound, "a"), stalled(monv1.ReasonNoRegions, "a"), monv1.ReasonNoRegions},
		{"recovers", stalled(monv1.ReasonNoRegions, "a"), nil, ""},
	} {
		got := ""
		if c := newlyStalled(tc.before, tc.after); c != nil {
			got = c.Reason
		}
		if got != tc.want {
			t.Errorf("%s: event %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestProbeDeploymentReason(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"forbidden by RBAC or a policy", apierrors.NewForbidden(gr, "probe", errors.New("denied")), monv1.ReasonProbeDeploymentRejected},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "probe", field.ErrorList{field.Invalid(field.NewPath("spec"), 1, "bad")}), monv1.ReasonProbeDeploymentRejected},
		{"wrapped", fmt.Errorf("apply probe deployment: %w", apierrors.NewForbidden(gr, "probe", errors.New("denied"))), monv1.ReasonProbeDeploymentRejected},
		{"conflict", apierrors.NewConflict(gr, "probe", errors.New("changed")), monv1.ReasonProbeDeploymentFailed},
		{"timeout", apierrors.NewServerTimeout(gr, "patch", 1), monv1.ReasonProbeDeploymentFailed},
		{"other", errors.New("connection refused"), monv1.ReasonProbeDeploymentFailed},
	} {
		if got := probeDeploymentReason(tc.err); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
