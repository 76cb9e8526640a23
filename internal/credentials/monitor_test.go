package credentials

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func spec() *monv1.MonitorSpec {
	return &monv1.MonitorSpec{
		HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{
			{Name: "Authorization", Value: ptr.To("Basic abc")},
			{Name: "X-Tenant", ValueFrom: &monv1.SecretKeySelector{Name: "tenant", Key: "id"}},
			{Name: "X-Empty", Value: ptr.To("")},
		}},
		Multistep: &monv1.MultistepConfig{Steps: []monv1.MultistepStep{
			{Name: "a"}, {Name: "b", Headers: []monv1.HTTPHeader{{Name: "Cookie", Value: ptr.To("s=1")}, {Name: "cookie!", Value: ptr.To("s=2")}}},
		}},
		MCP: &monv1.MCPConfig{Headers: []monv1.HTTPHeader{{Name: "Authorization", Value: ptr.To("Bearer t")}}},
	}
}

func TestExternalizeRedactInline(t *testing.T) {
	s := spec()
	if !HasInline(s) {
		t.Fatal("HasInline: want true")
	}
	data := Externalize(s, "api", nil)
	want := map[string]string{"http.authorization": "Basic abc", "step1.cookie": "s=1", "step1.cookie_": "s=2", "mcp.authorization": "Bearer t"}
	if len(data) != len(want) {
		t.Fatalf("data %v, want %v", data, want)
	}
	for k, v := range want {
		if string(data[k]) != v {
			t.Errorf("data[%s] = %q, want %q", k, data[k], v)
		}
	}
	if HasInline(s) {
		t.Fatal("values are left in the spec")
	}
	if r := s.HTTP.Headers[0].ValueFrom; r == nil || r.Name != "api-credentials" || r.Key != "http.authorization" {
		t.Fatalf("reference: %+v", r)
	}
	if r := s.HTTP.Headers[1].ValueFrom; r.Name != "tenant" {
		t.Fatal("a user's reference was changed")
	}

	// Redacted: own references and literals read [REDACTED], others stay.
	red := Redact(s, "api")
	if v := red.HTTP.Headers[0].Value; v == nil || *v != Redacted || red.HTTP.Headers[0].ValueFrom != nil {
		t.Fatalf("own reference shown as %+v", red.HTTP.Headers[0])
	}
	if red.HTTP.Headers[1].ValueFrom == nil || red.HTTP.Headers[1].Value != nil {
		t.Fatal("a user's reference is shown as it is")
	}
	if s.HTTP.Headers[0].ValueFrom == nil {
		t.Fatal("Redact changed its argument")
	}
	legacy := &monv1.MonitorSpec{HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{{Name: "A", Value: ptr.To("plain")}}}}
	if v := Redact(legacy, "x").HTTP.Headers[0].Value; *v != Redacted {
		t.Fatal("an inline value is redacted")
	}

	// Writing again keeps referenced values and drops unreferenced keys.
	old := map[string][]byte{"http.authorization": []byte("Basic abc"), "gone": []byte("x"), "step1.cookie": []byte("s=1"),
		"step1.cookie_": []byte("s=2"), "mcp.authorization": []byte("Bearer t")}
	s.HTTP.Headers[0].Value, s.HTTP.Headers[0].ValueFrom = ptr.To("Basic new"), nil
	data = Externalize(s, "api", old)
	if string(data["http.authorization"]) != "Basic new" || data["gone"] != nil || string(data["mcp.authorization"]) != "Bearer t" {
		t.Fatalf("second write: %v", data)
	}
	in := Inline(s, "api", data)
	if v := in.HTTP.Headers[0].Value; v == nil || *v != "Basic new" || in.MCP.Headers[0].Value == nil {
		t.Fatalf("Inline: %+v", in.HTTP.Headers[0])
	}
}

func TestSecretNameIsAlwaysValid(t *testing.T) {
	for _, name := range []string{"api", strings.Repeat("a", 253), strings.Repeat("a.b-", 60)} {
		got := SecretName(name)
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("SecretName(%d chars) = %q: %v", len(name), got, errs)
		}
	}
	if SecretName("api") != "api-credentials" {
		t.Fatal("short names get the suffix")
	}
}
