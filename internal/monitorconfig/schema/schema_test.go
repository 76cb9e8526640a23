package schema

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// TestBoundsFromMarkers: the bounds of a key come from its CRD field's
// markers, for validation and for the REST document alike.
func TestBoundsFromMarkers(t *testing.T) {
	six, two := int32(6), int32(2)
	spec := &monv1.MonitorSpec{Type: monv1.MonitorHTTP, HTTP: &monv1.HTTPConfig{MaxRedirects: &six, TimeoutMs: 999,
		Assertions: []monv1.Assertion{{Source: "nope", Operator: "equals", Target: "1"}}}}
	errs := Validate(spec, field.NewPath("spec", "http"))
	want := map[string]string{
		"spec.http.maxRedirects":         "spec.http.maxRedirects: Invalid value: 6: must be between 0 and 5",
		"spec.http.timeoutMs":            "spec.http.timeoutMs: Invalid value: 999: must be between 1000 and 60000",
		"spec.http.assertions[0].source": "",
	}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %d", errs, len(want))
	}
	for _, e := range errs {
		w, ok := want[e.Field]
		if !ok || (w != "" && e.Error() != w) {
			t.Errorf("error %q", e.Error())
		}
	}
	spec.HTTP = &monv1.HTTPConfig{MaxRedirects: &two, TimeoutMs: 1000}
	if errs := Validate(spec, field.NewPath("spec", "http")); len(errs) != 0 {
		t.Fatalf("valid config refused: %v", errs)
	}

	doc, err := OpenAPI(M{"type": "array"})
	if err != nil {
		t.Fatal(err)
	}
	mr := doc["MonitorConfig"].(M)["properties"].(M)["max_redirects"].(M)
	if mr["minimum"] != 0.0 || mr["maximum"] != 5.0 || !strings.HasPrefix(mr["description"].(string), "http, api: max_redirects is how many redirects are followed (0-5); each hop is re-checked by the address guard. Defaults to 5.") {
		t.Fatalf("max_redirects schema %v", mr)
	}
}
