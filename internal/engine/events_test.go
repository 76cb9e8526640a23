package engine

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// capturedEvent is one Event a captureRecorder received.
type capturedEvent struct {
	object      runtime.Object
	annotations map[string]string
	eventType   string
	reason      string
	message     string
}

// captureRecorder is a record.EventRecorder that keeps every Event with the
// object it was recorded on.
type captureRecorder struct{ events []capturedEvent }

func (c *captureRecorder) Event(o runtime.Object, typ, reason, msg string) {
	c.events = append(c.events, capturedEvent{o, nil, typ, reason, msg})
}

func (c *captureRecorder) Eventf(o runtime.Object, typ, reason, f string, args ...any) {
	c.events = append(c.events, capturedEvent{o, nil, typ, reason, fmt.Sprintf(f, args...)})
}

func (c *captureRecorder) AnnotatedEventf(o runtime.Object, ann map[string]string, typ, reason, f string, args ...any) {
	c.events = append(c.events, capturedEvent{o, ann, typ, reason, fmt.Sprintf(f, args...)})
}

var _ record.EventRecorder = &captureRecorder{}

func eventMonitor() *monv1.Monitor {
	return &monv1.Monitor{
		ObjectMeta: metav1.ObjectMeta{Name: "checkout", Namespace: "team-a", UID: "0b6c1f5e-0000-4000-8000-000000000001"},
		Spec:       monv1.MonitorSpec{Name: "Checkout API"},
	}
}

func TestRecordIncidentEvent(t *testing.T) {
	m := eventMonitor()
	rec := &captureRecorder{}
	RecordIncidentEvent(rec, m, true, "inc-1")
	RecordIncidentEvent(rec, m, false, "inc-1")
	want := []capturedEvent{
		{m, map[string]string{"uptime-operator.io/incident-id": "inc-1"}, corev1.EventTypeWarning, "IncidentOpened",
			`Incident inc-1 opened for monitor "Checkout API"`},
		{m, map[string]string{"uptime-operator.io/incident-id": "inc-1"}, corev1.EventTypeNormal, "IncidentResolved",
			`Incident inc-1 resolved for monitor "Checkout API"`},
	}
	if len(rec.events) != len(want) {
		t.Fatalf("recorded %d events, want %d: %+v", len(rec.events), len(want), rec.events)
	}
	for i, w := range want {
		g := rec.events[i]
		if g.object != runtime.Object(m) {
			t.Errorf("event %d recorded on %v, want the Monitor", i, g.object)
		}
		if g.eventType != w.eventType || g.reason != w.reason || g.message != w.message {
			t.Errorf("event %d = %s %s %q, want %s %s %q", i, g.eventType, g.reason, g.message, w.eventType, w.reason, w.message)
		}
		if fmt.Sprint(g.annotations) != fmt.Sprint(w.annotations) {
			t.Errorf("event %d annotations = %v, want %v", i, g.annotations, w.annotations)
		}
	}
}

func TestRecordIncidentEventFakeRecorder(t *testing.T) {
	// client-go's FakeRecorder, as controller tests use it.
	fake := record.NewFakeRecorder(4)
	m := eventMonitor()
	m.Spec.Name = "" // falls back to the object name
	RecordIncidentEvent(fake, m, true, "inc-2")
	RecordIncidentEvent(fake, m, false, "inc-2")
	for _, want := range []string{
		`Warning IncidentOpened Incident inc-2 opened for monitor "checkout" map[uptime-operator.io/incident-id:inc-2]`,
		`Normal IncidentResolved Incident inc-2 resolved for monitor "checkout" map[uptime-operator.io/incident-id:inc-2]`,
	} {
		select {
		case got := <-fake.Events:
			if got != want {
				t.Errorf("event = %q, want %q", got, want)
			}
		default:
			t.Fatalf("no event recorded, want %q", want)
		}
	}
}

func TestRecordIncidentEventWithoutRecorder(t *testing.T) {
	// Neither a nil recorder nor a nil Monitor may panic: the engine runs
	// without a recorder in tests and in dev mode.
	RecordIncidentEvent(nil, eventMonitor(), true, "inc-3")
	rec := &captureRecorder{}
	RecordIncidentEvent(rec, nil, true, "inc-3")
	if len(rec.events) != 0 {
		t.Errorf("recorded %d events for a nil Monitor", len(rec.events))
	}
}
