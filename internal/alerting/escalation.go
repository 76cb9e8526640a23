package alerting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	monitors "github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/oncall"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// TimelineEscalation is the timeline kind that records a fired escalation
// step; its data is an EscalationRecord. The timeline is the record of what
// fired, so a step fires once across restarts and leader changes.
const TimelineEscalation = "escalation"

// EscalationRecord is the data of an escalation timeline event.
type EscalationRecord struct {
	// Step is the 1-based step of the policy.
	Step int `json:"step"`
	// Cycle is the 1-based run through the steps (repeat adds cycles).
	Cycle int `json:"cycle"`
	// Channels are the AlertChannel names the step targets.
	Channels []string `json:"channels"`
	// Emails are the addresses the step emails.
	Emails []string `json:"emails"`
	// EventID is the outbox event that carries the step's deliveries.
	EventID string `json:"event_id,omitempty"`
}

// MinRepeatInterval separates the cycles of a policy whose delays are all
// zero, so a repeat does not fire every cycle at once.
const MinRepeatInterval = time.Minute

// Escalator fires the escalation steps of open incidents. It runs on the
// leader only; the deterministic outbox event id of each (incident, cycle,
// step) keeps a step from being enqueued twice even if two leaders overlap
// or the process dies between enqueueing and recording it.
type Escalator struct {
	// Store holds incidents, their timelines and the outbox.
	Store EscalationStore
	// Reader reads Monitors and EscalationPolicies (the cache is fine).
	Reader client.Reader
	// Router builds the escalation events.
	Router *Router
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Every is the interval between passes (5s when zero).
	Every time.Duration
	// Kick wakes the delivery worker after steps were enqueued; may be nil.
	Kick func()
}

// NeedLeaderElection is true: one replica escalates.
func (e *Escalator) NeedLeaderElection() bool { return true }

