package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/assign"
	"github.com/uptime-operator/uptime-operator/internal/maintenance"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Alerts builds the outbox events of an incident state change: the payload
// and the channels whose routing covers the monitor. The alerting package
// implements it; nil means no alerts.
type Alerts interface {
	IncidentEvents(ctx context.Context, kind string, m *monv1.Monitor, inc store.Incident, d alertevent.Decision) ([]store.OutboxEvent, error)
}

// HeartbeatRegion is the pseudo-region of cron heartbeats: the manager judges
// them itself, so there is exactly one voter.
const HeartbeatRegion = "heartbeat"

// Options configure an Engine.
type Options struct {
	// Store holds history.
	Store Store
	// Client reads Monitors, regions and windows from the cache.
	Client client.Client
	// Secrets reads Secrets directly.
	Secrets assign.SecretReader
	// Alerts builds alert events; nil disables alerts.
	Alerts Alerts
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// AllowPrivateTargets applies to ad-hoc checks run by the manager.
	AllowPrivateTargets bool
	// LocalCheck runs an ad-hoc check in this process, labelled with
	// region, when no agent can (probes.RunOnce). The manager wires it, so
	// the engine does not depend on the probe runtime; nil refuses such
	// checks.
	LocalCheck func(ctx context.Context, a *probeapi.Assignment, region string, guard netguard.Guard) probeapi.Result
	// StatusInterval throttles Monitor status refreshes while nothing
	// changes (default 30 s).
	StatusInterval time.Duration
	// StatusRefreshRate bounds those unchanged refreshes across all
	// monitors, per second (default DefaultStatusRefreshRate): with more
	// monitors than StatusInterval × rate, each one's refresh interval grows
	// to monitors ÷ rate. Refreshes of a changed status are not bounded.
	StatusRefreshRate float64
	// ManagerNamespace holds region token Secrets by default and the probe
	// ServiceAccount.
	ManagerNamespace string
	// Log receives engine logs.
	Log logr.Logger
	// TLS records certificates seen by checks (expiry notices); may be nil.
	TLS TLSObserver
	// Subscribers hears about incidents of monitors on status pages; may be nil.
	Subscribers IncidentSubscribers
	// Export receives stored checks for the telemetry export; may be nil. It
	// must not block.
	Export CheckExporter
	// Recorder records Kubernetes Events on Monitors for incidents; may be nil.
	Recorder record.EventRecorder
	// Series hears the response time and certificate of every ingested
	// result (the opt-in per-monitor Prometheus series); may be nil.
	Series SeriesObserver
	// Plans resolves a namespace's plan, for the default regions of a
	// Monitor whose status does not name its regions yet; nil leaves such a
	// Monitor unjudged until it does.
	Plans *plans.Resolver
	// Agents is the probe API server: agent presence for the quorum and
	// ad-hoc checks on a region's agents. Nil means no agent is ever online
	// (RunCheck then checks from the manager).
	Agents Agents
}

// Agents is what the engine asks of the probe API server.
type Agents interface {
	// AgentsOnline counts the agents of region that called within window.
	AgentsOnline(region string, window time.Duration) (int, time.Time)
	// RunOnAgent runs one check on an agent of region and waits for it.
	RunOnAgent(ctx context.Context, region string, a probeapi.Assignment, save bool) (probeapi.Result, error)
}

// AgentsOnline returns how many agents of region called this replica within
// window, and the last contact (none without Agents).
func (e *Engine) AgentsOnline(region string, window time.Duration) (int, time.Time) {
	if e.opts.Agents == nil {
		return 0, time.Time{}
	}
	return e.opts.Agents.AgentsOnline(region, window)
}

// agentsOnline counts region's agents seen by this replica recently enough
// to take an ad-hoc check.
func (e *Engine) agentsOnline(region string) (int, time.Time) {
	return e.AgentsOnline(region, agentOnlineWindow)
}

// CheckExporter forwards stored checks (the OTLP telemetry export).
type CheckExporter interface {
	Export(ctx context.Context, ns string, checks []store.Check)
}

// SeriesObserver keeps per-monitor figures of ingested results; the
// metrics package's MonitorSeries implements it.
type SeriesObserver interface {
	ObserveResponse(m *monv1.Monitor, region string, d time.Duration)
	ObserveCertificate(m *monv1.Monitor, notAfter, at time.Time)
}

// TLSObserver records the certificate a check saw.
type TLSObserver interface {
	ObserveTLS(ctx context.Context, monitorID, region string, at time.Time, info probeapi.TLSInfo) error
}

// IncidentSubscribers notifies status page subscribers of incidents that
// alert (suppressed incidents stay quiet there too).
type IncidentSubscribers interface {
	IncidentOpened(ctx context.Context, ns, monitorUID, incidentID string) error
	IncidentResolved(ctx context.Context, ns, monitorUID, incidentID string) error
}

