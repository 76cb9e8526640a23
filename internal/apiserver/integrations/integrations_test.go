package integrations

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
)

const (
	shopID  = "0d000000-0000-4000-8000-0000000000a1"
	webID   = "0d000000-0000-4000-8000-0000000000b1"
	opsID   = "0d000000-0000-4000-8000-0000000000c1"
	hookID  = "0d000000-0000-4000-8000-0000000000c2"
	unknown = "0d000000-0000-4000-8000-0000000000ff"
)

// tester records the channels it was asked to test and fails those named
// "broken", as a channel whose endpoint refuses would.
type tester struct{ tested []string }

func (t *tester) TestChannel(_ context.Context, ch *monv1.AlertChannel) error {
	t.tested = append(t.tested, ch.Name)
	if ch.Spec.Name == "broken" {
		return errors.New("the endpoint answered 410")
	}
	return nil
}

// mailer records test emails.
type mailer struct{ sent []string }

func (m *mailer) SendTestEmail(_ context.Context, to, monitorName string) error {
	m.sent = append(m.sent, to+" "+monitorName)
	return nil
}

// newFixture holds the monitor shop (alerting owner@example.com) in the
// group web, the email channel ops routed to every monitor, the webhook
// channel hook, the real recipient Confirmer over the fixture's store (no
// mailer), a channel tester and a test email sender.
func newFixture(t *testing.T) (*coretest.Fixture, *tester, *mailer) {
	t.Helper()
	objs := []client.Object{
		&monv1.MonitorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", UID: types.UID(webID)}, Spec: monv1.MonitorGroupSpec{Name: "Web"}},
		&monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "shop", UID: types.UID(shopID)},
			Spec: monv1.MonitorSpec{Name: "Shop", GroupRef: &monv1.LocalObjectReference{Name: "web"}, NotificationEmails: []string{"owner@example.com"}}},
		&monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "ops", UID: types.UID(opsID)},
			Spec: monv1.AlertChannelSpec{Type: monv1.ChannelEmail, Name: "Ops", Emails: []string{"ops@example.com"}}},
		&monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hook", UID: types.UID(hookID)},
			Spec: monv1.AlertChannelSpec{Type: monv1.ChannelWebhook, Name: "broken", WebhookURL: "https://hooks.example.com/x"}},
	}
	f := coretest.New(t, objs...)
	tc, m := &tester{}, &mailer{}
	rc := &recipients.Confirmer{Reader: f.K8s, Store: f.Store, Clock: f.Clock}
	New(f.Deps, f.Store, rc, tc, m, false).Routes(f.Router)
	return f, tc, m
}

func owner(ns string) *core.Caller {
	return &core.Caller{Namespace: ns, Level: apikeys.Automation, User: "alice", Owner: true}
}

func fields(body map[string]any) []string {
	var out []string
	for _, e := range body["errors"].([]any) {
		out = append(out, e.(map[string]any)["field"].(string))
	}
	return out
}

func channel(t *testing.T, f *coretest.Fixture, name string) *monv1.AlertChannel {
	t.Helper()
	var ch monv1.AlertChannel
	if err := f.K8s.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: name}, &ch); err != nil {
		t.Fatal(err)
	}
	return &ch
}

