package controllers

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func TestMonitorConditions(t *testing.T) {
	type want struct {
		configured, available, ready                   bool
		configuredReason, availableReason, readyReason string
	}
	for _, tc := range []struct {
		name    string
		spec    monv1.MonitorSpec
		status  monv1.MonitorStatus
		missing *secretProblem
		want    want
	}{
		{"healthy", monv1.MonitorSpec{}, monv1.MonitorStatus{EffectiveRegions: []string{"eu"}, CurrentStatus: monv1.StatusUp},
			nil, want{true, true, true, monv1.ReasonReconciled, monv1.ReasonChecksPassing, monv1.ReasonReconciled}},
		{"no regions", monv1.MonitorSpec{}, monv1.MonitorStatus{CurrentStatus: monv1.StatusPending},
			nil, want{false, true, false, monv1.ReasonNoRegions, monv1.ReasonAwaitingChecks, monv1.ReasonNotConfigured}},
		{"cron needs no regions", monv1.MonitorSpec{Type: monv1.MonitorCron}, monv1.MonitorStatus{CurrentStatus: monv1.StatusPaused},
			nil, want{true, true, true, monv1.ReasonReconciled, monv1.ReasonPaused, monv1.ReasonReconciled}},
		{"secret missing", monv1.MonitorSpec{}, monv1.MonitorStatus{EffectiveRegions: []string{"eu"}, CurrentStatus: monv1.StatusMaintenance},
			&secretProblem{name: "token"}, want{false, true, false, monv1.ReasonSecretNotFound, monv1.ReasonUnderMaintenance, monv1.ReasonNotConfigured}},
		{"secret key missing", monv1.MonitorSpec{}, monv1.MonitorStatus{EffectiveRegions: []string{"eu"}},
			&secretProblem{name: "token", key: "k", keyNotFound: true}, want{false, true, false, monv1.ReasonSecretNotFound, monv1.ReasonChecksPassing, monv1.ReasonNotConfigured}},
		{"secret not allowed", monv1.MonitorSpec{}, monv1.MonitorStatus{EffectiveRegions: []string{"eu"}},
			&secretProblem{name: "db", notAllowed: "secret db may not be used by this monitor"}, want{false, true, false, monv1.ReasonSecretNotAllowed, monv1.ReasonChecksPassing, monv1.ReasonNotConfigured}},
		{"incident open", monv1.MonitorSpec{}, monv1.MonitorStatus{EffectiveRegions: []string{"eu"}, CurrentStatus: monv1.StatusDown, OpenIncident: &monv1.IncidentRef{ID: "i1"}},
			nil, want{true, false, true, monv1.ReasonReconciled, monv1.ReasonIncidentOpen, monv1.ReasonReconciled}},
	} {
		m := &monv1.Monitor{Spec: tc.spec, Status: tc.status}
		setConfiguredCondition(m, tc.missing)
		setAvailableCondition(m)
		setMonitorReadyCondition(m)
		check := func(typ string, ok bool, reason string) {
			c := meta.FindStatusCondition(m.Status.Conditions, typ)
			if c == nil {
				t.Fatalf("%s: no %s condition", tc.name, typ)
			}
			if (c.Status == "True") != ok || c.Reason != reason {
				t.Errorf("%s: %s = %s/%s, want %v/%s", tc.name, typ, c.Status, c.Reason, ok, reason)
			}
		}
		check(monv1.MonitorConditionConfigured, tc.want.configured, tc.want.configuredReason)
		check(monv1.MonitorConditionAvailable, tc.want.available, tc.want.availableReason)
		check(monv1.ConditionReady, tc.want.ready, tc.want.readyReason)
	}
}
