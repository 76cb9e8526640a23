package alerting

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

func TestEscalationSchedule(t *testing.T) {
	start := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	step := func(d int32) monv1.EscalationStep { return monv1.EscalationStep{DelayMinutes: d} }
	for _, tt := range []struct {
		name   string
		spec   monv1.EscalationPolicySpec
		offset []time.Duration // minutes after start, in order
	}{
		{"one step", monv1.EscalationPolicySpec{Steps: []monv1.EscalationStep{step(5)}}, []time.Duration{5}},
		{"delays add up", monv1.EscalationPolicySpec{Steps: []monv1.EscalationStep{step(0), step(5), step(10)}},
			[]time.Duration{0, 5, 15}},
		{"repeat runs the steps again after the last", monv1.EscalationPolicySpec{Steps: []monv1.EscalationStep{step(5), step(10)}, Repeat: 2},
			[]time.Duration{5, 15, 20, 30, 35, 45}},
		{"zero delays repeat a minute apart", monv1.EscalationPolicySpec{Steps: []monv1.EscalationStep{step(0), step(0)}, Repeat: 2},
			[]time.Duration{0, 0, 1, 1, 2, 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := EscalationSchedule(&tt.spec, start)
			if len(got) != len(tt.offset) {
				t.Fatalf("%d slots, want %d", len(got), len(tt.offset))
			}
			for i, s := range got {
				if want := start.Add(tt.offset[i] * time.Minute); !s.At.Equal(want) {
					t.Errorf("slot %d (cycle %d step %d) at +%s, want +%dm", i, s.Cycle, s.Step, s.At.Sub(start), tt.offset[i])
				}
				if wantStep := i%len(tt.spec.Steps) + 1; s.Step != wantStep || s.Cycle != i/len(tt.spec.Steps)+1 {
					t.Errorf("slot %d is cycle %d step %d", i, s.Cycle, s.Step)
				}
			}
		})
	}
}

func TestEscalationEventIDIsDeterministic(t *testing.T) {
	a, b := EscalationEventID("inc-1", 1, 2), EscalationEventID("inc-1", 1, 2)
	if a != b || a == EscalationEventID("inc-1", 2, 1) || a == EscalationEventID("inc-2", 1, 2) {
		t.Errorf("ids: %s %s", a, b)
	}
}

// escalationFixture is a monitor with a two-step policy (5 min: the webhook;
// +10 min: the chat channel and an email), repeated once, and its open
// incident.
type escalationFixture struct {
	*harness
	start time.Time
	now   time.Time
	inc   store.Incident
	mon   *monv1.Monitor
}

func newEscalationFixture(t *testing.T) *escalationFixture {
	t.Helper()
	hook, secret := webhookChannel("hook", "https://hooks.example.com/x")
	other, otherSecret := webhookChannel("other-hook", "https://hooks.example.com/y")
	other.Spec.Routing = &monv1.AlertRouting{Scope: "monitors", Monitors: refs("nothing")} // routing is ignored
	chat := channel("chat", monv1.ChannelSlack, nil)
	m := monitor("api", "")
	m.Spec.EscalationPolicyRef = &monv1.LocalObjectReference{Name: "oncall"}
	pol := &monv1.EscalationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "oncall", UID: types.UID("pol-1")},
		Spec: monv1.EscalationPolicySpec{Repeat: 1, Steps: []monv1.EscalationStep{
			{DelayMinutes: 5, Channels: refs("hook")},
			{DelayMinutes: 10, Channels: refs("chat"), Emails: []string{"boss@example.com"}},
		}},
	}
	h := newHarness(t, hook, secret, other, otherSecret, chat, m, pol)
	f := &escalationFixture{harness: h, start: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC), mon: m}
	f.now = f.start
	inc, err := h.st.OpenIncident(context.Background(), store.Incident{ID: "inc-esc", Namespace: "team",
		MonitorID: string(m.UID), MonitorName: "api", MonitorURL: "https://api.example.com", StartedAt: f.start})
	if err != nil {
		t.Fatal(err)
	}
	f.inc = inc
	return f
}

func (f *escalationFixture) escalator() *Escalator {
	clock := func() time.Time { return f.now }
	return &Escalator{Store: f.st, Reader: f.k8s, Router: &Router{Reader: f.k8s, Now: clock}, Now: clock}
}

// records returns the escalation timeline records.
func (f *escalationFixture) records() []EscalationRecord {
	f.t.Helper()
	var out []EscalationRecord
	items, _, err := f.st.ListTimeline(context.Background(), store.TimelineQuery{IncidentID: f.inc.ID})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, e := range items {
		if e.Kind == TimelineEscalation {
			var r EscalationRecord
			_ = json.Unmarshal(e.Data, &r)
			out = append(out, r)
		}
	}
	return out
}

func (f *escalationFixture) deliveries(cycle, step int) []store.Delivery {
	f.t.Helper()
	ds, err := f.st.ListDeliveries(context.Background(), store.DeliveryQuery{EventID: EscalationEventID(f.inc.ID, cycle, step)})
	if err != nil {
		f.t.Fatal(err)
	}
	return ds
}