// TestConnections: channels are the Automation key's; secret fields go to
// the channel's own Secret, never its spec; bodies are checked per type.
func TestConnections(t *testing.T) {
	f, tc, _ := newFixture(t)
	slack := map[string]any{"name": "Chat", "webhook_url": "https://hooks.slack.example/T/B/secret"}
	if body := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/integrations/slack/connections", slack), 403, "standard key"); body["code"] != core.CodeAutomationRequired {
		t.Fatalf("standard key = %v", body)
	}
	coretest.Expect(t, f.Call("team", apikeys.Automation, "POST", "/integrations/carrier-pigeon/connections", slack), 404, "unknown type")
	bad := coretest.Expect(t, f.Call("team", apikeys.Automation, "POST", "/integrations/opsgenie/connections", map[string]any{"colour": "red"}), 400, "bad body")
	if got := strings.Join(fields(bad), " "); got != "colour" {
		t.Fatalf("bad body fields = %q", got)
	}
	missing := coretest.Expect(t, f.Call("team", apikeys.Automation, "POST", "/integrations/opsgenie/connections", map[string]any{"name": "O"}), 400, "missing fields")
	if got := strings.Join(fields(missing), " "); !strings.Contains(got, "api_key") || !strings.Contains(got, "region") {
		t.Fatalf("missing fields = %q", got)
	}
	// A webhook gets a signing secret, shown once and kept in its Secret.
	// (Its endpoint check reaches only loopback, which the guard refuses
	// to dial; admission, absent here, refuses private targets.)
	hook := coretest.Expect(t, f.Call("team", apikeys.Automation, "POST", "/integrations/webhook/connections",
		map[string]any{"webhook_url": "https://127.0.0.1:9/hook"}), 201, "webhook")
	if s, _ := hook["signing_secret"].(string); !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("webhook = %v", hook)
	}
	free := coretest.Expect(t, f.Call("free-ws", apikeys.Automation, "POST", "/integrations/sms/connections", map[string]any{"to": "+15550100"}), 403, "sms on free")
	if free["code"] != core.CodeFeatureNotAvailable {
		t.Fatalf("sms on free = %v", free)
	}

	created := coretest.Expect(t, f.Call("team", apikeys.Automation, "POST", "/integrations/slack/connections", slack), 201, "create")
	if created["integration_type"] != "slack" || created["name"] != "Chat" || created["signing_secret"] != nil {
		t.Fatalf("created = %v", created)
	}
	var list monv1.AlertChannelList
	if err := f.K8s.List(context.Background(), &list, client.InNamespace("team")); err != nil {
		t.Fatal(err)
	}
	var made *monv1.AlertChannel
	for i := range list.Items {
		if list.Items[i].Spec.Type == monv1.ChannelSlack {
			made = &list.Items[i]
		}
	}
	if made == nil || made.Spec.WebhookURL != "" || made.Spec.WebhookURLFrom == nil || made.Spec.WebhookURLFrom.Name != made.Name+"-credentials" {
		t.Fatalf("slack channel spec = %+v", made)
	}
	var sec corev1.Secret
	if err := f.K8s.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: made.Name + "-credentials"}, &sec); err != nil ||
		sec.StringData["webhook_url"]+string(sec.Data["webhook_url"]) != slack["webhook_url"] {
		t.Fatalf("credentials secret: %+v, %v", sec, err)
	}

	all := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/integrations", nil), 200, "list")
	if n := len(all["connections"].([]any)); n != 4 {
		t.Fatalf("connections = %d", n)
	}
	for _, ty := range all["types"].([]any) {
		if ty := ty.(map[string]any); ty["type"] == "slack" && ty["connections"] != float64(1) {
			t.Fatalf("slack type = %v", ty)
		}
	}

	upd := coretest.Expect(t, f.Call("team", apikeys.Automation, "PUT", "/integrations/connections/"+opsID,
		map[string]any{"emails": []string{"ops@example.com", "night@example.com"}, "routing": map[string]any{"scope": "groups", "group_ids": []string{webID}}}), 200, "update")
	if rt := upd["routing"].(map[string]any); rt["scope"] != "groups" || rt["group_ids"].([]any)[0] != webID {
		t.Fatalf("updated = %v", upd)
	}
	if got := channel(t, f, "ops"); len(got.Spec.Emails) != 2 || got.Spec.Routing.Groups[0].Name != "web" {
		t.Fatalf("stored ops = %+v", got.Spec)
	}
	badRouting := coretest.Expect(t, f.Call("team", apikeys.Automation, "PUT", "/integrations/connections/"+opsID+"/routing",
		map[string]any{"scope": "monitors", "monitor_ids": []string{unknown}, "min_severity": "meh"}), 400, "bad routing")
	if got := strings.Join(fields(badRouting), " "); !strings.Contains(got, "monitor_ids") || !strings.Contains(got, "min_severity") {
		t.Fatalf("bad routing fields = %q", got)
	}
	routed := coretest.Expect(t, f.Call("team", apikeys.Automation, "PUT", "/integrations/connections/"+opsID+"/routing",
		map[string]any{"scope": "monitors", "monitor_ids": []string{shopID}, "min_severity": "degraded"}), 200, "routing")
	if rt := routed["routing"].(map[string]any); rt["monitor_ids"].([]any)[0] != shopID || rt["min_severity"] != "degraded" {
		t.Fatalf("routing = %v", routed)
	}

	ok := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/integrations/connections/"+opsID+"/test", nil), 200, "test")
	failed := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/integrations/connections/"+hookID+"/test", nil), 200, "failing test")
	if ok["success"] != true || failed["success"] != false || !strings.Contains(failed["message"].(string), "410") || len(tc.tested) != 2 {
		t.Fatalf("tests = %v, %v, tested %v", ok, failed, tc.tested)
	}

	coretest.Expect(t, f.Call("team", apikeys.Automation, "POST", "/integrations/connections/"+hookID+"/rotate-secret", nil), 403, "rotate by key")
	coretest.Expect(t, f.CallAs(owner("team"), "POST", "/integrations/connections/"+opsID+"/rotate-secret", nil), 400, "rotate an email channel")
	rot := coretest.Expect(t, f.CallAs(owner("team"), "POST", "/integrations/connections/"+hookID+"/rotate-secret", nil), 200, "rotate")
	if s, _ := rot["signing_secret"].(string); s == "" || rot["connection_id"] != hookID {
		t.Fatalf("rotate = %v", rot)
	}
	if err := f.K8s.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: monv1.SigningSecretName("hook")}, &sec); err != nil {
		t.Fatalf("signing secret: %v", err)
	}

	coretest.Expect(t, f.Call("other", apikeys.Automation, "DELETE", "/integrations/connections/"+hookID, nil), 404, "another workspace")
	if rec := f.Call("team", apikeys.Automation, "DELETE", "/integrations/connections/"+hookID, nil); rec.Code != 204 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	coretest.Expect(t, f.Call("team", apikeys.Automation, "DELETE", "/integrations/connections/"+hookID, nil), 404, "deleted")
}