// Engine is the incident engine. It is safe for concurrent use.
type Engine struct {
	opts Options

	mu       sync.Mutex
	monitors map[string]*monitorState

	updates chan event.TypedGenericEvent[*monv1.Monitor]

	contacts sharedContacts

	// credentials reads the Secrets that assignments resolve (a short-lived
	// cache over opts.Secrets).
	credentials assign.SecretReader
}

// monitorState is what one replica keeps of a monitor besides the store.
// The judgement itself reads the store (see judge), so no replica's memory
// holds a region's verdict or an incident that the store does not; what is
// left here only throttles status refreshes and follows spec changes. Its
// mutex lets one goroutine of this replica judge the monitor at a time (the
// store's monitor lock orders the replicas).
type monitorState struct {
	mu sync.Mutex
	// lastPush and pushedKey throttle status refreshes.
	lastPush  time.Time
	pushedKey string
	// seen is the newest status of each region that this replica knows,
	// from the store's views and from the results it ingested, sorted by
	// region: a change of it asks for a status refresh at once.
	seen []regionStatus
	// pausedSeen and resumedAt follow pause changes of a cron monitor made
	// in its spec (kubectl), which leave no pause window in the store: the
	// schedule restarts at the resume.
	pausedSeen bool
	resumedAt  *time.Time
}

// lastMile is an open last-mile notice, kept in the monitor's judgement
// document in the store.
type lastMile struct {
	NoticeID string    `json:"notice_id"`
	Since    time.Time `json:"since"`
	ISPs     []string  `json:"isps"`
}

// judgementState is the monitor's judgement document (store.MonitorView.State).
type judgementState struct {
	LastMile *lastMile `json:"last_mile,omitempty"`
	// Watch marks a monitor with failing votes and no open incident (a
	// quorum not reached yet, a warm-up): time alone can turn those into
	// an outage (a warm-up ends, a passing region goes stale), so the
	// leader's sweep must keep judging it. A document makes the monitor
	// unsettled (Store.UnsettledMonitors), which is how the sweep finds it
	// among 100,000 in one read per page instead of a view each.
	Watch bool `json:"watch,omitempty"`
}

// watchDoc is the judgement document of a watched monitor with no
// last-mile notice: such a monitor whose votes still fail needs no write.
var watchDoc = mustJSON(judgementState{Watch: true})

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// regionStatus is a region's newest status as a replica knows it.
type regionStatus struct {
	region string
	status store.CheckStatus
	at     time.Time
}

// New returns an engine.
func New(opts Options) *Engine {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.StatusInterval == 0 {
		opts.StatusInterval = 30 * time.Second
	}
	if opts.StatusRefreshRate <= 0 {
		opts.StatusRefreshRate = DefaultStatusRefreshRate
	}
	if opts.Log.GetSink() == nil {
		opts.Log = logr.Discard()
	}
	e := &Engine{
		opts:     opts,
		monitors: map[string]*monitorState{},
		updates:  make(chan event.TypedGenericEvent[*monv1.Monitor], 4096),
	}
	if opts.Secrets != nil {
		e.credentials = assign.NewSecretCache(opts.Secrets, assign.CredentialsTTL, opts.Now)
	}
	return e
}

// Updates is the channel the Monitor controller watches: the engine sends a
// monitor when its status should be refreshed.
func (e *Engine) Updates() <-chan event.TypedGenericEvent[*monv1.Monitor] { return e.updates }

func (e *Engine) state(uid string) *monitorState {
	e.mu.Lock()
	defer e.mu.Unlock()
	st, ok := e.monitors[uid]
	if !ok {
		st = &monitorState{}
		e.monitors[uid] = st
	}
	return st
}

// Forget drops the memory of a deleted monitor.
func (e *Engine) Forget(uid string) {
	e.mu.Lock()
	delete(e.monitors, uid)
	e.mu.Unlock()
}

