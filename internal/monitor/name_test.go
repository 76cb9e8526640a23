package monitor

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// TestNameWithoutControlCharacters: a monitor name with ESC, BEL, CR, a
// C1 control or DEL is refused (REST and admission share this rule), and
// the message shows the name escaped; other Unicode passes.
func TestNameWithoutControlCharacters(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"API", true},
		{"Zahlungs-API ✓ 東京", true},
		{"evil\x1b]0;pwned\x07", false},
		{"line\rover", false},
		{"csi\u009b31m", false},
		{"del\x7f", false},
		{"tab\tname", false},
	} {
		spec := &monv1.MonitorSpec{Name: tc.name, Type: monv1.MonitorHTTP, URL: "https://93.184.216.34/"}
		errs := ValidateMonitorSpec(context.Background(), spec, nil, field.NewPath("spec"))
		var nameErr string
		for _, e := range errs {
			if e.Field == "spec.name" {
				nameErr = e.Error()
			}
		}
		if (nameErr == "") != tc.ok {
			t.Errorf("name %q: error %q, want ok=%v", tc.name, nameErr, tc.ok)
		}
		if !tc.ok && (!strings.Contains(nameErr, "control characters") || strings.ContainsAny(nameErr, "\x1b\x07\r\x7f")) {
			t.Errorf("name %q: the message must name the rule and not carry the characters: %q", tc.name, nameErr)
		}
	}
}
