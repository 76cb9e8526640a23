package main

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// TestPublishedMonitorTypes fails when the REST schema (docs/openapi.json)
// lists other monitor types than monv1.MonitorTypes, the one list: every
// enum that names a monitor type must be that list, in its order.
func TestPublishedMonitorTypes(t *testing.T) {
	raw, err := os.ReadFile("docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var want []any
	for _, typ := range monv1.MonitorTypes {
		want = append(want, string(typ))
	}
	found := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if e, ok := x["enum"].([]any); ok && slices.Contains(e, any(string(monv1.MonitorMultistep))) {
				found++
				if !slices.Equal(e, want) {
					t.Errorf("%s: enum %v, want monv1.MonitorTypes %v", path, e, want)
				}
			}
			for k, c := range x {
				walk(path+"/"+k, c)
			}
		case []any:
			for _, c := range x {
				walk(path+"[]", c)
			}
		}
	}
	walk("", doc)
	if found == 0 {
		t.Error("docs/openapi.json lists no monitor types")
	}
}