// Ingest stores a batch of results (idempotently by id) and evaluates every
// monitor it touches. Results of unknown monitors are dropped.
func (e *Engine) Ingest(ctx context.Context, results []probeapi.Result) (probeapi.ResultsResponse, error) {
	monitors := map[string]*monv1.Monitor{}
	checks := make([]store.Check, 0, len(results))
	for _, r := range results {
		m, ok := monitors[r.MonitorID]
		if !ok {
			var err error
			if m, err = e.monitorByUID(ctx, r.MonitorID); err != nil {
				return probeapi.ResultsResponse{}, err
			}
			monitors[r.MonitorID] = m
		}
		if m == nil {
			continue
		}
		checks = append(checks, store.Check{
			ID: r.ID, MonitorID: r.MonitorID, Namespace: m.Namespace, Region: r.Region,
			CheckedAt: r.CheckedAt.UTC().Truncate(time.Microsecond), Status: store.CheckStatus(r.Status),
			StatusCode: r.StatusCode, ResponseTimeMs: r.ResponseTimeMs,
			ErrorType: r.ErrorType, ErrorMessage: r.ErrorMessage, Details: r.Details, Screenshot: r.Screenshot,
		})
	}
	inserted, err := e.opts.Store.InsertChecks(ctx, checks)
	if err != nil {
		return probeapi.ResultsResponse{}, fmt.Errorf("insert checks: %w", err)
	}
	now := e.opts.Now()
	for _, c := range checks {
		metrics.CheckResults.WithLabelValues(string(monitors[c.MonitorID].Spec.Type), c.Region, string(c.Status)).Inc()
		metrics.IngestLag.Observe(now.Sub(c.CheckedAt).Seconds())
	}
	if e.opts.Series != nil {
		e.observeSeries(monitors, checks, results)
	}
	if e.opts.TLS != nil {
		for _, r := range results {
			if r.TLS == nil || monitors[r.MonitorID] == nil {
				continue
			}
			if err := e.opts.TLS.ObserveTLS(ctx, r.MonitorID, r.Region, r.CheckedAt.UTC(), *r.TLS); err != nil {
				e.opts.Log.Error(err, "record certificate", "monitor", r.MonitorID)
			}
		}
	}
	metrics.DuplicateResults.Add(float64(len(checks) - inserted))
	byMonitor := map[string][]store.Check{}
	for _, c := range checks {
		byMonitor[c.MonitorID] = append(byMonitor[c.MonitorID], c)
	}
	settled := e.settled(ctx, byMonitor)
	// Every monitor of the batch is judged from the store now that the batch
	// is committed; judgements of different monitors run side by side (the
	// SQLite writer then commits them together).
	sem := make(chan struct{}, judgeParallel)
	var wg sync.WaitGroup
	for uid, cs := range byMonitor {
		m := monitors[uid]
		if e.opts.Export != nil {
			e.opts.Export.Export(ctx, m.Namespace, cs)
		}
		if settled[uid] {
			// Nothing to judge; a changed region status still asks for a
			// status refresh (and the monitor counts in refreshEvery).
			e.pushSettled(m, cs, now)
			e.recordDNS(ctx, m, cs)
			continue
		}
		passing := allPass(cs)
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			// A passing monitor left unsettled has an open incident or a
			// last-mile notice: straight to the locked judgement. When the
			// batched read failed, judge reads for itself.
			force := passing && settled != nil
			if err := e.judge(ctx, m, force, passing && !force); err != nil {
				e.opts.Log.Error(err, "judge monitor", "monitor", m.Name, "namespace", m.Namespace)
			}
			e.recordDNS(ctx, m, cs)
		}()
	}
	wg.Wait()
	return probeapi.ResultsResponse{Accepted: inserted, Duplicates: len(results) - inserted}, nil
}

// observeSeries hands the per-monitor series the response time of every
// check that measured its target (blocked and unknown checks did not) and
// the certificate of every result that carries one.
func (e *Engine) observeSeries(monitors map[string]*monv1.Monitor, checks []store.Check, results []probeapi.Result) {
	for _, c := range checks {
		switch c.Status {
		case store.StatusUp, store.StatusDegraded, store.StatusDown:
			e.opts.Series.ObserveResponse(monitors[c.MonitorID], c.Region, time.Duration(c.ResponseTimeMs)*time.Millisecond)
		}
	}
	for _, r := range results {
		if m := monitors[r.MonitorID]; m != nil && r.TLS != nil && !r.TLS.NotAfter.IsZero() {
			e.opts.Series.ObserveCertificate(m, r.TLS.NotAfter, r.CheckedAt)
		}
	}
}

// allPass reports whether every check passes (up or degraded).
func allPass(cs []store.Check) bool {
	for _, c := range cs {
		if c.Status != store.StatusUp && c.Status != store.StatusDegraded {
			return false
		}
	}
	return true
}

// settled finds, in one store read for the whole batch, the monitors
// whose results all pass and that have neither an open incident nor a
// last-mile notice: their results cannot change anything (see judge), so
// they are not judged one by one. That per-monitor read (a MonitorView per
// result, 1,667 a second at 100,000 monitors) was the ingest's largest cost
// and, queued behind the sweep and status refreshes for the store's read
// connections, held every push of the agent for seconds. Nil when the read
// fails: then every monitor is judged as before.
func (e *Engine) settled(ctx context.Context, byMonitor map[string][]store.Check) map[string]bool {
	var passing []string
	for uid, cs := range byMonitor {
		if allPass(cs) {
			passing = append(passing, uid)
		}
	}
	if len(passing) == 0 {
		return map[string]bool{}
	}
	unsettled, err := e.opts.Store.UnsettledMonitors(ctx, passing)
	if err != nil {
		e.opts.Log.Error(err, "read unsettled monitors; judging each")
		return nil
	}
	settled := make(map[string]bool, len(passing))
	for _, uid := range passing {
		if !unsettled[uid] {
			settled[uid] = true
		}
	}
	return settled
}

