package recipients

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// inbox records the emails a Confirmer sends.
type inbox struct {
	mu   sync.Mutex
	mail []sent
	fail error
}

type sent struct{ to, subject, text string }

func (b *inbox) Send(_ context.Context, to, subject, text string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return b.fail
	}
	b.mail = append(b.mail, sent{to, subject, text})
	return nil
}

func (b *inbox) to() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.mail {
		out = append(out, m.to)
	}
	return out
}

var linkRE = regexp.MustCompile(`https://uptime\.example\.com/recipients/confirm/([A-Za-z0-9_-]+)`)

// lastToken is the token of the last email sent to addr.
func (b *inbox) lastToken(t *testing.T, addr string) string {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.mail) - 1; i >= 0; i-- {
		if b.mail[i].to == addr {
			m := linkRE.FindStringSubmatch(b.mail[i].text)
			if m == nil {
				t.Fatalf("no confirmation link in %q", b.mail[i].text)
			}
			return m[1]
		}
	}
	t.Fatalf("nothing was sent to %s", addr)
	return ""
}

func newConfirmer(t *testing.T, objs ...client.Object) (*Confirmer, *inbox, *clocktesting.FakeClock) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := monv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	box := &inbox{}
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	c := &Confirmer{
		Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(),
		Store:  st, Mailer: box, BaseURL: "https://uptime.example.com/", Clock: clk,
	}
	return c, box, clk
}

