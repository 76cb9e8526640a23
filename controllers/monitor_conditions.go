package controllers

import (
	"fmt"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
)

// secretProblem is a Secret reference the monitor cannot read: the Secret
// or its key is missing, or the monitor may not read the Secret
// (notAllowed says why, see credentials.Referable). Empty when every
// reference resolves.
type secretProblem struct {
	name, key   string
	keyNotFound bool
	notAllowed  string
}

// setConfiguredCondition records whether the monitor can run: every Secret
// it reads resolves (missing names the first one that does not) and, unless
// it is a cron monitor, at least one region is effective.
func setConfiguredCondition(m *monv1.Monitor, missing *secretProblem) {
	ok, reason, msg := true, monv1.ReasonReconciled, "configuration is complete"
	switch {
	case missing != nil && missing.notAllowed != "":
		ok, reason, msg = false, monv1.ReasonSecretNotAllowed, missing.notAllowed
	case missing != nil && missing.keyNotFound:
		ok, reason, msg = false, monv1.ReasonSecretNotFound, fmt.Sprintf("secret %s has no key %s", missing.name, missing.key)
	case missing != nil:
		ok, reason, msg = false, monv1.ReasonSecretNotFound, fmt.Sprintf("secret %s not found", missing.name)
	case len(m.Status.EffectiveRegions) == 0 && m.Spec.Type != monv1.MonitorCron:
		ok, reason, msg = false, monv1.ReasonNoRegions, "no probe region is available to this monitor; create a ProbeRegion"
	}
	conditions.Set(&m.Status.Conditions, m.Generation, monv1.MonitorConditionConfigured, ok, reason, msg)
}

// setAvailableCondition records whether the monitor is free of an open
// incident, and why from status.currentStatus.
func setAvailableCondition(m *monv1.Monitor) {
	available := m.Status.OpenIncident == nil
	reason, msg := monv1.ReasonChecksPassing, "no incident is open"
	switch {
	case !available:
		reason, msg = monv1.ReasonIncidentOpen, "incident "+m.Status.OpenIncident.ID+" is open"
	case m.Status.CurrentStatus == monv1.StatusPending:
		reason, msg = monv1.ReasonAwaitingChecks, "no check has completed yet"
	case m.Status.CurrentStatus == monv1.StatusPaused:
		reason, msg = monv1.ReasonPaused, "the monitor is paused"
	case m.Status.CurrentStatus == monv1.StatusMaintenance:
		reason, msg = monv1.ReasonUnderMaintenance, "a maintenance window covers the monitor"
	}
	conditions.Set(&m.Status.Conditions, m.Generation, monv1.MonitorConditionAvailable, available, reason, msg)
}

// setMonitorReadyCondition mirrors Configured: a configured monitor is
// scheduled in its regions.
func setMonitorReadyCondition(m *monv1.Monitor) {
	configured := conditions.IsTrue(m.Status.Conditions, monv1.MonitorConditionConfigured)
	reason, msg := monv1.ReasonReconciled, "the monitor is configured and scheduled"
	if !configured {
		reason, msg = monv1.ReasonNotConfigured, "see the Configured condition"
	}
	conditions.Set(&m.Status.Conditions, m.Generation, monv1.ConditionReady, configured, reason, msg)
}
