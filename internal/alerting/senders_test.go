package alerting

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

func TestSign(t *testing.T) {
	// HMAC-SHA256("secret", "1700000000.{}"), computed with Python's hmac.
	const want = "sha256=b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163"
	got := Sign([]byte("secret"), "1700000000", []byte("{}"))
	if got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
	if Sign([]byte("secret"), "1700000001", []byte("{}")) == got {
		t.Error("the timestamp must be signed")
	}
	if Sign([]byte("secret"), "1700000000", []byte("{ }")) == got {
		t.Error("the raw body must be signed")
	}
}

func TestChannelSenders(t *testing.T) {
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusAccepted) })
	rc.secret = ""
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "creds", Labels: map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}},
		Data: map[string][]byte{"url": []byte(rc.URL + "/hooks/T0/B0/xyz\n"), "key": []byte("k-123"),
			"token": []byte("tok-456"), "bot": []byte("123:bot")},
	}
	sel := func(k string) *monv1.SecretKeySelector { return &monv1.SecretKeySelector{Name: "creds", Key: k} }
	mk := func(name string, t monv1.AlertChannelType, f func(*monv1.AlertChannelSpec)) *monv1.AlertChannel {
		ch := channel(name, t, nil)
		f(&ch.Spec)
		return ch
	}
	hook := func(s *monv1.AlertChannelSpec) { s.WebhookURLFrom = sel("url") }
	channels := []*monv1.AlertChannel{
		mk("slack", monv1.ChannelSlack, hook),
		mk("discord", monv1.ChannelDiscord, hook),
		mk("teams", monv1.ChannelTeams, hook),
		mk("gchat", monv1.ChannelGoogleChat, hook),
		mk("mm", monv1.ChannelMattermost, hook),
		mk("pd", monv1.ChannelPagerDuty, func(s *monv1.AlertChannelSpec) { s.IntegrationKeyFrom = sel("key") }),
		mk("og", monv1.ChannelOpsgenie, func(s *monv1.AlertChannelSpec) { s.APIKeyFrom = sel("key"); s.Region = "eu" }),
		mk("tg", monv1.ChannelTelegram, func(s *monv1.AlertChannelSpec) { s.ChatID = "-100"; s.BotTokenFrom = sel("bot") }),
		mk("gh", monv1.ChannelGitHub, func(s *monv1.AlertChannelSpec) { s.Repository = "acme/ops"; s.TokenFrom = sel("token") }),
		mk("sms", monv1.ChannelSMS, func(s *monv1.AlertChannelSpec) { s.To = "+4915112345678" }),
		mk("mail", monv1.ChannelEmail, func(s *monv1.AlertChannelSpec) { s.Emails = []string{"ops@example.com"} }),
	}
	h := newHarness(t, secret, channels[0], channels[1], channels[2], channels[3], channels[4], channels[5],
		channels[6], channels[7], channels[8], channels[9], channels[10])
	w := h.worker("a")
	w.Endpoints = Endpoints{PagerDuty: rc.URL + "/pd", OpsgenieEU: rc.URL + "/og-eu", OpsgenieUS: rc.URL + "/og-us",
		Telegram: rc.URL + "/tg", GitHub: rc.URL + "/gh", SMS: rc.URL + "/sms", Email: rc.URL + "/mail", ProviderToken: "relay"}

	type check func(t *testing.T, r *recorded, body map[string]any)
	text := func(field string) check {
		return func(t *testing.T, _ *recorded, b map[string]any) {
			if s, _ := b[field].(string); !strings.Contains(s, "API is DOWN") || !strings.Contains(s, "Reason: refused") {
				t.Errorf("%s = %q", field, s)
			}
		}
	}
	tests := []struct {
		channel string
		path    string
		check   check
	}{
		{"slack", "/hooks/T0/B0/xyz", text("text")},
		{"discord", "/hooks/T0/B0/xyz", text("content")},
		{"gchat", "/hooks/T0/B0/xyz", text("text")},
		{"mm", "/hooks/T0/B0/xyz", func(t *testing.T, r *recorded, b map[string]any) {
			text("text")(t, r, b)
			if !strings.HasPrefix(b["text"].(string), "**API is DOWN**") {
				t.Errorf("mattermost bold: %q", b["text"])
			}
		}},
		{"teams", "/hooks/T0/B0/xyz", func(t *testing.T, _ *recorded, b map[string]any) {
			if b["@type"] != "MessageCard" || b["title"] != "API is DOWN" {
				t.Errorf("card = %v", b)
			}
		}},
		{"pd", "/pd/v2/enqueue", func(t *testing.T, _ *recorded, b map[string]any) {
			if b["routing_key"] != "k-123" || b["event_action"] != "trigger" || b["dedup_key"] != "inc-9" ||
				b["payload"].(map[string]any)["summary"] != "API is DOWN" {
				t.Errorf("pagerduty = %v", b)
			}
		}},
		{"og", "/og-eu/v2/alerts", func(t *testing.T, r *recorded, b map[string]any) {
			if r.header.Get("Authorization") != "GenieKey k-123" || b["alias"] != "inc-9" || b["message"] != "API is DOWN" {
				t.Errorf("opsgenie = %v %v", r.header, b)
			}
		}},
		{"tg", "/tg/bot123:bot/sendMessage", func(t *testing.T, _ *recorded, b map[string]any) {
			if b["chat_id"] != "-100" {
				t.Errorf("telegram = %v", b)
			}
			text("text")(t, nil, b)
		}},
		{"gh", "/gh/repos/acme/ops/issues", func(t *testing.T, r *recorded, b map[string]any) {
			if r.header.Get("Authorization") != "Bearer tok-456" || b["title"] != "API is DOWN" {
				t.Errorf("github = %v %v", r.header, b)
			}
		}},
		{"sms", "/sms", func(t *testing.T, r *recorded, b map[string]any) {
			if r.header.Get("Authorization") != "Bearer relay" || b["to"] != "+4915112345678" || b["body"] != "API is DOWN: refused" {
				t.Errorf("sms = %v", b)
			}
		}},
		{"mail", "/mail", func(t *testing.T, _ *recorded, b map[string]any) {
			if b["subject"] != "API is DOWN" || b["to"].([]any)[0] != "ops@example.com" {
				t.Errorf("email = %v", b)
			}
		}},
	}
	p, _ := alertevent.NewIncidentPayload(alertevent.MonitorDown, alertevent.IncidentFacts{MonitorName: "API", IncidentID: "inc-9", Reason: "refused"})
	for _, tt := range tests {
		t.Run(tt.channel, func(t *testing.T) {
			ev, _ := newEvent("team", alertevent.MonitorDown, p, []string{"uid-" + tt.channel})
			if err := h.st.EnqueueEvents(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			before := rc.count()
			if _, err := w.ProcessDue(context.Background()); err != nil {
				t.Fatal(err)
			}
			ds, _ := h.st.ListDeliveries(context.Background(), store.DeliveryQuery{EventID: ev.ID})
			if len(ds) != 1 || ds[0].Status != store.DeliveryDelivered {
				t.Fatalf("delivery = %+v", ds)
			}
			if rc.count() != before+1 {
				t.Fatalf("requests = %d", rc.count()-before)
			}
			r := rc.reqs[len(rc.reqs)-1]
			if r.path != tt.path {
				t.Errorf("path = %s, want %s", r.path, tt.path)
			}
			var b map[string]any
			if err := json.Unmarshal(r.body, &b); err != nil {
				t.Fatalf("body %s: %v", r.body, err)
			}
			tt.check(t, r, b)
		})
	}

	t.Run("resolves close the incident", func(t *testing.T) {
		up, _ := alertevent.NewIncidentPayload(alertevent.MonitorUp, alertevent.IncidentFacts{MonitorName: "API", IncidentID: "inc-9"})
		ev, _ := newEvent("team", alertevent.MonitorUp, up, []string{"uid-pd", "uid-og"})
		_ = h.st.EnqueueEvents(context.Background(), ev)
		before := len(rc.reqs)
		if _, err := w.ProcessDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		paths := map[string]map[string]any{}
		for _, r := range rc.reqs[before:] {
			var b map[string]any
			_ = json.Unmarshal(r.body, &b)
			paths[r.path] = b
		}
		if b := paths["/pd/v2/enqueue"]; b == nil || b["event_action"] != "resolve" || b["dedup_key"] != "inc-9" {
			t.Errorf("pagerduty resolve = %v", paths)
		}
		if _, ok := paths["/og-eu/v2/alerts/inc-9/close?identifierType=alias"]; !ok {
			t.Errorf("opsgenie close missing: %v", paths)
		}
	})

	t.Run("unconfigured relay fails permanently", func(t *testing.T) {
		w2 := h.worker("b")
		voice := mk("voice", monv1.ChannelVoice, func(s *monv1.AlertChannelSpec) { s.To = "+4915112345678" })
		if err := h.k8s.Create(context.Background(), voice); err != nil {
			t.Fatal(err)
		}
		ev, _ := newEvent("team", alertevent.MonitorDown, p, []string{string(voice.UID)})
		_ = h.st.EnqueueEvents(context.Background(), ev)
		if _, err := w2.ProcessDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		ds, _ := h.st.ListDeliveries(context.Background(), store.DeliveryQuery{EventID: ev.ID})
		if len(ds) != 1 || ds[0].Status != store.DeliveryFailed || !strings.Contains(ds[0].LastError, "no voice provider") {
			t.Errorf("delivery = %+v", ds)
		}
	})
}
