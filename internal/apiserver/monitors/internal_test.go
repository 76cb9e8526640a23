package monitors

import (
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
)

func TestMonitorFieldPath(t *testing.T) {
	for in, want := range map[string]string{
		"spec.intervalSeconds":             "interval_seconds",
		"spec.http.timeoutMs":              "config.timeout",
		"spec.ping.timeoutSeconds":         "config.timeout",
		"spec.http.degradedResponseTimeMs": "config.degraded_response_time_ms",
		"spec.cron.cronExpression":         "config.cron_expression",
		"spec.multistep.steps[1].url":      "config.steps[1].url",
		"spec.mcp.toolCall.argumentsJSON":  "config.tool_call.arguments",
		"spec.udp.payloadHex":              "config.payload_hex",
		"spec.groupRef.name":               "group_id",
		"spec.escalationPolicyRef.name":    "escalation_policy_id",
		"spec.regions[0]":                  "regions",
		"spec.tags[3]":                     "tags",
		"spec.notificationEmails[0]":       "config.notification_emails",
		"spec.port":                        "config",
		"spec":                             "",
	} {
		if got := monitorFieldPath(in); got != want {
			t.Errorf("monitorFieldPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseCursorKeepsMicroseconds(t *testing.T) {
	for in, want := range map[string]string{
		"2026-03-01T12:00:04.123457Z": "2026-03-01T12:00:04.123457Z",
		"2026-03-01T12:00:04.123457":  "2026-03-01T12:00:04.123457Z",
		"2026-03-01T12:00:04Z":        "2026-03-01T12:00:04.000000Z",
		"2026-03-01T12:00:04.5":       "2026-03-01T12:00:04.500000Z",
	} {
		got, ok := core.ParseCursor(in)
		if !ok || core.ISOTime(got) != want {
			t.Errorf("core.ParseCursor(%q) = %v %v, want %s", in, core.ISOTime(got), ok, want)
		}
	}
	for _, bad := range []string{"", "2026-03-01", "2026-03-01T12:00:04.1234567Z", "2026-03-01T12:00:04+02:00", "yesterday"} {
		if _, ok := core.ParseCursor(bad); ok {
			t.Errorf("core.ParseCursor(%q) accepted", bad)
		}
	}
}

func TestObjectNamePrefix(t *testing.T) {
	for in, want := range map[string]string{"Shop API": "shop-api-", "  ": "monitor-", "123 go": "monitor-123-go-", "Ünïcode!": "n-code-"} {
		if got := core.ObjectNamePrefix(in, "monitor"); got != want {
			t.Errorf("core.ObjectNamePrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlanFingerprint(t *testing.T) {
	a := &monv1.MonitorSpec{Name: "web", URL: "https://example.com", IntervalSeconds: 60, Key: "web"}
	b := a.DeepCopy()
	b.IntervalSeconds = 120
	diff := diffViews(managedView(a), managedView(b))
	if len(diff) != 1 || diff[0].Field != "interval_seconds" {
		t.Fatalf("diff = %+v", diff)
	}
	id := "uid-1"
	plan := func(d []fieldChange) []*planChange {
		return []*planChange{{Action: actionUpdate, Key: "web", MonitorID: &id, Diff: d}, {Action: actionNoop, Key: "db", MonitorID: &id}}
	}
	if fingerprint(plan(diff)) != fingerprint(plan(diffViews(managedView(a), managedView(b)))) {
		t.Error("the same plan must hash the same")
	}
	c := a.DeepCopy()
	c.IntervalSeconds = 300
	if fingerprint(plan(diff)) == fingerprint(plan(diffViews(managedView(a), managedView(c)))) {
		t.Error("a different target value must change the fingerprint")
	}
	if fingerprint(plan(nil)) == fingerprint([]*planChange{{Action: actionDelete, Key: "web", MonitorID: &id}}) {
		t.Error("a different action must change the fingerprint")
	}
	for k, ok := range map[string]bool{"web": true, "team/api:v1": true, "a.b_c-d": true, "-x": false, "": false, "has space": false, "x%2F": false} {
		if validKey(k) != ok {
			t.Errorf("validKey(%q) = %v", k, !ok)
		}
	}
}