// TestRecipients: the owner adds and removes the workspace's own
// recipients (kept in the alert-recipients email channel); an address
// another resource names is removed there (409).
func TestRecipients(t *testing.T) {
	f, _, _ := newFixture(t)
	coretest.Expect(t, f.Call("team", apikeys.Automation, "POST", "/alert-recipients", map[string]any{"email": "new@example.com"}), 403, "API key")
	if body := coretest.Expect(t, f.CallAs(owner("team"), "POST", "/alert-recipients", map[string]any{"email": "not an address"}), 400, "bad address"); fields(body)[0] != "email" {
		t.Fatalf("bad address = %v", body)
	}
	added := coretest.Expect(t, f.CallAs(owner("team"), "POST", "/alert-recipients", map[string]any{"email": "new@example.com"}), 201, "add")
	if added["alert_channel"] != RecipientsChannel || added["confirmed"] != false || !strings.Contains(added["message"].(string), "not configured") {
		t.Fatalf("added = %v", added)
	}
	if ch := channel(t, f, RecipientsChannel); ch.Spec.Type != monv1.ChannelEmail || len(ch.Spec.Emails) != 1 || ch.Spec.Emails[0] != "new@example.com" {
		t.Fatalf("recipients channel = %+v", ch.Spec)
	}
	if body := coretest.Expect(t, f.CallAs(owner("team"), "POST", "/alert-recipients", map[string]any{"email": "NEW@example.com"}), 409, "again"); body["code"] != core.CodeConflict {
		t.Fatalf("again = %v", body)
	}

	list := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/alert-recipients", nil), 200, "list")
	emails := map[string]string{}
	for _, c := range list["contacts"].([]any) {
		c := c.(map[string]any)
		emails[c["email"].(string)] = c["status"].(string)
	}
	if len(emails) != 3 || emails["new@example.com"] != "unconfirmed" || emails["owner@example.com"] == "" || emails["ops@example.com"] == "" {
		t.Fatalf("recipients = %v", emails)
	}
	if body := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/alert-recipients/resend", map[string]any{"email": "new@example.com"}), 503, "no mailer"); body["code"] != core.CodeChannelUnavailable {
		t.Fatalf("resend without mailer = %v", body)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/alert-recipients/resend", map[string]any{"email": "stranger@example.com"}), 404, "resend to a stranger")

	if body := coretest.Expect(t, f.CallAs(owner("team"), "DELETE", "/alert-recipients/owner@example.com", nil), 409, "named by a monitor"); !strings.Contains(body["error"].(string), "monitor") {
		t.Fatalf("named by a monitor = %v", body)
	}
	if rec := f.CallAs(owner("team"), "DELETE", "/alert-recipients/new@example.com", nil); rec.Code != 204 {
		t.Fatalf("remove: %d %s", rec.Code, rec.Body)
	}
	var ch monv1.AlertChannel
	if err := f.K8s.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: RecipientsChannel}, &ch); err == nil {
		t.Fatalf("the emptied recipients channel is kept: %+v", ch.Spec)
	}
	coretest.Expect(t, f.CallAs(owner("team"), "DELETE", "/alert-recipients/new@example.com", nil), 404, "remove again")
}