// Start runs passes every Every until ctx ends.
func (e *Escalator) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("escalation")
	ctx = ctrl.LoggerInto(ctx, log)
	every := e.Every
	if every <= 0 {
		every = 5 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := e.Tick(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "unable to escalate incidents")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// EscalatingIndex is the cache field index of Monitors that name an
// escalation policy (value "true"): the pass every 5 s reads only them.
// Listing every Monitor built a slice of all of them each time (300 MB at
// 100,000, even without copies).
const EscalatingIndex = "escalating"

// IndexMonitors registers EscalatingIndex with the manager's cache.
func IndexMonitors(ctx context.Context, idx client.FieldIndexer) error {
	if err := idx.IndexField(ctx, &monv1.Monitor{}, EscalatingIndex, escalating); err != nil {
		return fmt.Errorf("index monitors by escalation policy: %w", err)
	}
	return nil
}

func escalating(o client.Object) []string {
	if m, ok := o.(*monv1.Monitor); ok && m.Spec.EscalationPolicyRef != nil {
		return []string{"true"}
	}
	return nil
}

// Tick makes one pass: every due, unfired step of every open incident whose
// monitor has an escalation policy fires. It reads only those monitors
// (EscalatingIndex). It returns the first error after
// trying every incident.
func (e *Escalator) Tick(ctx context.Context) error {
	var list monv1.MonitorList
	if err := e.Reader.List(ctx, &list, client.MatchingFields{EscalatingIndex: "true"}); err != nil {
		return fmt.Errorf("list monitors: %w", err)
	}
	now := e.now()
	var firstErr error
	fired := 0
	for i := range list.Items {
		m := &list.Items[i]
		if m.Spec.EscalationPolicyRef == nil || !m.DeletionTimestamp.IsZero() {
			continue
		}
		inc, err := e.Store.GetOpenIncident(ctx, string(m.UID))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		n, err := e.escalate(ctx, m, inc, now)
		fired += n
		if err == nil {
			continue
		}
		ctrl.LoggerFrom(ctx).Error(err, "unable to escalate incident", "incident", inc.ID, "monitor", m.Name, "namespace", m.Namespace)
		if firstErr == nil {
			firstErr = err
		}
	}
	if fired > 0 && e.Kick != nil {
		e.Kick()
	}
	return firstErr
}

// escalate fires the due, unfired steps of inc in order and returns how many
// fired.
func (e *Escalator) escalate(ctx context.Context, m *monv1.Monitor, inc store.Incident, now time.Time) (int, error) {
	if stoppedReason(inc, now) != "" {
		return 0, nil
	}
	var p monv1.EscalationPolicy
	if err := e.Reader.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.EscalationPolicyRef.Name}, &p); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil // the policy controller reports it
		}
		return 0, fmt.Errorf("get escalation policy %s: %w", m.Spec.EscalationPolicyRef.Name, err)
	}
	fired, err := firedSteps(ctx, e.Store, inc.ID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range EscalationSchedule(&p.Spec, inc.StartedAt) {
		if s.At.After(now) {
			break
		}
		if _, ok := fired[slotKey{s.Cycle, s.Step}]; ok {
			continue
		}
		if err := e.fire(ctx, m, inc, s, now); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// fire enqueues one step's deliveries and records it. The outbox event id
// is derived from (incident, cycle, step): the store refuses a second event
// with that id, so when a previous run enqueued it and died before
// recording, only the record is written now.
func (e *Escalator) fire(ctx context.Context, m *monv1.Monitor, inc store.Incident, s EscalationSlot, now time.Time) error {
	log := ctrl.LoggerFrom(ctx)
	ev, err := e.Router.EscalationEvent(ctx, m, inc, s.Step, s.Channels)
	if err != nil {
		return err
	}
	ev.ID = EscalationEventID(inc.ID, s.Cycle, s.Step)
	s.Emails = append(slices.Clone(s.Emails), e.onCallEmails(ctx, m.Namespace, s.OnCall, now)...)
	for _, addr := range s.Emails {
		ev.Channels = append(ev.Channels, EmailTargetPrefix+addr)
	}
	if len(ev.Channels) > 0 {
		if err := e.Store.EnqueueEvents(ctx, ev); err != nil {
			ds, lerr := e.Store.ListDeliveries(ctx, store.DeliveryQuery{EventID: ev.ID, Limit: 1})
			if lerr != nil || len(ds) == 0 {
				return fmt.Errorf("enqueue escalation step %d of incident %s: %w", s.Step, inc.ID, err)
			}
			log.Info("escalation step was enqueued before; recording it", "incident", inc.ID, "step", s.Step, "cycle", s.Cycle)
		}
	}
	rec := EscalationRecord{Step: s.Step, Cycle: s.Cycle, Channels: s.ChannelNames(), Emails: nonNilStrings(s.Emails), EventID: ev.ID}
	data, _ := json.Marshal(rec)
	if _, err := e.Store.AppendTimeline(ctx, store.TimelineEvent{IncidentID: inc.ID, Kind: TimelineEscalation, At: now, Data: data}); err != nil {
		return fmt.Errorf("record escalation step %d of incident %s: %w", s.Step, inc.ID, err)
	}
	log.Info("escalation step fired", "incident", inc.ID, "step", s.Step, "cycle", s.Cycle,
		"deliveries", len(ev.Channels))
	return nil
}

// escalationNamespace is the UUID namespace of escalation event ids.
var escalationNamespace = uuid.MustParse("5b0f6f3e-3c1e-4d55-9a43-2f1f0f7b8a61")

// EscalationEventID is the outbox event id of one step of one cycle of an
// incident's escalation: the same on every replica and after restarts.
func EscalationEventID(incidentID string, cycle, step int) string {
	return uuid.NewSHA1(escalationNamespace, []byte(incidentID+"/"+strconv.Itoa(cycle)+"/"+strconv.Itoa(step))).String()
}

// onCallEmails returns the addresses of whoever is on call now in the named
// schedules; a missing or not yet started schedule contributes nothing.
func (e *Escalator) onCallEmails(ctx context.Context, ns string, refs []monv1.LocalObjectReference, now time.Time) []string {
	var out []string
	for _, ref := range refs {
		var sched monv1.OnCallSchedule
		if err := e.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, &sched); err != nil {
			ctrl.LoggerFrom(ctx).Info("on-call schedule of an escalation step is unavailable", "schedule", ref.Name, "error", err.Error())
			continue
		}
		if p, _, ok := oncall.Current(&sched.Spec, now); ok && !slices.Contains(out, p.Email) {
			out = append(out, p.Email)
		}
	}
	return out
}

// EscalationSlot is one firing of a policy step: step Step of cycle Cycle
// (both 1-based) at At.
type EscalationSlot struct {
	Step, Cycle  int
	DelayMinutes int32
	At           time.Time
	Channels     []monv1.LocalObjectReference
	Emails       []string
	// OnCall are schedules whose current participant is emailed.
	OnCall []monv1.LocalObjectReference
}

// ChannelNames are the names of the slot's target channels.
func (s EscalationSlot) ChannelNames() []string {
	out := make([]string, 0, len(s.Channels))
	for _, c := range s.Channels {
		out = append(out, c.Name)
	}
	return out
}

// EscalationSchedule lists when the steps of p fire for an incident that
// started at start, in firing order. As the EscalationStep API says, each
// step's delay counts from the previous step (the first from the incident
// start), and each repeat runs the steps again after the last: cycle c
// (1-based) starts (c-1) × the sum of the delays after the start, or
// MinRepeatInterval apart when every delay is zero.
func EscalationSchedule(p *monv1.EscalationPolicySpec, start time.Time) []EscalationSlot {
	var cycleLen time.Duration
	for _, s := range p.Steps {
		cycleLen += time.Duration(s.DelayMinutes) * time.Minute
	}
	if cycleLen == 0 {
		cycleLen = MinRepeatInterval
	}
	cycles := 1 + int(max(p.Repeat, 0))
	out := make([]EscalationSlot, 0, cycles*len(p.Steps))
	for c := range cycles {
		at := start.Add(time.Duration(c) * cycleLen)
		for i, s := range p.Steps {
			at = at.Add(time.Duration(s.DelayMinutes) * time.Minute)
			out = append(out, EscalationSlot{Step: i + 1, Cycle: c + 1, DelayMinutes: s.DelayMinutes, At: at,
				Channels: s.Channels, Emails: s.Emails, OnCall: s.OnCall})
		}
	}
	return out
}

type slotKey struct{ cycle, step int }

// firedSteps reads the escalation records of an incident: when each
// (cycle, step) first fired.
func firedSteps(ctx context.Context, st timelineStore, incidentID string) (map[slotKey]time.Time, error) {
	out := map[slotKey]time.Time{}
	err := eachTimeline(ctx, st, incidentID, func(ev store.TimelineEvent) {
		if ev.Kind != TimelineEscalation {
			return
		}
		var r EscalationRecord
		if json.Unmarshal(ev.Data, &r) != nil {
			return
		}
		k := slotKey{r.Cycle, r.Step}
		if t, ok := out[k]; !ok || ev.At.Before(t) {
			out[k] = ev.At
		}
	})
	return out, err
}

// Reasons escalation is stopped, in EscalationState.Stopped.
const (
	EscalationAcknowledged   = "acknowledged"
	EscalationResolved       = "resolved"
	EscalationSuppressed     = "suppressed"
	EscalationSnoozed        = "snoozed"
	EscalationCompleted      = "completed"
	EscalationNoPolicy       = "no_policy"
	EscalationPolicyNotFound = "policy_not_found"
)

// stoppedReason says why inc does not escalate now, "" when it does.
// Snoozing pauses escalation until the snooze ends.
func stoppedReason(inc store.Incident, now time.Time) string {
	switch {
	case inc.ResolvedAt != nil:
		return EscalationResolved
	case inc.AcknowledgedAt != nil:
		return EscalationAcknowledged
	case inc.AlertSuppressed:
		return EscalationSuppressed
	case inc.SnoozedUntil != nil && inc.SnoozedUntil.After(now):
		return EscalationSnoozed
	}
	return ""
}

// EscalationState is the escalation of one incident, as GET
// /incidents/:id/escalation shows it.
type EscalationState struct {
	IncidentID     string                `json:"incident_id"`
	Policy         *EscalationPolicyInfo `json:"policy"`
	Acknowledged   bool                  `json:"acknowledged"`
	AcknowledgedAt *time.Time            `json:"acknowledged_at"`
	Resolved       bool                  `json:"resolved"`
	// Steps lists every firing of every cycle, in order.
	Steps []EscalationStepState `json:"steps"`
	// NextStepAt is when the next step fires, nil when none will.
	NextStepAt *time.Time `json:"next_step_at"`
	// Stopped says why no further step fires (acknowledged, resolved,
	// suppressed, completed, no_policy, policy_not_found) or that
	// escalation waits for a snooze to end (snoozed); empty while
	// escalating.
	Stopped string `json:"stopped,omitempty"`
}

// EscalationPolicyInfo names an incident's policy.
type EscalationPolicyInfo struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Repeat int32  `json:"repeat"`
}

