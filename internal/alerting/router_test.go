package alerting

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

func channel(name string, t monv1.AlertChannelType, routing *monv1.AlertRouting) *monv1.AlertChannel {
	return &monv1.AlertChannel{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: types.UID("uid-" + name)},
		Spec:       monv1.AlertChannelSpec{Type: t, Routing: routing},
	}
}

func refs(names ...string) []monv1.LocalObjectReference {
	var out []monv1.LocalObjectReference
	for _, n := range names {
		out = append(out, monv1.LocalObjectReference{Name: n})
	}
	return out
}

func monitor(name, group string) *monv1.Monitor {
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: types.UID("m-" + name)}}
	m.Spec.URL = "https://" + name + ".example.com"
	if group != "" {
		m.Spec.GroupRef = &monv1.LocalObjectReference{Name: group}
	}
	return m
}

func fakeClient(objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(objs...).
		WithStatusSubresource(&monv1.AlertChannel{}).WithIndex(&monv1.Monitor{}, EscalatingIndex, escalating).Build()
}

// testScheme is built here: importing the manager package would cycle once
// it wires the worker.
func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = monv1.AddToScheme(s)
	return s
}

func TestCovers(t *testing.T) {
	api, web := monitor("api", "backend"), monitor("web", "")
	tests := []struct {
		name    string
		routing *monv1.AlertRouting
		m       *monv1.Monitor
		sev     monv1.Severity
		want    bool
	}{
		{"nil routing, down", nil, api, SeverityDown, true},
		{"nil routing, degraded", nil, api, SeverityDegraded, false},
		{"all", &monv1.AlertRouting{Scope: "all"}, web, SeverityDown, true},
		{"empty scope is all", &monv1.AlertRouting{}, web, SeverityDown, true},
		{"group member", &monv1.AlertRouting{Scope: "groups", Groups: refs("backend")}, api, SeverityDown, true},
		{"other group", &monv1.AlertRouting{Scope: "groups", Groups: refs("frontend")}, api, SeverityDown, false},
		{"no group", &monv1.AlertRouting{Scope: "groups", Groups: refs("backend")}, web, SeverityDown, false},
		{"listed monitor", &monv1.AlertRouting{Scope: "monitors", Monitors: refs("web", "x")}, web, SeverityDown, true},
		{"unlisted monitor", &monv1.AlertRouting{Scope: "monitors", Monitors: refs("x")}, api, SeverityDown, false},
		{"min down skips degraded", &monv1.AlertRouting{MinSeverity: "down"}, api, SeverityDegraded, false},
		{"min degraded takes degraded", &monv1.AlertRouting{MinSeverity: "degraded"}, api, SeverityDegraded, true},
		{"min degraded takes down", &monv1.AlertRouting{MinSeverity: "degraded"}, api, SeverityDown, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Covers(tt.routing, tt.m, tt.sev); got != tt.want {
				t.Errorf("Covers = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAccepts(t *testing.T) {
	all := []string{alertevent.MonitorDown, alertevent.MonitorUp, alertevent.IncidentResolved, alertevent.Test, alertevent.SSLExpiring, alertevent.DomainExpiring,
		alertevent.MaintenanceStarted, alertevent.MaintenanceEnded, alertevent.SiteHealthIssues, alertevent.ThirdPartyIncident,
		alertevent.ThirdPartyResolved, alertevent.ThirdPartyMaintenance, alertevent.LastMileUnreachable, alertevent.LastMileRecovered}
	incident := all[:4]
	routedNotices := all[4:8]
	for _, tt := range []struct {
		t    monv1.AlertChannelType
		want []string
	}{
		{monv1.ChannelWebhook, all},
		{monv1.ChannelZapier, incident},
		{monv1.ChannelPagerDuty, incident},
		{monv1.ChannelSMS, incident},
		{monv1.ChannelGitHub, incident},
		{monv1.ChannelSlack, append(slices.Clone(incident), routedNotices...)},
		{monv1.ChannelEmail, append(slices.Clone(incident), routedNotices...)},
	} {
		for _, kind := range all {
			if got, want := Accepts(tt.t, kind), slices.Contains(tt.want, kind); got != want {
				t.Errorf("Accepts(%s, %s) = %v, want %v", tt.t, kind, got, want)
			}
		}
	}
}

func TestRouterIncidentEvent(t *testing.T) {
	disabled := channel("off", monv1.ChannelWebhook, nil)
	disabled.Spec.Disabled = true
	other := channel("elsewhere", monv1.ChannelWebhook, nil)
	other.Namespace = "other"
	c := fakeClient(
		channel("all", monv1.ChannelWebhook, &monv1.AlertRouting{Scope: "all", MinSeverity: "down"}),
		channel("backend", monv1.ChannelSlack, &monv1.AlertRouting{Scope: "groups", Groups: refs("backend")}),
		channel("web-only", monv1.ChannelEmail, &monv1.AlertRouting{Scope: "monitors", Monitors: refs("web")}),
		channel("degraded", monv1.ChannelWebhook, &monv1.AlertRouting{MinSeverity: "degraded"}),
		channel("zap", monv1.ChannelZapier, nil),
		channel("gh", monv1.ChannelGitHub, nil),
		disabled, other,
	)
	start := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	r := &Router{Reader: c, BaseURL: "https://uptime.example.com/", Now: func() time.Time { return start.Add(time.Minute) }}
	ctx := context.Background()
	inc := store.Incident{ID: "inc-1", StartedAt: start, Cause: "timeout", ConfirmingRegions: []string{"eu-1"}}

	for _, tt := range []struct {
		name string
		kind string
		m    *monv1.Monitor
		sev  monv1.Severity
		want []string
	}{
		{"down of a backend monitor", alertevent.MonitorDown, monitor("api", "backend"), "", []string{"uid-all", "uid-backend", "uid-degraded", "uid-gh", "uid-zap"}},
		{"down of web", alertevent.MonitorDown, monitor("web", ""), "", []string{"uid-all", "uid-degraded", "uid-gh", "uid-web-only", "uid-zap"}},
		{"up of web (the code host closes its issue)", alertevent.MonitorUp, monitor("web", ""), "", []string{"uid-all", "uid-degraded", "uid-gh", "uid-web-only", "uid-zap"}},
		{"degraded", alertevent.MonitorDown, monitor("web", ""), SeverityDegraded, []string{"uid-degraded"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := r.IncidentEvent(ctx, tt.kind, tt.m, inc, EventOptions{Severity: tt.sev})
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(slices.Values(ev.Channels))
			if !slices.Equal(got, tt.want) {
				t.Errorf("channels = %v, want %v", got, tt.want)
			}
			if ev.Kind != tt.kind || ev.Namespace != "team" || ev.ID == "" {
				t.Errorf("unexpected event %+v", ev)
			}
		})
	}

	ev, _ := r.IncidentEvent(ctx, alertevent.MonitorDown, monitor("api", ""), inc, EventOptions{})
	var p map[string]any
	_ = json.Unmarshal(ev.Payload, &p)
	if p["incident_url"] != "https://uptime.example.com/incidents/inc-1" || p["reason"] != "timeout" || p["region"] != "eu-1" ||
		p["monitor_url"] != "https://api.example.com" || p["title"] != "api is DOWN" {
		t.Errorf("unexpected payload %v", p)
	}
	ev, _ = r.IncidentEvent(ctx, alertevent.IncidentResolved, monitor("api", ""), inc, EventOptions{})
	_ = json.Unmarshal(ev.Payload, &p)
	if p["duration_seconds"] != float64(60) || p["resolution"] != "manual" || p["reason"] != nil {
		t.Errorf("unexpected payload %v", p)
	}
	if _, err := r.IncidentEvent(ctx, alertevent.MonitorDown, monitor("api", ""), store.Incident{}, EventOptions{}); err == nil {
		t.Error("an incident without id must be refused")
	}

	t.Run("monitor and group recipients are emailed once", func(t *testing.T) {
		group := &monv1.MonitorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "backend"},
			Spec: monv1.MonitorGroupSpec{NotificationEmails: []string{"team@example.com", "Own@example.com"}}}
		mail := channel("mail", monv1.ChannelEmail, nil)
		mail.Spec.Emails = []string{"covered@example.com"}
		r := &Router{Reader: fakeClient(group, mail)}
		m := monitor("api", "backend")
		m.Spec.NotificationEmails = []string{"own@example.com", "COVERED@example.com"}
		ev, err := r.IncidentEvent(ctx, alertevent.MonitorDown, m, inc, EventOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"uid-mail", EmailTargetPrefix + "own@example.com", EmailTargetPrefix + "team@example.com"}
		if !slices.Equal(ev.Channels, want) {
			t.Errorf("targets = %v, want %v", ev.Channels, want)
		}
		if ev, _ := r.IncidentEvent(ctx, alertevent.MonitorDown, m, inc, EventOptions{Severity: SeverityDegraded}); len(ev.Channels) != 0 {
			t.Errorf("degraded targets = %v; recipients get down events only", ev.Channels)
		}
	})

	t.Run("escalation ignores routing", func(t *testing.T) {
		ev, err := r.EscalationEvent(ctx, monitor("web", ""), inc, 2, refs("degraded", "backend"))
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(slices.Values(ev.Channels))
		// degraded is a webhook, so every enabled webhook connection gets it;
		// backend is named (routing ignored).
		if want := []string{"uid-all", "uid-backend", "uid-degraded"}; !slices.Equal(got, want) {
			t.Errorf("channels = %v, want %v", got, want)
		}
		_ = json.Unmarshal(ev.Payload, &p)
		if p["reason"] != "Escalation step 2: still down" || p["event"] != "monitor.down" || p["incident_id"] != "inc-1" {
			t.Errorf("unexpected payload %v", p)
		}
	})

	t.Run("notices", func(t *testing.T) {
		lm := alertevent.NewLastMilePayload(true, "m", "web", "n", "u", nil)
		ev, err := r.NoticeEvent(ctx, "team", alertevent.LastMileUnreachable, lm, []*monv1.Monitor{monitor("web", "")})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := slices.Sorted(slices.Values(ev.Channels)), []string{"uid-all", "uid-degraded"}; !slices.Equal(got, want) {
			t.Errorf("last mile channels = %v, want %v", got, want)
		}
		ex := alertevent.NewExpiryPayload(alertevent.ExpiryFacts{Kind: "ssl"}, start)
		ev, _ = r.NoticeEvent(ctx, "team", alertevent.SSLExpiring, ex, []*monv1.Monitor{monitor("api", "backend")})
		if got, want := slices.Sorted(slices.Values(ev.Channels)), []string{"uid-all", "uid-backend", "uid-degraded"}; !slices.Equal(got, want) {
			t.Errorf("expiry channels = %v, want %v", got, want)
		}
		mw := alertevent.NewMaintenancePayload(true, alertevent.MaintenanceFacts{Scope: "all"})
		ev, _ = r.NoticeEvent(ctx, "team", alertevent.MaintenanceStarted, mw, nil)
		if got, want := slices.Sorted(slices.Values(ev.Channels)), []string{"uid-all", "uid-backend", "uid-degraded", "uid-web-only"}; !slices.Equal(got, want) {
			t.Errorf("maintenance channels = %v, want %v", got, want)
		}
	})
}
