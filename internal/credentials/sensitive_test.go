package credentials

import (
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// TestSensitiveHeader names the header values admission refuses inline and
// those it lets through.
func TestSensitiveHeader(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        bool
	}{
		{"Authorization", "Bearer prod-billing-token", true},
		{"authorization", "abc", true},
		{"Proxy-Authorization", "Basic dXNlcjpwdw==", true},
		{"Cookie", "session=1", true},
		{"X-Api-Key", "k", true},
		{"X-API_KEY", "k", true},
		{"X-Auth-Key", "k", true},
		{"X-Access-Key", "k", true},
		{"X-Session-Id", "s", true},
		{"X-Hub-Signature", "sha256=aa", true},
		{"Private-Token", "glpat", true},
		{"X-Custom", "Bearer abc", true},
		{"X-Custom", "token abc", true},
		{"Authorization", "Bearer {{token}}", false},
		{"X-Api-Key", "{{key}}", false},
		{"Authorization", "Bearer {{a}}{{b}}", false},
		{"Authorization", "Bearer {{a}}-fixed", true},
		{"Accept", "application/json", false},
		{"User-Agent", "uptime", false},
		{"X-Custom", "Bearer", false},
		{"X-Request-Id", "42", false},
	} {
		if got := SensitiveHeader(tc.name, tc.value); got != tc.want {
			t.Errorf("SensitiveHeader(%q, %q) = %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
}

// TestChannelURLIsSecret: every chat hook URL is a credential; a generic
// webhook's only when it carries one.
func TestChannelURLIsSecret(t *testing.T) {
	for _, tc := range []struct {
		typ  monv1.AlertChannelType
		url  string
		want bool
	}{
		{monv1.ChannelSlack, "https://hooks.slack.com/services/T0/B0/abc", true},
		{monv1.ChannelDiscord, "https://discord.com/api/webhooks/1/tok", true},
		{monv1.ChannelGoogleChat, "https://chat.googleapis.com/v1/spaces/x/messages", true},
		{monv1.ChannelWebhook, "https://hooks.example.com/x", false},
		{monv1.ChannelWebhook, "https://hooks.example.com/x?team=ops", false},
		{monv1.ChannelWebhook, "https://hooks.example.com/x?token=abc", true},
		{monv1.ChannelWebhook, "https://hooks.example.com/x?key=abc", true},
		{monv1.ChannelWebhook, "https://hooks.example.com/x?X-Amz-Signature=abc", true},
		{monv1.ChannelWebhook, "https://u:p@hooks.example.com/x", true},
	} {
		if got := ChannelURLIsSecret(tc.typ, tc.url); got != tc.want {
			t.Errorf("ChannelURLIsSecret(%s, %q) = %v, want %v", tc.typ, tc.url, got, tc.want)
		}
	}
}

// TestNewInlineCredentials: a credential written inline is listed with its
// path; one stored before and left as it was, a reference and a template
// are not.
func TestNewInlineCredentials(t *testing.T) {
	v := func(s string) *string { return &s }
	was := &monv1.MonitorSpec{HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{{Name: "Authorization", Value: v("Bearer old")}}}}
	spec := &monv1.MonitorSpec{
		HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{
			{Name: "Authorization", Value: v("Bearer old")},
			{Name: "Accept", Value: v("text/html")},
			{Name: "X-Api-Key", ValueFrom: &monv1.SecretKeySelector{Name: "s", Key: "k"}},
		}},
		Multistep: &monv1.MultistepConfig{Steps: []monv1.MultistepStep{
			{Name: "login", Headers: []monv1.HTTPHeader{{Name: "Cookie", Value: v("sid=1")}}},
			{Name: "use", Headers: []monv1.HTTPHeader{{Name: "Authorization", Value: v("Bearer {{token}}")}}},
		}},
	}
	got := NewInlineCredentials(spec, was)
	if len(got) != 1 || got[0].Path.String() != "spec.multistep.steps[0].headers[0]" || got[0].Name != "Cookie" {
		t.Fatalf("new inline credentials: %+v", got)
	}
	if got := NewInlineCredentials(spec, nil); len(got) != 2 {
		t.Fatalf("on create, the stored Authorization is new too: %+v", got)
	}
}

func TestBodyCredential(t *testing.T) {
	for _, c := range []struct {
		body, field string
	}{
		{`{"user":"ops","password":"hunter2"}`, "password"},
		{`{"auth": {"client_secret": "abc"}}`, "client_secret"},
		{`{"pin_token": 4711}`, "pin_token"},
		{`{"password":"x{{suffix}}"}`, "password"},
		{`user=ops&password=hunter2`, "password"},
		{`grant_type=client_credentials&client_secret=abc`, "client_secret"},
		{`<login><user>ops</user><password>hunter2</password></login>`, "password"},
		{`{"password":"{{pw}}","token_type":"bearer"}`, "token_type"},
		// none:
		{`{"password":"{{pw}}"}`, ""},
		{`{"password":""}`, ""},
		{`{"user":"ops","count":{{n}}}`, ""},
		{`user=ops&password={{pw}}`, ""},
		{`<password>{{pw}}</password>`, ""},
		{`plain text with a password word in it`, ""},
		{``, ""},
	} {
		field, ok := BodyCredential(c.body)
		if ok != (c.field != "") || field != c.field {
			t.Errorf("BodyCredential(%s) = %q, %v; want %q", c.body, field, ok, c.field)
		}
	}
}

func TestNewInlineSecretsAndBodies(t *testing.T) {
	v := func(s string) *string { return &s }
	step := func(body string, secrets ...monv1.HTTPHeader) monv1.MultistepStep {
		return monv1.MultistepStep{Name: "login", URL: "https://example.com/login", Body: body, Secrets: secrets}
	}
	spec := &monv1.MonitorSpec{Multistep: &monv1.MultistepConfig{Steps: []monv1.MultistepStep{
		// A literal secret is a credential whatever it is called.
		step(`{"user":"{{u}}"}`, monv1.HTTPHeader{Name: "u", Value: v("ops")}),
		step(`{"password":"{{pw}}"}`, monv1.HTTPHeader{Name: "pw", ValueFrom: &monv1.SecretKeySelector{Name: "s", Key: "pw"}}),
		step(`{"password":"hunter2"}`),
	}}}
	got := NewInlineCredentials(spec, nil)
	if len(got) != 1 || got[0].Path.String() != "spec.multistep.steps[0].secrets[0]" || !got[0].Secret {
		t.Fatalf("new inline credentials: %+v", got)
	}
	bodies := NewInlineBodies(spec, nil)
	if len(bodies) != 1 || bodies[0].Path.String() != "spec.multistep.steps[2].body" || bodies[0].Field != "password" {
		t.Fatalf("new inline bodies: %+v", bodies)
	}
	if got := NewInlineBodies(spec, spec.DeepCopy()); len(got) != 0 {
		t.Fatalf("a stored body left as it was is not new: %+v", got)
	}
	// Moved out by the REST API, a secret's key stays apart from the same
	// step's headers.
	spec.Multistep.Steps[0].Headers = []monv1.HTTPHeader{{Name: "u", Value: v("Bearer h")}}
	data := Externalize(spec, "login", nil)
	if string(data["step0.secret.u"]) != "ops" || string(data["step0.u"]) != "Bearer h" {
		t.Fatalf("externalized data: %q", data)
	}
	if ref := spec.Multistep.Steps[0].Secrets[0].ValueFrom; ref == nil || ref.Key != "step0.secret.u" {
		t.Fatalf("secret reference %+v", ref)
	}
}