// judgeParallel bounds the monitors of one batch judged at the same time.
const judgeParallel = 8

// monitorByUID finds a Monitor in the cache; nil when it does not exist.
func (e *Engine) monitorByUID(ctx context.Context, uid string) (*monv1.Monitor, error) {
	var list monv1.MonitorList
	if err := e.opts.Client.List(ctx, &list, client.MatchingFields{monv1.UIDIndex: uid}); err != nil {
		return nil, fmt.Errorf("find monitor %s: %w", uid, err)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return &list.Items[0], nil
}

// judgement is what one judgement of a monitor found and did; the effects
// outside the store (metrics, Kubernetes Events, subscribers, logs, status)
// follow once it is committed.
type judgement struct {
	view     store.MonitorView
	q        Quorum
	opened   *store.Incident
	resolved *store.Incident
}

// judge decides a monitor from the store. Under the monitor's lock, in one
// transaction, it reads the newest result of every region (whichever replica
// stored it), the open incident and the last-mile notice, counts the votes,
// and opens or resolves the incident with its outbox events, so exactly one
// replica makes each decision and it is made from every region's latest
// result.
//
// Reads without the lock come first. When the new results all pass
// (passing), they cannot confirm an outage: only an open incident or a
// pending last-mile notice could change, which one small read rules out.
// Otherwise, unless force is set, the whole view is read and counted: when
// no incident is open, no last-mile notice is pending and the count
// confirms nothing, no decision is due and no write transaction is needed.
// Most monitors most of the time take one of these paths. Such a read can
// overlap another replica's judgement that decided from a slightly older
// view (say, it opens an incident that the newer results no longer
// confirm); that is corrected at the monitor's next result or by the
// leader's sweep (SweepMonitors), which also refreshes status after the
// first path.
func (e *Engine) judge(ctx context.Context, m *monv1.Monitor, force, passing bool) error {
	if m.Spec.Paused || !m.DeletionTimestamp.IsZero() {
		return nil
	}
	m = e.withRegions(ctx, m)
	st := e.state(string(m.UID))
	st.mu.Lock()
	defer st.mu.Unlock()
	now := e.opts.Now()
	facts, err := e.regionFacts(ctx)
	if err != nil {
		return err
	}
	vq := viewQuery(m, now)
	if passing {
		// Passing results cannot confirm an outage: only an open incident
		// or a pending last-mile notice can change, and those take one
		// cheap read to rule out. The status refresh of such a change comes
		// with the leader's sweep.
		view, err := e.opts.Store.MonitorView(ctx, string(m.UID), store.ViewQuery{Now: now, Gap: vq.Gap})
		if err != nil {
			return fmt.Errorf("read monitor view: %w", err)
		}
		if view.Open == nil && len(view.State) == 0 {
			return nil
		}
	} else if !force {
		view, err := e.opts.Store.MonitorView(ctx, string(m.UID), vq)
		if err != nil {
			return fmt.Errorf("read monitor view: %w", err)
		}
		q := tallyView(m, view, facts, now)
		idle := view.Open == nil && bytes.Equal(view.State, idleState(q)) &&
			!(q.Outage && !q.LastMileOnly) && !(q.LastMileOnly && len(q.FailingRegions) > 0)
		if idle {
			e.maybePush(m, st, view, now)
			return nil
		}
	}
	var j judgement
	err = e.opts.Store.Judge(ctx, string(m.UID), func(tx store.JudgeTx) error {
		j = judgement{}
		view, err := tx.View(ctx, vq)
		if err != nil {
			return err
		}
		j.view = view
		j.q = tallyView(m, view, facts, now)
		switch {
		case view.Open == nil && j.q.Outage && !j.q.LastMileOnly:
			inc, err := e.openIncident(ctx, tx, m, j.q, now)
			if err != nil {
				return err
			}
			j.opened, j.view.Open = &inc, &inc
		case view.Open != nil && view.Open.Cause != store.CauseManual && j.q.Recovered:
			inc, err := e.resolveIncident(ctx, tx, m, *view.Open, now)
			if err != nil {
				return err
			}
			j.resolved, j.view.Open = &inc, nil
		}
		return e.keepState(ctx, tx, m, &j, now)
	})
	if err != nil {
		return err
	}
	e.afterJudgement(ctx, m, st, j, now)
	return nil
}

// SweepMonitors judges every monitor from the store; the leader calls it
// periodically. Results reach every replica, but only the leader runs the
// Monitor controller: the sweep refreshes its status from results other
// replicas stored, and judges the changes that time alone makes (a region
// whose results stopped goes stale and abstains, a warm-up ends) even when
// no new result arrives.
func (e *Engine) SweepMonitors(ctx context.Context) error { return e.sweep(ctx, 0, true) }

// sweep judges the monitors whose state time alone can change: those with
// an open incident or a judgement document (a last-mile notice, failing
// votes being watched; see judgementState.Watch), found in one store read
// (Store.AllUnsettledMonitors). Every other monitor has only passing votes
// and no incident: staleness or a warm-up's end cannot confirm an outage
// from passing votes, so it is not judged, and its status is refreshed at
// the usual pace. A view read for each of 100,000 monitors was a third of
// the manager's CPU. A full sweep (all) judges every monitor: the first
// one of an engine, which also covers monitors whose failing votes were
// stored before the watch mark existed, and one after a failed read.
// rate > 0 paces the judgements to at most rate a second (wall clock), so
// that a large fleet costs a bounded share of the CPU and the store.
func (e *Engine) sweep(ctx context.Context, rate float64, all bool) error {
	var list monv1.MonitorList
	// Judgements only read the monitors (withRegions copies before it
	// changes one), so the cache's objects are not copied: 100,000 deep
	// copies per sweep were the sweep's largest garbage.
	if err := e.opts.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list monitors: %w", err)
	}
	var unsettled map[string]bool
	if !all {
		var err error
		if unsettled, err = e.opts.Store.AllUnsettledMonitors(ctx); err != nil {
			e.opts.Log.Error(err, "read unsettled monitors; judging each")
		}
	}
	start := time.Now()
	judged := 0
	for i := range list.Items {
		m := &list.Items[i]
		if unsettled != nil && !unsettled[string(m.UID)] {
			e.refreshSettled(m, e.opts.Now())
			continue
		}
		if rate > 0 && judged%100 == 0 {
			due := time.Duration(float64(judged) / rate * float64(time.Second))
			if !sleepCtx(ctx, due-time.Since(start)) {
				return ctx.Err()
			}
		}
		judged++
		if err := e.judge(ctx, m, false, false); err != nil {
			e.opts.Log.Error(err, "judge monitor", "monitor", m.Name, "namespace", m.Namespace)
		}
	}
	return nil
}

