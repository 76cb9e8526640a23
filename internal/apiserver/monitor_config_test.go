package apiserver

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// TestOpenAPIConfigKeys holds the published MonitorConfig schema to the one
// config shape: every key of probeapi.Config, plus notification_emails.
func TestOpenAPIConfigKeys(t *testing.T) {
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var published []string
	for k := range doc.Components.Schemas["MonitorConfig"].Properties {
		published = append(published, k)
	}
	slices.Sort(published)
	want := append(probeapi.ConfigKeys(), configNotificationEmails)
	slices.Sort(want)
	if !slices.Equal(published, want) {
		t.Fatalf("MonitorConfig schema keys %v, config keys %v: add the key to hack/gen-openapi/schemas.go and run make manifests", published, want)
	}
}
