package engine

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// Reasons of the Kubernetes Events the engine records on Monitors.
const (
	// EventReasonIncidentOpened is a Warning Event: the quorum of regions
	// confirmed a failure and an incident opened.
	EventReasonIncidentOpened = "IncidentOpened"
	// EventReasonIncidentResolved is a Normal Event: the incident resolved.
	EventReasonIncidentResolved = "IncidentResolved"
)

// RecordIncidentEvent records a Kubernetes Event on the Monitor m when one
// of its incidents opens (opened) or resolves, so `kubectl describe monitor`
// and `kubectl get events` show incidents beside the Monitor's conditions.
// The incident ID is the store's UUID, the one the REST API uses. A nil
// recorder or Monitor records nothing (tests and the dev mode run the
// engine without one).
//
// Events are best effort: the recorder sends them asynchronously and
// aggregates repeats, so the call never blocks the engine; the store and
// the outbox stay the record of incidents and alerts.
func RecordIncidentEvent(recorder record.EventRecorder, m *monv1.Monitor, opened bool, incidentID string) {
	if recorder == nil || m == nil {
		return
	}
	name := m.Spec.Name
	if name == "" {
		name = m.Name
	}
	if opened {
		recorder.AnnotatedEventf(m, map[string]string{"uptime-operator.io/incident-id": incidentID},
			corev1.EventTypeWarning, EventReasonIncidentOpened, "Incident %s opened for monitor %q", incidentID, name)
		return
	}
	recorder.AnnotatedEventf(m, map[string]string{"uptime-operator.io/incident-id": incidentID},
		corev1.EventTypeNormal, EventReasonIncidentResolved, "Incident %s resolved for monitor %q", incidentID, name)
}