func channelIDs(ds []store.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ChannelID)
	}
	slices.Sort(out)
	return out
}

func TestEscalatorFiresEachStepOnce(t *testing.T) {
	f := newEscalationFixture(t)
	ctx := context.Background()
	e := f.escalator()

	f.now = f.start.Add(4 * time.Minute)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if r := f.records(); len(r) != 0 {
		t.Fatalf("fired before the delay: %+v", r)
	}

	f.now = f.start.Add(5 * time.Minute)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	ds := f.deliveries(1, 1)
	// The step names one webhook: every webhook connection receives it,
	// whatever its routing.
	if got := channelIDs(ds); !slices.Equal(got, []string{"uid-hook", "uid-other-hook"}) {
		t.Fatalf("step 1 deliveries to %v", got)
	}
	var p alertevent.IncidentPayload
	if err := json.Unmarshal(ds[0].Payload, &p); err != nil || p.Event != alertevent.MonitorDown || p.Reason == nil ||
		*p.Reason != "Escalation step 1: still down" || p.IncidentID != f.inc.ID {
		t.Fatalf("payload %s", ds[0].Payload)
	}
	if r := f.records(); len(r) != 1 || r[0].Step != 1 || r[0].Cycle != 1 || !slices.Equal(r[0].Channels, []string{"hook"}) {
		t.Fatalf("records = %+v", r)
	}

	// Again, and after a restart (a new escalator): nothing fires twice.
	for _, esc := range []*Escalator{e, f.escalator()} {
		if err := esc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.records()) != 1 || len(f.deliveries(1, 1)) != 2 {
		t.Fatalf("a step fired twice: %+v", f.records())
	}

	f.now = f.start.Add(15 * time.Minute)
	if err := f.escalator().Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := channelIDs(f.deliveries(1, 2)); !slices.Equal(got, []string{"email:boss@example.com", "uid-chat"}) {
		t.Fatalf("step 2 deliveries to %v", got)
	}
	r := f.records()
	if len(r) != 2 || r[1].Step != 2 || !slices.Equal(r[1].Emails, []string{"boss@example.com"}) {
		t.Fatalf("records = %+v", r)
	}

	st, err := e.EscalationStatus(ctx, f.inc)
	if err != nil {
		t.Fatal(err)
	}
	if st.Policy == nil || st.Policy.Name != "oncall" || len(st.Steps) != 4 || st.Stopped != "" ||
		st.NextStepAt == nil || !st.NextStepAt.Equal(f.start.Add(20*time.Minute)) {
		t.Fatalf("status = %+v", st)
	}
	if st.Steps[0].State != "fired" || st.Steps[1].State != "fired" || st.Steps[2].State != "pending" ||
		st.Steps[1].FiredAt == nil || !st.Steps[1].FiredAt.Equal(f.start.Add(15*time.Minute)) ||
		!slices.Equal(st.Steps[1].Targets.Emails, []string{"boss@example.com"}) || st.Steps[3].Cycle != 2 {
		t.Fatalf("steps = %+v", st.Steps)
	}

	// Acknowledging stops escalation: cycle 2 never fires.
	if _, err := f.st.AcknowledgeIncident(ctx, f.inc.ID, "alice", f.start.Add(16*time.Minute)); err != nil {
		t.Fatal(err)
	}
	f.now = f.start.Add(time.Hour)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.records()) != 2 || len(f.deliveries(2, 1)) != 0 {
		t.Fatalf("escalated after acknowledgement: %+v", f.records())
	}
	inc, _ := f.st.GetIncident(ctx, f.inc.ID)
	st, _ = e.EscalationStatus(ctx, inc)
	if st.Stopped != EscalationAcknowledged || st.NextStepAt != nil || !st.Acknowledged ||
		st.Steps[2].State != "cancelled" || st.Steps[3].State != "cancelled" {
		t.Fatalf("status after ack = %+v", st)
	}
}