// refreshSettled asks for the status refresh of a settled monitor when it
// is due (refreshEvery): its status shows results other replicas stored.
func (e *Engine) refreshSettled(m *monv1.Monitor, now time.Time) {
	if m.Spec.Paused || !m.DeletionTimestamp.IsZero() {
		return
	}
	st := e.state(string(m.UID))
	st.mu.Lock()
	defer st.mu.Unlock()
	e.pushKey(m, st, st.pushedKey, now)
}

// tallyView counts the votes of a store view.
func tallyView(m *monv1.Monitor, view store.MonitorView, facts RegionFacts, now time.Time) Quorum {
	verdicts := make(map[string]store.Check, len(view.Checks))
	for _, c := range view.Checks {
		verdicts[c.Region] = c
	}
	var since time.Time
	if view.RunSince != nil {
		since = *view.RunSince
	}
	return Tally(m, verdicts, since, facts, now)
}

// latestOf is the newest check of a view, nil when it has none.
func latestOf(view store.MonitorView) *store.Check {
	var last *store.Check
	for i := range view.Checks {
		if c := &view.Checks[i]; last == nil || c.CheckedAt.After(last.CheckedAt) {
			last = c
		}
	}
	return last
}

// openIncident opens an incident confirmed by q in tx, with its alert
// events.
func (e *Engine) openIncident(ctx context.Context, tx store.JudgeTx, m *monv1.Monitor, q Quorum, now time.Time) (store.Incident, error) {
	started := q.FirstFailure
	if started.IsZero() {
		started = now
	}
	inc := store.Incident{
		ID: newID(), Namespace: m.Namespace, MonitorID: string(m.UID), MonitorName: m.Spec.Name,
		MonitorURL: target(m), MonitorType: string(m.Spec.Type), StartedAt: started,
		Confirmations: len(q.FailingRegions), ConfirmingRegions: q.FailingRegions, RegionsTotal: q.Total,
		Cause: q.Cause,
	}
	recent, err := tx.OpenedSince(ctx, now.Add(-time.Hour))
	if err != nil {
		return inc, err
	}
	inc.IsFlapping = recent+1 >= FlapOpens
	if reason, ok, err := e.suppressed(ctx, m, now); err != nil {
		return inc, err
	} else if ok {
		inc.AlertSuppressed, inc.SuppressionReason = true, reason
	}
	var events []store.OutboxEvent
	if !inc.AlertSuppressed && e.opts.Alerts != nil {
		events, err = e.opts.Alerts.IncidentEvents(ctx, alertevent.MonitorDown, m, inc, alertevent.Decision{
			Region: firstOr(q.FailingRegions, ""), Reason: q.Reason, Explanation: q.Summary(),
		})
		if err != nil {
			return inc, fmt.Errorf("build down event: %w", err)
		}
	}
	return tx.Open(ctx, inc, events...)
}

