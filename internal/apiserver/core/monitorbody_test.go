package core

import "testing"

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
		if got := MonitorFieldPath(in); got != want {
			t.Errorf("MonitorFieldPath(%q) = %q, want %q", in, got, want)
		}
	}
}