func TestEscalatorRecordsAStepEnqueuedBeforeACrash(t *testing.T) {
	f := newEscalationFixture(t)
	ctx := context.Background()
	f.now = f.start.Add(5 * time.Minute)
	// A previous leader enqueued step 1 and died before recording it.
	ev, err := f.escalator().Router.EscalationEvent(ctx, f.mon, f.inc, 1, refs("hook"))
	if err != nil {
		t.Fatal(err)
	}
	ev.ID = EscalationEventID(f.inc.ID, 1, 1)
	if err := f.st.EnqueueEvents(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if err := f.escalator().Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(f.deliveries(1, 1)); n != 2 {
		t.Errorf("deliveries = %d, want the 2 enqueued before", n)
	}
	if r := f.records(); len(r) != 1 || r[0].EventID != ev.ID {
		t.Errorf("records = %+v", r)
	}
}

func TestEscalatorSkipsSuppressedSnoozedAndResolved(t *testing.T) {
	ctx := context.Background()
	t.Run("snoozed, then due steps fire when the snooze ends", func(t *testing.T) {
		f := newEscalationFixture(t)
		until := f.start.Add(10 * time.Minute)
		if _, err := f.st.SnoozeIncident(ctx, f.inc.ID, &until); err != nil {
			t.Fatal(err)
		}
		f.now = f.start.Add(6 * time.Minute)
		e := f.escalator()
		_ = e.Tick(ctx)
		if len(f.records()) != 0 {
			t.Fatal("fired while snoozed")
		}
		inc, _ := f.st.GetIncident(ctx, f.inc.ID)
		st, _ := e.EscalationStatus(ctx, inc)
		if st.Stopped != EscalationSnoozed || st.NextStepAt == nil || !st.NextStepAt.Equal(until) {
			t.Errorf("status = %+v", st)
		}
		f.now = f.start.Add(11 * time.Minute)
		_ = e.Tick(ctx)
		if r := f.records(); len(r) != 1 || r[0].Step != 1 {
			t.Errorf("records = %+v", r)
		}
	})
	t.Run("suppressed", func(t *testing.T) {
		f := newEscalationFixture(t)
		yes, why := true, "maintenance"
		if _, err := f.st.UpdateIncident(ctx, f.inc.ID, store.IncidentUpdate{AlertSuppressed: &yes, SuppressionReason: &why}); err != nil {
			t.Fatal(err)
		}
		f.now = f.start.Add(time.Hour)
		_ = f.escalator().Tick(ctx)
		if len(f.records()) != 0 {
			t.Fatal("fired for a suppressed incident")
		}
	})
	t.Run("resolved", func(t *testing.T) {
		f := newEscalationFixture(t)
		if _, err := f.st.ResolveIncident(ctx, f.inc.ID, f.start.Add(time.Minute), false, ""); err != nil {
			t.Fatal(err)
		}
		f.now = f.start.Add(time.Hour)
		_ = f.escalator().Tick(ctx)
		if len(f.records()) != 0 {
			t.Fatal("fired for a resolved incident")
		}
		inc, _ := f.st.GetIncident(ctx, f.inc.ID)
		if st, _ := f.escalator().EscalationStatus(ctx, inc); st.Stopped != EscalationResolved {
			t.Errorf("status = %+v", st)
		}
	})
}

func TestEscalationEmailIsSentOverSMTP(t *testing.T) {
	srv := newSMTPServer(t)
	srv.offerTLS = false
	f := newEscalationFixture(t)
	ctx := context.Background()
	f.now = f.start.Add(15 * time.Minute) // both steps of cycle 1 are due
	if err := f.escalator().Tick(ctx); err != nil {
		t.Fatal(err)
	}
	w := f.worker("a")
	w.SMTP = &SMTP{Addr: srv.addr(), From: "alerts@uptime.example"}
	w.Endpoints.Email = ""
	for range 3 {
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var mail *store.Delivery
	for _, d := range f.deliveries(1, 2) {
		if d.ChannelID == "email:boss@example.com" {
			mail = &d
		}
	}
	if mail == nil || mail.Status != store.DeliveryDelivered {
		t.Fatalf("email delivery = %+v", mail)
	}
	msgs := srv.messages()
	if len(msgs) != 1 || msgs[0].to[0] != "boss@example.com" {
		t.Fatalf("messages = %+v", msgs)
	}
	m, body := parseMail(t, msgs[0].data)
	if m.Header.Get("Subject") != "api is DOWN" || !strings.Contains(body, "Escalation step 2: still down") {
		t.Errorf("subject %q body %q", m.Header.Get("Subject"), body)
	}
}

func TestEscalationEmailsWhoeverIsOnCall(t *testing.T) {
	f := newEscalationFixture(t)
	ctx := context.Background()
	sched := &monv1.OnCallSchedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "primary"},
		Spec: monv1.OnCallScheduleSpec{ShiftHours: 24, StartsAt: metav1.NewTime(f.start.Add(-30 * time.Hour)),
			Participants: []monv1.OnCallParticipant{{Name: "Ann", Email: "ann@example.com"}, {Name: "Bob", Email: "bob@example.com"}}},
	}
	if err := f.k8s.Create(ctx, sched); err != nil {
		t.Fatal(err)
	}
	var pol monv1.EscalationPolicy
	if err := f.k8s.Get(ctx, client.ObjectKey{Namespace: "team", Name: "oncall"}, &pol); err != nil {
		t.Fatal(err)
	}
	pol.Spec.Steps[0].OnCall = refs("primary", "missing-schedule")
	if err := f.k8s.Update(ctx, &pol); err != nil {
		t.Fatal(err)
	}
	f.now = f.start.Add(5 * time.Minute)
	if err := f.escalator().Tick(ctx); err != nil {
		t.Fatal(err)
	}
	// 30 h into 24 h turns: Bob's turn; the missing schedule adds no one.
	if got := channelIDs(f.deliveries(1, 1)); !slices.Contains(got, "email:bob@example.com") || slices.Contains(got, "email:ann@example.com") {
		t.Fatalf("step 1 deliveries to %v, want Bob on call", got)
	}
	if r := f.records(); len(r) != 1 || !slices.Equal(r[0].Emails, []string{"bob@example.com"}) {
		t.Fatalf("records = %+v", r)
	}
}
