package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/assign"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// OpenManualIncident opens an incident for m now (POST /incidents);
// store.ErrIncidentOpen when one is open. It is a judgement too: under the
// monitor's lock, so it never races an automatic open on another replica.
func (e *Engine) OpenManualIncident(ctx context.Context, m *monv1.Monitor) (store.Incident, error) {
	st := e.state(string(m.UID))
	st.mu.Lock()
	defer st.mu.Unlock()
	now := e.opts.Now()
	inc := store.Incident{
		ID: newID(), Namespace: m.Namespace, MonitorID: string(m.UID), MonitorName: m.Spec.Name, MonitorURL: target(m),
		MonitorType: string(m.Spec.Type), StartedAt: now, RegionsTotal: len(monitorRegions(m)), Cause: store.CauseManual,
	}
	var events []store.OutboxEvent
	if e.opts.Alerts != nil {
		var err error
		if events, err = e.opts.Alerts.IncidentEvents(ctx, alertevent.MonitorDown, m, inc, alertevent.Decision{Reason: "Incident opened manually"}); err != nil {
			return store.Incident{}, err
		}
	}
	var opened store.Incident
	var view store.MonitorView
	err := e.opts.Store.Judge(ctx, string(m.UID), func(tx store.JudgeTx) error {
		var err error
		if view, err = tx.View(ctx, viewQuery(m, e.opts.Now())); err != nil {
			return err
		}
		if view.Open != nil {
			return store.ErrIncidentOpen
		}
		if opened, err = tx.Open(ctx, inc, events...); err != nil {
			return err
		}
		view.Open = &opened
		return nil
	})
	if err != nil {
		return store.Incident{}, err
	}
	metrics.IncidentsOpened.WithLabelValues("false").Inc()
	e.maybePush(m, st, view, now)
	return opened, nil
}

// ResolveIncident resolves an incident manually and sends incident.resolved.
func (e *Engine) ResolveIncident(ctx context.Context, id, note, by string) (store.Incident, error) {
	inc, err := e.opts.Store.GetIncident(ctx, id)
	if err != nil {
		return store.Incident{}, err
	}
	if inc.ResolvedAt != nil {
		return inc, store.ErrIncidentResolved
	}
	m, err := e.monitorByUID(ctx, inc.MonitorID)
	if err != nil {
		return store.Incident{}, err
	}
	now := e.opts.Now()
	var events []store.OutboxEvent
	if m != nil && e.opts.Alerts != nil && !inc.AlertSuppressed {
		resolved := inc
		resolved.ResolvedAt, resolved.ResolvedManually = &now, true
		if events, err = e.opts.Alerts.IncidentEvents(ctx, alertevent.IncidentResolved, m, resolved, alertevent.Decision{}); err != nil {
			return store.Incident{}, err
		}
	}
	out, err := e.opts.Store.ResolveIncident(ctx, id, now, true, note, events...)
	if err != nil {
		return out, err
	}
	metrics.IncidentsResolved.WithLabelValues("manual").Inc()
	if e.opts.Subscribers != nil && !inc.AlertSuppressed {
		if err := e.opts.Subscribers.IncidentResolved(ctx, inc.Namespace, inc.MonitorID, inc.ID); err != nil {
			e.opts.Log.Error(err, "notify status page subscribers")
		}
	}
	if m != nil {
		st := e.state(string(m.UID))
		st.mu.Lock()
		e.push(m, st, now)
		st.mu.Unlock()
	}
	return out, nil
}

// AcknowledgeIncident records an acknowledgement, which stops escalation.
func (e *Engine) AcknowledgeIncident(ctx context.Context, id, by string) (store.Incident, error) {
	inc, err := e.opts.Store.AcknowledgeIncident(ctx, id, by, e.opts.Now())
	if errors.Is(err, store.ErrIncidentAcknowledged) {
		return inc, nil
	}
	return inc, err
}

// RunCheckAgentWait bounds how long RunCheck waits for an agent of a saved
// monitor's regions to come online (an agent restarting, a region just
// added) before it refuses the check with a *NoAgentError.
const RunCheckAgentWait = 10 * time.Second

// RegionError refuses a run-check aimed at a region the monitor is not
// checked from.
type RegionError struct {
	Region  string
	Regions []string
}

func (e *RegionError) Error() string {
	return fmt.Sprintf("region %s is not one of the monitor's regions (%s)", e.Region, strings.Join(e.Regions, ", "))
}

// NoAgentError refuses a run-check of a saved monitor when no agent of its
// regions was online within RunCheckAgentWait: the check would otherwise
// run from somewhere the monitor is not checked from.
type NoAgentError struct {
	Regions []string
}

func (e *NoAgentError) Error() string {
	return fmt.Sprintf("no probe agent of the monitor's regions (%s) is online", strings.Join(e.Regions, ", "))
}

