package credentials

import (
	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

func TestSameOrigin(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"https://api.example.com/a", "https://api.example.com/b?x=1", true},
		{"https://API.example.com/", "https://api.example.com:443/", true},
		{"http://api.example.com/", "http://api.example.com:80/x", true},
		{"https://api.example.com/", "http://api.example.com/", false},
		{"https://api.example.com/", "https://api.example.com:8443/", false},
		{"https://api.example.com/", "https://collector.example.net/", false},
		{"https://user:pw@api.example.com/", "https://api.example.com/", true},
		{"https://[::1]:8080/", "https://[::1]:8080/x", true},
		{"{{base}}/login", "{{base}}/login", true},
		{"{{base}}/login", "{{other}}/login", false},
		{"", "", true},
	} {
		if got := SameOrigin(c.a, c.b); got != c.same {
			t.Errorf("SameOrigin(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

func TestScrub(t *testing.T) {
	a := &probeapi.Assignment{Type: "http", Config: monv1.MonitorSpec{HTTP: &monv1.HTTPConfig{Headers: probeapi.TextHeaders(map[string]string{
		"Authorization": "Bearer prod-billing-token", "Accept": "*/*", "X-Env": "prod"})}}}
	values := Values(a)
	for _, c := range []struct{ in, want string }{
		{"got Bearer prod-billing-token", "got [REDACTED]"},
		{"token prod-billing-token echoed", "token [REDACTED] echoed"},
		{"cut short: xxxx Bearer prod-bil…", "cut short: xxxx [REDACTED]…"},
		{"cut short: prod-billing-to", "cut short: [REDACTED]"},
		{"status prod, accept */*", "status prod, accept */*"},
	} {
		if got := scrub(c.in, values); got != c.want {
			t.Errorf("scrub(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	res := probeapi.Result{ErrorMessage: "assertion 1: got \"Bearer prod-billing-token\"",
		Details: []byte(`{"assertions":[{"actual":"Bearer prod-billing-token","n":1.50}]}`)}
	ScrubResult(&res, values)
	if res.ErrorMessage != `assertion 1: got "[REDACTED]"` || string(res.Details) != `{"assertions":[{"actual":"[REDACTED]","n":1.50}]}` {
		t.Fatalf("ScrubResult: %q %s", res.ErrorMessage, res.Details)
	}
}