// resolveIncident resolves the open incident inc in tx, with its alert
// events.
func (e *Engine) resolveIncident(ctx context.Context, tx store.JudgeTx, m *monv1.Monitor, inc store.Incident, now time.Time) (store.Incident, error) {
	var events []store.OutboxEvent
	if !inc.AlertSuppressed && e.opts.Alerts != nil && !snoozed(inc, now) {
		resolved := inc
		resolved.ResolvedAt = &now
		var err error
		if events, err = e.opts.Alerts.IncidentEvents(ctx, alertevent.MonitorUp, m, resolved, alertevent.Decision{}); err != nil {
			return inc, fmt.Errorf("build up event: %w", err)
		}
	}
	return tx.Resolve(ctx, inc.ID, now, events...)
}

// afterJudgement records a committed judgement's decisions outside the
// store and refreshes the monitor's status.
func (e *Engine) afterJudgement(ctx context.Context, m *monv1.Monitor, st *monitorState, j judgement, now time.Time) {
	if inc := j.opened; inc != nil {
		metrics.IncidentsOpened.WithLabelValues(strconv.FormatBool(inc.AlertSuppressed)).Inc()
		RecordIncidentEvent(e.opts.Recorder, m, true, inc.ID)
		if e.opts.Subscribers != nil && !inc.AlertSuppressed {
			if err := e.opts.Subscribers.IncidentOpened(ctx, m.Namespace, string(m.UID), inc.ID); err != nil {
				e.opts.Log.Error(err, "notify status page subscribers")
			}
		}
		e.opts.Log.Info("incident opened", "monitor", m.Name, "namespace", m.Namespace, "incident", inc.ID,
			"regions", inc.ConfirmingRegions, "suppressed", inc.AlertSuppressed)
	}
	if inc := j.resolved; inc != nil {
		metrics.IncidentsResolved.WithLabelValues("recovered").Inc()
		RecordIncidentEvent(e.opts.Recorder, m, false, inc.ID)
		if e.opts.Subscribers != nil && !inc.AlertSuppressed {
			if err := e.opts.Subscribers.IncidentResolved(ctx, m.Namespace, string(m.UID), inc.ID); err != nil {
				e.opts.Log.Error(err, "notify status page subscribers")
			}
		}
		e.opts.Log.Info("incident resolved", "monitor", m.Name, "namespace", m.Namespace, "incident", inc.ID)
	}
	e.maybePush(m, st, j.view, now)
}

// suppressed reports whether alerts of a new incident are suppressed, and why.
func (e *Engine) suppressed(ctx context.Context, m *monv1.Monitor, now time.Time) (string, bool, error) {
	in, err := e.underMaintenance(ctx, m, now)
	if err != nil {
		return "", false, err
	}
	if in {
		return "maintenance", true, nil
	}
	for _, ref := range m.Spec.DependsOn {
		var parent monv1.Monitor
		if err := e.opts.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}, &parent); err != nil {
			continue // a deleted parent suppresses nothing
		}
		if _, err := e.opts.Store.GetOpenIncident(ctx, string(parent.UID)); err == nil {
			return "parent dependency down: " + ref.Name, true, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return "", false, fmt.Errorf("read parent incident: %w", err)
		}
	}
	return "", false, nil
}

// underMaintenance reports whether a maintenance window covers m now.
func (e *Engine) underMaintenance(ctx context.Context, m *monv1.Monitor, now time.Time) (bool, error) {
	var list monv1.MaintenanceWindowList
	if err := e.opts.Client.List(ctx, &list, client.InNamespace(m.Namespace)); err != nil {
		return false, fmt.Errorf("list maintenance windows: %w", err)
	}
	for i := range list.Items {
		w := &list.Items[i]
		if !maintenance.Covers(&w.Spec, m) {
			continue
		}
		if occ, ok := maintenance.Current(&w.Spec, now); ok && !now.Before(occ.Start) {
			return true, nil
		}
	}
	return false, nil
}