// RunCheck runs one check of m now and returns the result; with save it is
// also ingested like an agent's result. A saved monitor is checked only by
// an agent of one of its regions (status's effective regions, or the plan's
// default while the controller has not written them): region, when set,
// must be one of them (*RegionError), and without an agent online RunCheck
// waits up to RunCheckAgentWait for one, then refuses (*NoAgentError), so a
// check is never recorded under a region the monitor does not use. An
// unsaved definition (POST /monitors/test) is checked from the manager
// itself, labelled ManagerRegion, when no agent of its regions is online.
func (e *Engine) RunCheck(ctx context.Context, m *monv1.Monitor, region string, save bool) (probeapi.Result, error) {
	if m.Spec.Type == monv1.MonitorCron {
		return probeapi.Result{}, fmt.Errorf("cron monitors are checked by their heartbeats, not by probes")
	}
	a, err := assign.ToAssignment(ctx, e.credentials, m)
	if err != nil {
		return probeapi.Result{}, err
	}
	if a.ID == "" {
		a.ID = uuid.NewString() // an unsaved definition: results need a monitor id
	}
	saved := m.UID != ""
	regions := monitorRegions(e.withRegions(ctx, m))
	if region != "" && len(regions) > 0 && !slices.Contains(regions, region) {
		return probeapi.Result{}, &RegionError{Region: region, Regions: regions}
	}
	candidates := regions
	if region != "" {
		candidates = []string{region}
	}
	online := func() string {
		for _, code := range candidates {
			if n, _ := e.agentsOnline(code); n > 0 {
				return code
			}
		}
		return ""
	}
	chosen := online()
	if chosen == "" && saved && len(candidates) > 0 {
		chosen, err = e.waitForAgent(ctx, online)
		if err != nil {
			return probeapi.Result{}, err
		}
		if chosen == "" {
			return probeapi.Result{}, &NoAgentError{Regions: candidates}
		}
	}
	if chosen != "" {
		// The check runs from the region's own vantage point.
		wait, cancel := context.WithTimeout(ctx, probeapi.EffectiveTimeout(&a)+15*time.Second)
		defer cancel()
		return e.opts.Agents.RunOnAgent(wait, chosen, a, save && saved)
	}
	if saved {
		return probeapi.Result{}, &NoAgentError{Regions: candidates}
	}
	// An unsaved definition without an agent of its regions: check from
	// the manager itself, labelled as such; nothing is recorded.
	if e.opts.LocalCheck == nil {
		return probeapi.Result{}, &NoAgentError{Regions: candidates}
	}
	return e.opts.LocalCheck(ctx, &a, ManagerRegion, netguard.Guard{AllowPrivate: e.opts.AllowPrivateTargets}), nil
}

// waitForAgent polls online until it names a region or RunCheckAgentWait
// passes ("" then).
func (e *Engine) waitForAgent(ctx context.Context, online func() string) (string, error) {
	deadline := time.NewTimer(RunCheckAgentWait)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-deadline.C:
			return "", nil
		case <-tick.C:
			if code := online(); code != "" {
				return code, nil
			}
		}
	}
}

// ExplainMonitor explains a monitor's open incident or its current votes,
// from the store.
func (e *Engine) ExplainMonitor(ctx context.Context, m *monv1.Monitor) (Explanation, error) {
	view, err := e.opts.Store.MonitorView(ctx, string(m.UID), viewQuery(m, e.opts.Now()))
	if err != nil {
		return Explanation{}, fmt.Errorf("read monitor view: %w", err)
	}
	return e.explain(ctx, m, view, view.Open)
}

// ExplainIncident explains one incident from its recorded confirmations and
// the monitor's current votes.
func (e *Engine) ExplainIncident(ctx context.Context, inc store.Incident) (Explanation, error) {
	m, err := e.monitorByUID(ctx, inc.MonitorID)
	if err != nil {
		return Explanation{}, err
	}
	if m == nil {
		id := inc.ID
		return Explanation{MonitorID: inc.MonitorID, IncidentID: &id, State: "monitor deleted", Fault: FaultUnknown,
			FailureClass: classify(inc.Cause), Summary: "the monitor no longer exists"}, nil
	}
	view, err := e.opts.Store.MonitorView(ctx, string(m.UID), viewQuery(m, e.opts.Now()))
	if err != nil {
		return Explanation{}, fmt.Errorf("read monitor view: %w", err)
	}
	return e.explain(ctx, m, view, &inc)
}