// TestConfirmLink: the public link shows a button on GET and confirms on
// POST; an unknown token is 404 (JSON for a client that asks for it).
func TestConfirmLink(t *testing.T) {
	f, _, _ := newFixture(t)
	get := httptest.NewRequest("GET", recipients.ConfirmPath+"not-a-token", nil)
	rec := httptest.NewRecorder()
	f.Router.Mux.ServeHTTP(rec, get)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Confirm alert emails") {
		t.Fatalf("GET link: %d %s", rec.Code, rec.Body)
	}
	post := httptest.NewRequest("POST", recipients.ConfirmPath+"not-a-token", nil)
	post.Header.Set("Accept", "application/json")
	rec = httptest.NewRecorder()
	f.Router.Mux.ServeHTTP(rec, post)
	if err := coretest.CheckAnswer(post, rec); err != nil {
		t.Error(err)
	}
	if body := coretest.Expect(t, rec, 404, "unknown token"); body["code"] != core.CodeNotFound {
		t.Fatalf("unknown token = %v", body)
	}
}

// TestNotifications: a monitor's recipients (its own, its group's, the
// email channels routing it), the test email to one of them, and the
// workspace's notification settings.
func TestNotifications(t *testing.T) {
	f, _, m := newFixture(t)
	var list []map[string]any
	rec := f.Call("team", apikeys.ReadOnly, "GET", "/monitors/"+shopID+"/notification-recipients", nil)
	if rec.Code != 200 {
		t.Fatalf("recipients: %d %s", rec.Code, rec.Body)
	}
	body := coretest.Decode(t, rec)
	raw, _ := body["recipients"].([]any)
	for _, r := range raw {
		list = append(list, r.(map[string]any))
	}
	if len(list) != 2 || list[0]["email"] != "owner@example.com" || list[0]["source"] != "monitor" || list[1]["source"] != "alert_channel" {
		t.Fatalf("recipients = %v", body)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/monitors/"+shopID+"/test-notification", map[string]any{"email": "stranger@example.com"}), 400, "not a recipient")
	sent := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/monitors/"+shopID+"/test-notification", map[string]any{"email": "OPS@example.com"}), 200, "test email")
	if sent["email"] != "ops@example.com" || len(m.sent) != 1 || m.sent[0] != "ops@example.com Shop" {
		t.Fatalf("test email = %v, sent %v", sent, m.sent)
	}
	if sent := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/monitors/"+shopID+"/test-notification", nil), 200, "first recipient"); sent["email"] != "owner@example.com" {
		t.Fatalf("without a body = %v", sent)
	}
	coretest.Expect(t, f.Call("other", apikeys.Standard, "POST", "/monitors/"+shopID+"/test-notification", nil), 404, "another workspace")

	set := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/settings/notifications", nil), 200, "settings")
	if len(set["channels"].([]any)) != 2 || len(set["recipients"].([]any)) != 2 || set["test_emails_available"] != true ||
		set["notify_on"].(map[string]any)["degraded"] != false {
		t.Fatalf("settings = %v", set)
	}
	for _, p := range []string{"/settings/escalation-policies", "/settings/on-call-schedules", "/settings/suppression-windows"} {
		if rec := f.Call("team", apikeys.ReadOnly, "GET", p, nil); rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", p, rec.Code, rec.Body)
		}
	}
	if rec := f.Call("team", apikeys.ReadOnly, "GET", "/settings/notification-attempts", nil); rec.Code != http.StatusOK {
		t.Fatalf("attempts: %d %s", rec.Code, rec.Body)
	}
}
