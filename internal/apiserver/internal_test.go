package apiserver

import (
	"testing"
	"time"
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

func TestStripCauseType(t *testing.T) {
	for in, want := range map[string]string{
		`Invalid value: 10: must be between 15 and 900`:                              "must be between 15 and 900",
		`Invalid value: "ftp://x": must be a valid http:// or https:// URL`:          "must be a valid http:// or https:// URL",
		`Forbidden: plan limit reached: 3 of 3 monitors (ENTITLEMENT_LIMIT_REACHED)`: "plan limit reached: 3 of 3 monitors (ENTITLEMENT_LIMIT_REACHED)",
		`Required value: required for http monitors`:                                 "required for http monitors",
		`Unsupported value: "mars-1": supported values: "eu-1", "us-1"`:              `supported values: "eu-1", "us-1"`,
		`plain message`: "plain message",
	} {
		if got := stripCauseType(in); got != want {
			t.Errorf("stripCauseType(%q) = %q, want %q", in, got, want)
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
		got, ok := parseCursor(in)
		if !ok || isoTime(got) != want {
			t.Errorf("parseCursor(%q) = %v %v, want %s", in, isoTime(got), ok, want)
		}
	}
	for _, bad := range []string{"", "2026-03-01", "2026-03-01T12:00:04.1234567Z", "2026-03-01T12:00:04+02:00", "yesterday"} {
		if _, ok := parseCursor(bad); ok {
			t.Errorf("parseCursor(%q) accepted", bad)
		}
	}
}

func TestLimiterFixedWindow(t *testing.T) {
	l := newLimiter("t", 3, time.Minute, perIP, false)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		d := l.take("a", t0.Add(time.Duration(i)*time.Second))
		if !d.allowed || d.remaining != 2-i {
			t.Fatalf("take %d = %+v", i, d)
		}
	}
	d := l.take("a", t0.Add(10*time.Second))
	if d.allowed || d.remaining != 0 || d.reset != 50*time.Second {
		t.Fatalf("fourth take = %+v, want refused with 50s reset", d)
	}
	if d := l.take("b", t0.Add(10*time.Second)); !d.allowed {
		t.Fatalf("other key refused: %+v", d)
	}
	if d := l.take("a", t0.Add(time.Minute)); !d.allowed || d.remaining != 2 {
		t.Fatalf("new window = %+v", d)
	}
}

func TestObjectNamePrefix(t *testing.T) {
	for in, want := range map[string]string{"Shop API": "shop-api-", "  ": "monitor-", "123 go": "monitor-123-go-", "Ünïcode!": "n-code-"} {
		if got := objectNamePrefix(in, "monitor"); got != want {
			t.Errorf("objectNamePrefix(%q) = %q, want %q", in, got, want)
		}
	}
}