// EscalationStepState is one firing of a step.
type EscalationStepState struct {
	Step         int        `json:"step"`
	Cycle        int        `json:"cycle"`
	DelayMinutes int32      `json:"delay_minutes"`
	FiresAt      time.Time  `json:"fires_at"`
	FiredAt      *time.Time `json:"fired_at"`
	// State is fired, pending or cancelled (escalation stopped first).
	State   string            `json:"state"`
	Targets EscalationTargets `json:"targets"`
}

// EscalationTargets are whom a step notifies.
type EscalationTargets struct {
	Channels []string `json:"channels"`
	Emails   []string `json:"emails"`
}

// EscalationStatus reports the escalation of inc: its monitor's policy and,
// per step and cycle, when it fires or fired and whom it targets.
func (e *Escalator) EscalationStatus(ctx context.Context, inc store.Incident) (EscalationState, error) {
	now := e.now()
	out := EscalationState{IncidentID: inc.ID, Acknowledged: inc.AcknowledgedAt != nil, AcknowledgedAt: utcPtr(inc.AcknowledgedAt),
		Resolved: inc.ResolvedAt != nil, Steps: []EscalationStepState{}}
	m, err := monitors.ByUID(ctx, e.Reader, inc.Namespace, inc.MonitorID)
	if err != nil {
		return out, err
	}
	if m == nil || m.Spec.EscalationPolicyRef == nil {
		out.Stopped = EscalationNoPolicy
		return out, nil
	}
	var p monv1.EscalationPolicy
	if err := e.Reader.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.EscalationPolicyRef.Name}, &p); err != nil {
		if apierrors.IsNotFound(err) {
			out.Stopped = EscalationPolicyNotFound
			return out, nil
		}
		return out, fmt.Errorf("get escalation policy %s: %w", m.Spec.EscalationPolicyRef.Name, err)
	}
	out.Policy = &EscalationPolicyInfo{ID: string(p.UID), Name: p.Name, Repeat: p.Spec.Repeat}
	fired, err := firedSteps(ctx, e.Store, inc.ID)
	if err != nil {
		return out, err
	}
	out.Stopped = stoppedReason(inc, now)
	halted := out.Stopped != "" && out.Stopped != EscalationSnoozed
	for _, s := range EscalationSchedule(&p.Spec, inc.StartedAt) {
		st := EscalationStepState{Step: s.Step, Cycle: s.Cycle, DelayMinutes: s.DelayMinutes, FiresAt: s.At.UTC(),
			Targets: EscalationTargets{Channels: s.ChannelNames(), Emails: nonNilStrings(s.Emails)}}
		switch at, ok := fired[slotKey{s.Cycle, s.Step}]; {
		case ok:
			at = at.UTC()
			st.FiredAt, st.State = &at, "fired"
		case halted:
			st.State = "cancelled"
		default:
			st.State = "pending"
			if out.NextStepAt == nil {
				next := s.At.UTC()
				if out.Stopped == EscalationSnoozed && inc.SnoozedUntil.After(next) {
					next = inc.SnoozedUntil.UTC()
				}
				out.NextStepAt = &next
			}
		}
		out.Steps = append(out.Steps, st)
	}
	if out.Stopped == "" && out.NextStepAt == nil {
		out.Stopped = EscalationCompleted
	}
	return out, nil
}

func (e *Escalator) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