// regionFacts reads the ISPs of last-mile vantage points and which regions
// have an agent online: in contact with this replica, with any replica
// (shared through the store), or as the ProbeRegion status says.
func (e *Engine) regionFacts(ctx context.Context) (RegionFacts, error) {
	var list monv1.ProbeRegionList
	if err := e.opts.Client.List(ctx, &list); err != nil {
		return RegionFacts{}, fmt.Errorf("list probe regions: %w", err)
	}
	facts := RegionFacts{ISP: map[string]string{}, Online: map[string]bool{}, Created: map[string]time.Time{}}
	shared := e.sharedOnline(ctx)
	for _, r := range list.Items {
		code := monitor.RegionCode(&r)
		facts.Created[code] = r.CreationTimestamp.Time
		if r.Spec.ISP != "" {
			facts.ISP[code] = r.Spec.ISP
		}
		if n, _ := e.agentsOnline(code); n > 0 || r.Status.Online || shared[code] > 0 {
			facts.Online[code] = true
		}
	}
	return facts, nil
}

// idleState is the judgement document of a monitor with no open incident
// and no last-mile notice whose votes are q: watchDoc while some fail,
// none otherwise.
func idleState(q Quorum) []byte {
	if len(q.FailingRegions) > 0 {
		return watchDoc
	}
	return nil
}

// keepState keeps the monitor's judgement document: it emits
// last_mile.unreachable when only ISP vantage points fail while data-centre
// regions reach the target, and last_mile.recovered when they reach it
// again (no incident is opened for such failures), and marks the monitor
// watched while votes fail without an open incident (judgementState.Watch).
// The document is in the store, so whichever replica judges next knows it;
// it is written only when it changes.
func (e *Engine) keepState(ctx context.Context, tx store.JudgeTx, m *monv1.Monitor, j *judgement, now time.Time) error {
	var state judgementState
	if len(j.view.State) > 0 {
		if err := json.Unmarshal(j.view.State, &state); err != nil {
			e.opts.Log.Error(err, "decode judgement state; starting afresh", "monitor", m.Name)
			state = judgementState{}
		}
	}
	q := j.q
	switch {
	case state.LastMile == nil && q.LastMileOnly && len(q.FailingRegions) > 0:
		state.LastMile = &lastMile{NoticeID: newID(), Since: now, ISPs: q.FailingISPs}
		if err := e.notice(ctx, tx, alertevent.LastMileUnreachable, m, state.LastMile, q); err != nil {
			return err
		}
	case state.LastMile != nil && len(q.FailingISPs) == 0:
		if err := e.notice(ctx, tx, alertevent.LastMileRecovered, m, state.LastMile, q); err != nil {
			return err
		}
		state.LastMile = nil
	}
	state.Watch = j.view.Open == nil && len(q.FailingRegions) > 0
	var doc []byte
	if state.LastMile != nil || state.Watch {
		var err error
		if doc, err = json.Marshal(state); err != nil {
			return fmt.Errorf("encode judgement state: %w", err)
		}
	}
	if bytes.Equal(doc, j.view.State) {
		return nil
	}
	j.view.State = doc
	return tx.SetState(ctx, doc)
}

func (e *Engine) notice(ctx context.Context, tx store.JudgeTx, kind string, m *monv1.Monitor, lm *lastMile, q Quorum) error {
	if e.opts.Alerts == nil {
		return nil
	}
	alerts, ok := e.opts.Alerts.(LastMileAlerts)
	if !ok {
		return nil
	}
	events, err := alerts.LastMileEvents(ctx, kind, m, alertevent.LastMileNotice{
		NoticeID: lm.NoticeID, Since: lm.Since, ISPs: lm.ISPs, FailingRegions: q.FailingRegions,
	})
	if err != nil {
		return fmt.Errorf("build %s event: %w", kind, err)
	}
	return tx.Enqueue(ctx, events...)
}

// LastMileAlerts is implemented by Alerts that send last-mile notices.
type LastMileAlerts interface {
	LastMileEvents(ctx context.Context, kind string, m *monv1.Monitor, n alertevent.LastMileNotice) ([]store.OutboxEvent, error)
}

func snoozed(inc store.Incident, now time.Time) bool {
	return inc.SnoozedUntil != nil && now.Before(*inc.SnoozedUntil)
}

// FlapOpens incidents started within an hour mark the newest as flapping.
const FlapOpens = 3

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

func target(m *monv1.Monitor) string {
	if m.Status.Target != "" {
		return m.Status.Target
	}
	return m.Spec.URL
}

