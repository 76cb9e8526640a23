package automation

import (
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

func TestPlanFingerprint(t *testing.T) {
	a := &monv1.MonitorSpec{Name: "web", URL: "https://example.com", IntervalSeconds: 60, Key: "web"}
	b := a.DeepCopy()
	b.IntervalSeconds = 120
	diff := diffViews(managedView(a), managedView(b))
	if len(diff) != 1 || diff[0].Field != "interval_seconds" {
		t.Fatalf("diff = %+v", diff)
	}
	id := "uid-1"
	plan := func(d []restapi.FieldChange) []*planChange {
		return []*planChange{{PlanChange: restapi.PlanChange{Action: actionUpdate, Key: "web", MonitorID: &id, Diff: d}},
			{PlanChange: restapi.PlanChange{Action: actionNoop, Key: "db", MonitorID: &id}}}
	}
	if fingerprint(plan(diff)) != fingerprint(plan(diffViews(managedView(a), managedView(b)))) {
		t.Error("the same plan must hash the same")
	}
	c := a.DeepCopy()
	c.IntervalSeconds = 300
	if fingerprint(plan(diff)) == fingerprint(plan(diffViews(managedView(a), managedView(c)))) {
		t.Error("a different target value must change the fingerprint")
	}
	if fingerprint(plan(nil)) == fingerprint([]*planChange{{PlanChange: restapi.PlanChange{Action: actionDelete, Key: "web", MonitorID: &id}}}) {
		t.Error("a different action must change the fingerprint")
	}
	for k, ok := range map[string]bool{"web": true, "team/api:v1": true, "a.b_c-d": true, "-x": false, "": false, "has space": false, "x%2F": false} {
		if validKey(k) != ok {
			t.Errorf("validKey(%q) = %v", k, !ok)
		}
	}
}
