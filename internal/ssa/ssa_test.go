package ssa

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAdoptionSplitsTheLegacyStatusEntry(t *testing.T) {
	legacyStatus := `{"f:status":{".":{},"f:connectionID":{},"f:consecutiveFailures":{},"f:lastDeliveryStatus":{},` +
		`"f:conditions":{".":{},"k:{\"type\":\"Ready\"}":{".":{},"f:status":{}},"k:{\"type\":\"Failing\"}":{".":{},"f:status":{}}}}}`
	spec := metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:type":{}}}`)}}
	legacy := metav1.ManagedFieldsEntry{Manager: "old", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		FieldsType: "FieldsV1", Subresource: "status", FieldsV1: &metav1.FieldsV1{Raw: []byte(legacyStatus)}}
	a := Adoption{Legacy: "old", Owner: "controller", Split: map[string][]string{
		"worker": {"consecutiveFailures", "lastDeliveryAt", "lastDeliveryStatus", "conditions/Failing"},
	}}
	got, err := a.managedFields([]metav1.ManagedFieldsEntry{spec, legacy})
	if err != nil {
		t.Fatal(err)
	}
	byManager := map[string]map[string]any{}
	for _, e := range got {
		if e.Manager == "old" {
			t.Errorf("the legacy entry is still there: %+v", e)
		}
		if e.Manager != "kubectl" && (e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "status") {
			t.Errorf("%s: operation %s subresource %q, want an apply of status", e.Manager, e.Operation, e.Subresource)
		}
		var m map[string]any
		if err := json.Unmarshal(e.FieldsV1.Raw, &m); err != nil {
			t.Fatal(err)
		}
		byManager[e.Manager] = m
	}
	if len(got) != 3 || byManager["kubectl"] == nil {
		t.Fatalf("entries %v, want kubectl, controller and worker", byManager)
	}
	status := func(m string) map[string]any { return byManager[m]["f:status"].(map[string]any) }
	conds := func(m string) map[string]any { return status(m)["f:conditions"].(map[string]any) }
	if _, ok := status("worker")["f:consecutiveFailures"]; !ok {
		t.Errorf("worker status %v lacks consecutiveFailures", status("worker"))
	}
	if _, ok := status("controller")["f:consecutiveFailures"]; ok {
		t.Errorf("controller status %v still has consecutiveFailures", status("controller"))
	}
	if _, ok := conds("worker")[`k:{"type":"Failing"}`]; !ok {
		t.Errorf("worker conditions %v lack Failing", conds("worker"))
	}
	if _, ok := conds("controller")[`k:{"type":"Failing"}`]; ok {
		t.Errorf("controller conditions %v still have Failing", conds("controller"))
	}
	if _, ok := conds("controller")[`k:{"type":"Ready"}`]; !ok {
		t.Errorf("controller conditions %v lack Ready", conds("controller"))
	}
	if _, ok := status("controller")["f:connectionID"]; !ok {
		t.Errorf("controller status %v lacks connectionID", status("controller"))
	}

	again, err := a.managedFields(got)
	if err != nil || again != nil {
		t.Errorf("a second adoption = %v, %v; want nothing to do", again, err)
	}
}
