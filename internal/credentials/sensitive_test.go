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
