package main

import (
	"os"
	"strings"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// TestRestDocConfigKeys fails while the config keys table of
// docs/rest-api.md is not what the config structs say (run make
// manifests), and when a type of the registry has no row.
func TestRestDocConfigKeys(t *testing.T) {
	raw, err := os.ReadFile("../../docs/rest-api.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(raw), keysBegin)
	got, _, ok := strings.Cut(rest, keysEnd)
	if !ok {
		t.Fatal("docs/rest-api.md has no config keys block")
	}
	want := configKeysTable()
	if got != want {
		t.Errorf("docs/rest-api.md config keys are stale (run make manifests):\n got %s\nwant %s", got, want)
	}
	for _, r := range monv1.MonitorTypeRegistry {
		if !strings.Contains(want, "| "+string(r.Type)) && !strings.Contains(want, ", "+string(r.Type)) {
			t.Errorf("no row names type %s", r.Type)
		}
	}
}