// deliver runs the alerting worker over the confirmer's outbox until
// nothing is due: the path confirmations take in the manager. Failed
// attempts are retried after wait.
func deliver(t *testing.T, c *Confirmer, wait time.Duration) {
	t.Helper()
	w := &alerting.Worker{Store: c.Store.(store.Store), Targets: map[string]alerting.Target{OutboxPrefix: c},
		Backoff: func(int) time.Duration { return wait }}
	for range 20 {
		n, err := w.ProcessDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("deliveries kept coming")
}

func workspace() []client.Object {
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	return []client.Object{
		&monv1.Monitor{ObjectMeta: meta("team", "api"), Spec: monv1.MonitorSpec{Name: "api", NotificationEmails: []string{"Ops@Example.com"}}},
		&monv1.MonitorGroup{ObjectMeta: meta("team", "web"), Spec: monv1.MonitorGroupSpec{Name: "web", NotificationEmails: []string{"ops@example.com", "web@example.com"}}},
		&monv1.AlertChannel{ObjectMeta: meta("team", "mail"), Spec: monv1.AlertChannelSpec{Type: monv1.ChannelEmail, Emails: []string{"oncall@example.com"}}},
		&monv1.AlertChannel{ObjectMeta: meta("team", "hook"), Spec: monv1.AlertChannelSpec{Type: monv1.ChannelWebhook}},
		&monv1.EscalationPolicy{ObjectMeta: meta("team", "esc"), Spec: monv1.EscalationPolicySpec{
			Steps: []monv1.EscalationStep{{Emails: []string{"boss@example.com"}}}}},
		&monv1.OnCallSchedule{ObjectMeta: meta("team", "rota"), Spec: monv1.OnCallScheduleSpec{
			Participants: []monv1.OnCallParticipant{{Name: "Ann", Email: "ann@example.com"}}}},
		&monv1.Monitor{ObjectMeta: meta("other", "api"), Spec: monv1.MonitorSpec{Name: "api", NotificationEmails: []string{"ops@example.com"}}},
	}
}

func TestListNamesEachAddressOncePerNamespace(t *testing.T) {
	c, _, _ := newConfirmer(t, workspace()...)
	got, err := List(context.Background(), c.Reader, "team")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range got {
		lines = append(lines, r.Email+" "+strings.Join(r.Sources, ","))
	}
	want := []string{
		"Ops@Example.com monitor,group", "web@example.com group", "oncall@example.com alert_channel",
		"boss@example.com escalation_policy", "ann@example.com on_call_schedule",
	}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("recipients:\n got %q\nwant %q", lines, want)
	}
	all, err := List(context.Background(), c.Reader, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6 {
		t.Fatalf("every namespace: got %d recipients, want 6", len(all))
	}
}

func TestAskNewConfirmAndAllowed(t *testing.T) {
	ctx := context.Background()
	c, box, clk := newConfirmer(t, workspace()...)
	c.Required = true

	n, err := c.AskNew(ctx)
	if err != nil || n != 6 {
		t.Fatalf("first pass: sent %d (%v), want 6", n, err)
	}
	if n, err := c.AskNew(ctx); err != nil || n != 0 {
		t.Fatalf("second pass: sent %d (%v), want nothing", n, err)
	}
	if len(box.to()) != 0 {
		t.Fatal("confirmations are sent by the delivery worker, not by AskNew")
	}
	deliver(t, c, time.Minute)
	if len(box.to()) != 6 {
		t.Fatalf("delivered %v, want 6 confirmations", box.to())
	}
	var text string
	for _, m := range box.mail {
		if strings.Contains(m.text, `workspace "team"`) && m.to == "ops@example.com" {
			text = m.text
		}
	}
	if !strings.Contains(text, `workspace "team" (monitor, group)`) || !strings.Contains(text, "held back") {
		t.Fatalf("confirmation text: %q", text)
	}

	allowed, held, err := c.Allowed(ctx, "team", []string{"OPS@example.com", "web@example.com"})
	if err != nil || len(allowed) != 0 || len(held) != 2 {
		t.Fatalf("before confirming: allowed %v held %v (%v)", allowed, held, err)
	}
	rec, err := c.Confirm(ctx, box.lastToken(t, "ops@example.com"))
	if err != nil || rec.Namespace != "team" || rec.Email != "ops@example.com" {
		t.Fatalf("confirm: %+v %v", rec, err)
	}
	allowed, held, err = c.Allowed(ctx, "team", []string{"OPS@example.com", "web@example.com"})
	if err != nil || strings.Join(allowed, ",") != "OPS@example.com" || strings.Join(held, ",") != "web@example.com" {
		t.Fatalf("after confirming: allowed %v held %v (%v)", allowed, held, err)
	}
	// Confirming in one workspace does not confirm the address in another.
	if allowed, _, _ := c.Allowed(ctx, "other", []string{"ops@example.com"}); len(allowed) != 0 {
		t.Fatal("a confirmation leaked into another workspace")
	}
	if _, err := c.Confirm(ctx, box.lastToken(t, "ops@example.com")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("reusing a link: got %v, want ErrNotFound", err)
	}

	states, err := c.States(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, s := range states {
		status[s.Email] = s.Status()
	}
	if status["Ops@Example.com"] != "confirmed" || status["web@example.com"] != "pending" {
		t.Fatalf("states: %v", status)
	}

	// Links expire.
	clk.Step(DefaultTokenTTL + time.Minute)
	if _, err := c.Confirm(ctx, box.lastToken(t, "web@example.com")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired link: got %v, want ErrNotFound", err)
	}

	c.Required = false
	if allowed, held, _ := c.Allowed(ctx, "team", []string{"web@example.com"}); len(allowed) != 1 || len(held) != 0 {
		t.Fatal("without Required every address is allowed")
	}
}

func TestResend(t *testing.T) {
	ctx := context.Background()
	c, box, clk := newConfirmer(t, workspace()...)

	st, sentNow, err := c.Resend(ctx, "team", "WEB@example.com")
	if err != nil || !sentNow || st.Status() != "pending" || st.Record.ConfirmationsSent != 1 {
		t.Fatalf("first resend: %+v sent=%v %v", st, sentNow, err)
	}
	deliver(t, c, time.Minute)
	first := box.lastToken(t, "web@example.com")
	var tooSoon *TooSoonError
	if _, _, err := c.Resend(ctx, "team", "web@example.com"); !errors.As(err, &tooSoon) || tooSoon.RetryAfter != time.Minute {
		t.Fatalf("immediate resend: got %v, want TooSoonError of 1m", err)
	}
	clk.Step(time.Minute)
	if _, sentNow, err := c.Resend(ctx, "team", "web@example.com"); err != nil || !sentNow {
		t.Fatalf("resend after a minute: sent=%v %v", sentNow, err)
	}
	deliver(t, c, time.Minute)
	if _, err := c.Confirm(ctx, first); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a replaced link: got %v, want ErrNotFound", err)
	}
	if _, err := c.Confirm(ctx, box.lastToken(t, "web@example.com")); err != nil {
		t.Fatalf("the new link: %v", err)
	}
	clk.Step(time.Minute)
	if st, sentNow, err := c.Resend(ctx, "team", "web@example.com"); err != nil || sentNow || st.Status() != "confirmed" {
		t.Fatalf("resend to a confirmed address: %+v sent=%v %v", st, sentNow, err)
	}
	if _, _, err := c.Resend(ctx, "team", "stranger@example.com"); !errors.Is(err, ErrNotRecipient) {
		t.Fatalf("unknown address: got %v", err)
	}
	if _, _, err := c.Resend(ctx, "other", "web@example.com"); !errors.Is(err, ErrNotRecipient) {
		t.Fatalf("another workspace's address: got %v", err)
	}
	if len(box.to()) != 2 {
		t.Fatalf("sent %v, want two emails", box.to())
	}

	// A failed email is retried by the outbox, and its link still works
	// when it finally goes out.
	box.fail = errors.New("smtp 451 try later")
	if n, err := c.AskNew(ctx); err != nil || n != 5 {
		t.Fatalf("with a failing mailer: enqueued %d, err %v", n, err)
	}
	deliver(t, c, 200*time.Millisecond)
	if len(box.to()) != 2 {
		t.Fatalf("sent %v with a failing mailer", box.to())
	}
	pending, err := c.Store.(store.Store).ListDeliveries(ctx, store.DeliveryQuery{Status: store.DeliveryPending})
	if err != nil || len(pending) != 5 || pending[0].Attempts != 1 || !strings.Contains(pending[0].LastError, "451") {
		t.Fatalf("after a failed attempt: %+v %v", pending, err)
	}
	box.fail = nil
	if n, err := c.AskNew(ctx); err != nil || n != 0 {
		t.Fatalf("the failed ones were asked again: enqueued %d (%v), want 0", n, err)
	}
	time.Sleep(300 * time.Millisecond) // the retry falls due
	deliver(t, c, time.Hour)
	if len(box.to()) != 7 {
		t.Fatalf("after the mailer recovered: sent %v, want the 5 retried", box.to())
	}
	if _, err := c.Confirm(ctx, box.lastToken(t, "ann@example.com")); err != nil {
		t.Fatalf("the link of a retried email: %v", err)
	}

	c.Mailer = nil
	if _, _, err := c.Resend(ctx, "team", "boss@example.com"); !errors.Is(err, ErrNoMailer) {
		t.Fatalf("without a mailer: got %v", err)
	}
}