// DefaultStatusRefreshRate is how many unchanged Monitor statuses are
// refreshed per second at most, across all monitors. Every refresh is a
// status write to kube-apiserver (and etcd) and a reconcile that reads the
// store: unbounded, 100,000 monitors at a 60 s interval would write 1,667
// statuses a second, more than a small control plane takes. At this rate
// up to 1,500 monitors keep the 30 s StatusInterval; 100,000 refresh every
// 2,000 s, while a change (up to down, an incident) is written at once.
const DefaultStatusRefreshRate = 50

// refreshEvery is the interval between refreshes of an unchanged status:
// StatusInterval, or longer when the monitors this replica judges would
// exceed StatusRefreshRate.
func (e *Engine) refreshEvery() time.Duration {
	e.mu.Lock()
	n := len(e.monitors)
	e.mu.Unlock()
	return max(e.opts.StatusInterval, time.Duration(float64(n)/e.opts.StatusRefreshRate*float64(time.Second)))
}

// maybePush asks the Monitor controller to refresh status: at once when the
// store's view of the monitor changed, else at most every refreshEvery. A
// request the controller's channel had no room for is asked again at the
// monitor's next judgement.
func (e *Engine) maybePush(m *monv1.Monitor, st *monitorState, view store.MonitorView, now time.Time) {
	st.see(view.Checks, true)
	open := ""
	if view.Open != nil {
		open = view.Open.ID
	}
	e.pushKey(m, st, st.key(open), now)
}

// pushSettled is maybePush for a settled monitor (no open incident, no
// judgement document) after this replica stored its passing results cs,
// which are not judged: a change of a region's status (up to degraded)
// still shows at once.
func (e *Engine) pushSettled(m *monv1.Monitor, cs []store.Check, now time.Time) {
	st := e.state(string(m.UID))
	st.mu.Lock()
	defer st.mu.Unlock()
	st.see(cs, false)
	e.pushKey(m, st, st.key(""), now)
}

// pushKey asks for a status refresh when key differs from the last one
// pushed or refreshEvery has passed.
func (e *Engine) pushKey(m *monv1.Monitor, st *monitorState, key string, now time.Time) {
	if key != st.pushedKey || now.Sub(st.lastPush) >= e.refreshEvery() {
		if e.push(m, st, now) {
			st.pushedKey = key
		}
	}
}

// see records the regions' statuses of checks: all of them (a store view,
// which has the newest check of every region that has one) or only newer
// ones (ingested results).
func (st *monitorState) see(checks []store.Check, all bool) {
	if all {
		st.seen = st.seen[:0]
	}
	for _, c := range checks {
		i, found := slices.BinarySearchFunc(st.seen, c.Region, func(r regionStatus, region string) int {
			return strings.Compare(r.region, region)
		})
		switch {
		case !found:
			st.seen = slices.Insert(st.seen, i, regionStatus{region: c.Region, status: c.Status, at: c.CheckedAt})
		case !c.CheckedAt.Before(st.seen[i].at):
			st.seen[i].status, st.seen[i].at = c.Status, c.CheckedAt
		}
	}
}

// key is what a status shows of the regions' statuses and the open
// incident: the newest status, each region's, the incident's id.
func (st *monitorState) key(open string) string {
	var b strings.Builder
	var newest *regionStatus
	for i := range st.seen {
		if r := &st.seen[i]; newest == nil || r.at.After(newest.at) {
			newest = r
		}
	}
	if newest != nil {
		b.WriteString(string(newest.status))
	}
	for _, r := range st.seen {
		b.WriteString("," + r.region + "=" + string(r.status))
	}
	if open != "" {
		b.WriteString("/" + open)
	}
	return b.String()
}

// push asks for a status refresh and reports whether the request was
// queued; when the controller is that far behind, it is dropped.
func (e *Engine) push(m *monv1.Monitor, st *monitorState, now time.Time) bool {
	obj := &monv1.Monitor{}
	obj.Name, obj.Namespace = m.Name, m.Namespace
	select {
	case e.updates <- event.TypedGenericEvent[*monv1.Monitor]{Object: obj}:
		st.lastPush = now
		return true
	default:
		return false
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// withRegions returns m, or a copy of it naming the regions it runs in when
// its status does not name them yet. The Monitor controller's status writes
// are paced (after a bulk create or a restart a first write can come
// minutes later), while the agents check such a Monitor at once from its
// plan's default regions (monitor.RegionResolver); its results must be
// judged as they come, not once the status is written.
func (e *Engine) withRegions(ctx context.Context, m *monv1.Monitor) *monv1.Monitor {
	if e.opts.Plans == nil || len(monitorRegions(m)) > 0 {
		return m
	}
	r := &monitor.RegionResolver{Reader: e.opts.Client, Plans: e.opts.Plans}
	rs := r.Regions(ctx, m)
	if len(rs) == 0 {
		return m
	}
	m = m.DeepCopy()
	m.Status.EffectiveRegions = rs
	return m
}
