package alertevent

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func jsonMap(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestIncidentPayloads(t *testing.T) {
	start := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	facts := IncidentFacts{
		MonitorName: "API", MonitorURL: "https://api.example.com", IncidentID: "inc-1", StartedAt: start,
		ResolvedAt: start.Add(90 * time.Second), Region: "eu-1", Reason: "connection refused",
		Explanation: "your server refused connections", IncidentURL: "https://dash/incidents/inc-1",
	}
	tests := []struct {
		event string
		want  map[string]any
	}{
		{MonitorDown, map[string]any{
			"event": "monitor.down", "title": "API is DOWN", "monitor_name": "API", "monitor_url": "https://api.example.com",
			"incident_id": "inc-1", "region": "eu-1", "started_at": "2025-03-01T10:00:00Z", "duration_seconds": nil,
			"resolution": nil, "reason": "connection refused", "incident_url": "https://dash/incidents/inc-1",
			"explanation": "your server refused connections",
		}},
		{MonitorUp, map[string]any{
			"event": "monitor.up", "title": "API has RECOVERED", "monitor_name": "API", "monitor_url": "https://api.example.com",
			"incident_id": "inc-1", "region": nil, "started_at": "2025-03-01T10:00:00Z", "duration_seconds": float64(90),
			"resolution": "recovered", "reason": nil, "incident_url": "https://dash/incidents/inc-1", "explanation": nil,
		}},
		{IncidentResolved, map[string]any{
			"event": "incident.resolved", "title": "API: incident resolved manually", "monitor_name": "API",
			"monitor_url": "https://api.example.com", "incident_id": "inc-1", "region": nil,
			"started_at": "2025-03-01T10:00:00Z", "duration_seconds": float64(90), "resolution": "manual", "reason": nil,
			"incident_url": "https://dash/incidents/inc-1", "explanation": nil,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			p, err := NewIncidentPayload(tt.event, facts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, jsonMap(t, p)); diff != "" {
				t.Errorf("payload (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := NewIncidentPayload("nope", facts); err == nil {
		t.Error("an unknown event must be refused")
	}
}

func TestDownPayloadNullsWhenUnknown(t *testing.T) {
	p, _ := NewIncidentPayload(MonitorDown, IncidentFacts{MonitorName: "x", IncidentID: "i"})
	m := jsonMap(t, p)
	for _, k := range []string{"region", "started_at", "duration_seconds", "resolution", "reason", "incident_url", "explanation"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
}

func TestTestPayload(t *testing.T) {
	m := jsonMap(t, NewTestPayload(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)))
	if m["event"] != "test" || m["title"] != "Test Monitor is DOWN" || m["monitor_name"] != "Test Monitor" || m["reason"] != testReason {
		t.Errorf("unexpected test payload %v", m)
	}
	for _, k := range []string{"region", "duration_seconds", "resolution", "incident_url", "explanation"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("%s = %v, want null", k, v)
		}
	}
	if m["incident_id"] == "" {
		t.Error("test event needs an incident id")
	}
}

func TestEscalationPayload(t *testing.T) {
	start := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	m := jsonMap(t, NewEscalationPayload(2, IncidentFacts{MonitorName: "API", IncidentID: "inc-1", StartedAt: start}))
	if m["event"] != "monitor.down" || m["reason"] != "Escalation step 2: still down" ||
		m["incident_id"] != "inc-1" || m["started_at"] != "2025-03-01T10:00:00Z" || m["title"] != "API is DOWN" {
		t.Errorf("unexpected escalation payload %v", m)
	}
}

func TestNoticePayloads(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	t.Run("maintenance", func(t *testing.T) {
		m := jsonMap(t, NewMaintenancePayload(true, MaintenanceFacts{ID: "mw", Title: "DB upgrade", Scope: "groups",
			StartsAt: now, EndsAt: now.Add(time.Hour), GroupIDs: []string{"g"}, URL: "u"}))
		want := map[string]any{"event": "maintenance.started", "title": "Maintenance started: DB upgrade", "url": "u",
			"maintenance_id": "mw", "maintenance_title": "DB upgrade", "description": "", "starts_at": "2025-03-01T12:00:00Z",
			"ends_at": "2025-03-01T13:00:00Z", "impact": "medium", "scope": "group", "monitor_ids": []any{}, "group_ids": []any{"g"}}
		if diff := cmp.Diff(want, m); diff != "" {
			t.Error(diff)
		}
		ended := NewMaintenancePayload(false, MaintenanceFacts{Title: "DB upgrade", Scope: "all"})
		if ended.Title != "Maintenance completed: DB upgrade" || ended.Event != MaintenanceEnded || ended.Scope != "global" {
			t.Errorf("unexpected %+v", ended)
		}
	})
	t.Run("last mile", func(t *testing.T) {
		p := NewLastMilePayload(true, "m1", "Shop", "n1", "u", []LastMileAffected{{ISP: "as3320", Name: "Telekom", VantagePoints: 3, Failures: 9}})
		if p.Title != "Unreachable for Telekom users: Shop" || p.Event != LastMileUnreachable || p.ISPs[0] != "Telekom" {
			t.Errorf("unexpected %+v", p)
		}
		r := NewLastMilePayload(false, "m1", "Shop", "n1", "u", []LastMileAffected{{Name: "A"}, {Name: "B"}})
		if r.Title != "Reachable again for A and B users: Shop" || r.Event != LastMileRecovered || r.NoticeID != "n1" {
			t.Errorf("unexpected %+v", r)
		}
		if m := jsonMap(t, r); m["affected"].([]any)[0].(map[string]any)["error_classes"] == nil {
			t.Error("error_classes must be an array")
		}
	})
	t.Run("expiry", func(t *testing.T) {
		p := NewExpiryPayload(ExpiryFacts{Kind: "ssl", MonitorName: "Shop", ExpiresAt: now.Add(7*24*time.Hour + time.Hour), Stage: "pre_7d", URL: "u"}, now)
		if p.Event != SSLExpiring || p.DaysRemaining != 7 || p.Kind != "ssl" || p.ExpiresAt != "2025-03-08T13:00:00Z" || p.URL != "u" {
			t.Errorf("unexpected %+v", p)
		}
		d := NewExpiryPayload(ExpiryFacts{Kind: "domain", ExpiresAt: now.Add(-time.Hour), Stage: "post_1d"}, now)
		if d.Event != DomainExpiring || d.DaysRemaining != -1 {
			t.Errorf("unexpected %+v", d)
		}
	})
	t.Run("third party and site health", func(t *testing.T) {
		if p := NewThirdPartyPayload(ThirdPartyPayload{Kind: "incident_resolved"}); p.Event != ThirdPartyResolved {
			t.Errorf("got %s", p.Event)
		}
		if p := NewThirdPartyPayload(ThirdPartyPayload{Kind: "maintenance_started"}); p.Event != ThirdPartyMaintenance {
			t.Errorf("got %s", p.Event)
		}
		errs := make([]SiteHealthError, 60)
		if p := NewSiteHealthPayload(SiteHealthPayload{NewErrors: errs}); len(p.NewErrors) != 50 || p.Event != SiteHealthIssues {
			t.Errorf("got %d errors", len(p.NewErrors))
		}
	})
}

func TestDaysRemaining(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   time.Duration
		want int
	}{
		{15 * 24 * time.Hour, 15}, {23 * time.Hour, 0}, {0, 0}, {-time.Minute, -1}, {-24 * time.Hour, -1},
		{-25 * time.Hour, -2}, {36 * time.Hour, 1},
	} {
		if got := DaysRemaining(now.Add(tt.in), now); got != tt.want {
			t.Errorf("DaysRemaining(%s) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