func (e *Engine) explain(ctx context.Context, m *monv1.Monitor, view store.MonitorView, inc *store.Incident) (Explanation, error) {
	facts, err := e.regionFacts(ctx)
	if err != nil {
		return Explanation{}, err
	}
	now := e.opts.Now()
	q := tallyView(m, view, facts, now)
	x := Explanation{
		MonitorID: string(m.UID), QuorumRule: q.Rule(), RequiredFailing: q.Required,
		Failing: len(q.FailingRegions), Voting: q.Voting, Abstaining: q.Abstaining, Votes: q.Votes,
	}
	cause := q.Cause
	switch {
	case inc != nil:
		id := inc.ID
		x.IncidentID = &id
		if inc.ResolvedAt != nil {
			x.State = "resolved"
		} else {
			x.State = "incident_open"
		}
		if inc.Cause != "" {
			cause = inc.Cause
		}
		x.Findings = append(x.Findings, fmt.Sprintf("confirmed by %d of %d regions (%v)", inc.Confirmations, inc.RegionsTotal, inc.ConfirmingRegions))
		switch {
		case inc.AlertSuppressed:
			x.AlertDecision = "suppressed: " + inc.SuppressionReason
		case inc.SnoozedUntil != nil && now.Before(*inc.SnoozedUntil):
			x.AlertDecision = "snoozed until " + inc.SnoozedUntil.UTC().Format(time.RFC3339)
		default:
			x.AlertDecision = "alerted"
		}
		if inc.IsFlapping {
			x.Findings = append(x.Findings, "flapping: several incidents opened within an hour")
		}
	case q.LastMileOnly:
		x.State, x.AlertDecision = "last_mile", "last-mile notice, no incident"
	case q.Outage:
		x.State, x.AlertDecision = "confirming", "incident pending"
	case len(q.FailingRegions) > 0:
		x.State, x.AlertDecision = "unconfirmed_failure", "no incident: quorum not reached"
	case q.Voting == 0:
		x.State, x.AlertDecision = "no_data", "no incident: no region has voted"
	default:
		x.State, x.AlertDecision = "up", "no incident"
	}
	x.FailureClass = classify(cause)
	x.Fault = faultVerdict(q, cause)
	if len(q.Abstaining) > 0 {
		x.Findings = append(x.Findings, fmt.Sprintf("%d region(s) abstained (blocked, unknown, stale or no data)", len(q.Abstaining)))
	}
	x.Summary = summary(x, q)
	// The lists are arrays on the wire, empty rather than null.
	x.Abstaining = nonNil(x.Abstaining)
	x.Votes = nonNil(x.Votes)
	x.Findings = nonNil(x.Findings)
	return x, nil
}

// nonNil is s, or an empty slice for nil (which encodes as null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// classify maps a check's error type (probeapi.Error*) to a failure class.
func classify(cause string) string {
	switch cause {
	case "":
		return "none"
	case probeapi.ErrorDNS, probeapi.ErrorDNSAnswer:
		return "dns"
	case probeapi.ErrorConnection, probeapi.ErrorRefused, probeapi.ErrorPortUnreachable, probeapi.ErrorPacketLoss:
		return "connection"
	case probeapi.ErrorTimeout, probeapi.ErrorNoResponse:
		return "timeout"
	case probeapi.ErrorTLS:
		return "tls"
	case probeapi.ErrorHTTPStatus, probeapi.ErrorKeyword, probeapi.ErrorAssertion, probeapi.ErrorResponseTime,
		probeapi.ErrorResponseMismatch, probeapi.ErrorStep, probeapi.ErrorProtocol, probeapi.ErrorMCP, "too_many_redirects",
		probeapi.ErrorCredentialOrigin:
		return "response"
	case store.CauseManual:
		return store.CauseManual
	case "missed_heartbeat", "heartbeat_failed":
		return "heartbeat"
	case probeapi.ErrorBlocked, probeapi.ErrorInvalidConfig, probeapi.ErrorInternal:
		return "checker"
	}
	return cause
}

// faultVerdict guesses whose fault a failure is: the checker's when regions
// mostly abstain, external when only ISP vantage points fail, yours when
// data-centre regions agree, unknown otherwise.
func faultVerdict(q Quorum, cause string) Fault {
	switch {
	case len(q.FailingRegions) == 0 && len(q.Abstaining) > 0 && q.Passing == 0:
		return FaultChecker
	case q.LastMileOnly:
		return FaultExternal
	case q.Outage || cause == store.CauseManual:
		return FaultYours
	case len(q.FailingRegions) > 0:
		return FaultUnknown
	}
	return FaultUnknown
}

func summary(x Explanation, q Quorum) string {
	switch x.State {
	case "incident_open", "resolved":
		return fmt.Sprintf("%s failure; %d of %d voting regions failing now (rule: %s)", x.FailureClass, x.Failing, x.Voting, q.Rule())
	case "unconfirmed_failure":
		return fmt.Sprintf("%d region(s) failing but the quorum (%s) is not reached", x.Failing, q.Rule())
	case "last_mile":
		return "only last-mile vantage points fail while data-centre regions reach the target"
	case "no_data":
		return "no region has reported a usable result yet"
	}
	return fmt.Sprintf("%d of %d voting regions pass", q.Passing, q.Voting)
}

func newID() string { return uuid.NewString() }

// agentOnlineWindow is how recent an agent's contact must be for ad-hoc
// checks to be sent to it.
const agentOnlineWindow = 90 * time.Second
