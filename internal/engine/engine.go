package engine

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/maintenance"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/webhooks"
)

// Alerts builds the outbox events of an incident state change: the payload
// and the channels whose routing covers the monitor. The alerting package
// implements it; nil means no alerts.
type Alerts interface {
	IncidentEvents(ctx context.Context, kind string, m *monv1.Monitor, inc store.Incident, d Decision) ([]store.OutboxEvent, error)
}

// Decision is what the engine tells Alerts about a state change.
type Decision struct {
	// Region is the label of a region that reported the failure.
	Region string
	// Reason is the failure reason (down events) or empty.
	Reason string
	// Explanation is a one-line verdict for down events.
	Explanation string
}

// Event kinds the engine emits.
const (
	EventMonitorDown      = "monitor.down"
	EventMonitorUp        = "monitor.up"
	EventIncidentResolved = "incident.resolved"
	EventLastMileDown     = "last_mile.unreachable"
	EventLastMileUp       = "last_mile.recovered"
)

// HeartbeatRegion is the pseudo-region of cron heartbeats: the manager judges
// them itself, so there is exactly one voter.
const HeartbeatRegion = "heartbeat"

// Options configure an Engine.
type Options struct {
	// Store holds history.
	Store store.Store
	// Client reads Monitors, regions and windows from the cache.
	Client client.Client
	// Secrets reads Secrets directly.
	Secrets SecretReader
	// Alerts builds alert events; nil disables alerts.
	Alerts Alerts
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// AllowPrivateTargets applies to ad-hoc checks run by the manager.
	AllowPrivateTargets bool
	// StatusInterval throttles Monitor status refreshes while nothing
	// changes (default 30 s).
	StatusInterval time.Duration
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
}

// CheckExporter forwards stored checks (the OTLP telemetry export).
type CheckExporter interface {
	Export(ctx context.Context, ns string, checks []store.Check)
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

	probe probeState
}

// monitorState is the engine's memory of one monitor. Its mutex serialises
// evaluation so that one replica makes one decision per change.
type monitorState struct {
	mu       sync.Mutex
	loaded   bool
	regions  map[string]verdict
	last     *verdict
	open     *store.Incident
	opens    []time.Time
	lastMile *lastMile
	// lastPush and pushedKey throttle status refreshes.
	lastPush  time.Time
	pushedKey string
	// lastPing is the last heartbeat of a cron monitor.
	lastPing *time.Time
	// pausedSeen and resumedAt follow pause changes of a cron monitor made
	// in its spec (kubectl), which leave no pause window in the store: the
	// schedule restarts at the resume.
	pausedSeen bool
	resumedAt  *time.Time
}

type verdict struct {
	Region    string
	Status    string
	CheckedAt time.Time
	Code      *int
	RTMs      int64
	ErrType   string
	ErrMsg    string
}

type lastMile struct {
	NoticeID string
	Since    time.Time
	ISPs     []string
}

// New returns an engine.
func New(opts Options) *Engine {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.StatusInterval == 0 {
		opts.StatusInterval = 30 * time.Second
	}
	if opts.Log.GetSink() == nil {
		opts.Log = logr.Discard()
	}
	return &Engine{
		opts:     opts,
		monitors: map[string]*monitorState{},
		updates:  make(chan event.TypedGenericEvent[*monv1.Monitor], 4096),
		probe:    newProbeState(),
	}
}

// Updates is the channel the Monitor controller watches: the engine sends a
// monitor when its status should be refreshed.
func (e *Engine) Updates() <-chan event.TypedGenericEvent[*monv1.Monitor] { return e.updates }

func (e *Engine) state(uid string) *monitorState {
	e.mu.Lock()
	defer e.mu.Unlock()
	st, ok := e.monitors[uid]
	if !ok {
		st = &monitorState{regions: map[string]verdict{}}
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

// load rebuilds a monitor's state from the store after a restart: the
// latest check of each region and the open incident.
func (e *Engine) load(ctx context.Context, m *monv1.Monitor, st *monitorState) error {
	if st.loaded {
		return nil
	}
	latest, err := e.opts.Store.LatestChecks(ctx, string(m.UID))
	if err != nil {
		return fmt.Errorf("load latest checks: %w", err)
	}
	for _, c := range latest {
		v := verdictOf(c)
		st.regions[c.Region] = v
		if st.last == nil || v.CheckedAt.After(st.last.CheckedAt) {
			vv := v
			st.last = &vv
		}
	}
	inc, err := e.opts.Store.GetOpenIncident(ctx, string(m.UID))
	switch {
	case err == nil:
		st.open = &inc
	case errors.Is(err, store.ErrNotFound):
	default:
		return fmt.Errorf("load open incident: %w", err)
	}
	if m.Spec.Type == monv1.MonitorCron {
		pings, err := e.opts.Store.ListHeartbeats(ctx, string(m.UID), 1)
		if err != nil {
			return fmt.Errorf("load heartbeats: %w", err)
		}
		if len(pings) > 0 {
			t := pings[0].At
			st.lastPing = &t
		}
	}
	st.loaded = true
	return nil
}

func verdictOf(c store.Check) verdict {
	return verdict{Region: c.Region, Status: string(c.Status), CheckedAt: c.CheckedAt, Code: c.StatusCode,
		RTMs: c.ResponseTimeMs, ErrType: c.ErrorType, ErrMsg: c.ErrorMessage}
}

// Ingest stores a batch of results (idempotently by id) and evaluates every
// monitor it touches. Results of unknown monitors are dropped.
func (e *Engine) Ingest(ctx context.Context, results []probeapi.Result) (probeapi.ResultsResponse, error) {
	monitors := map[string]*monv1.Monitor{}
	checks := make([]store.Check, 0, len(results))
	skip := e.claimAdHoc(results)
	for _, r := range results {
		if skip[r.ID] {
			continue
		}
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
			ErrorType: r.ErrorType, ErrorMessage: r.ErrorMessage, Details: r.Details,
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
	if e.opts.TLS != nil {
		for _, r := range results {
			if r.TLS == nil || monitors[r.MonitorID] == nil || skip[r.ID] {
				continue
			}
			if err := e.opts.TLS.ObserveTLS(ctx, r.MonitorID, r.Region, r.CheckedAt.UTC(), *r.TLS); err != nil {
				e.opts.Log.Error(err, "record certificate", "monitor", r.MonitorID)
			}
		}
	}
	metrics.DuplicateResults.Add(float64(len(checks) - inserted))
	sort.Slice(checks, func(i, j int) bool { return checks[i].CheckedAt.Before(checks[j].CheckedAt) })
	byMonitor := map[string][]store.Check{}
	for _, c := range checks {
		byMonitor[c.MonitorID] = append(byMonitor[c.MonitorID], c)
	}
	for uid, cs := range byMonitor {
		m := monitors[uid]
		if e.opts.Export != nil {
			e.opts.Export.Export(ctx, m.Namespace, cs)
		}
		if err := e.observe(ctx, m, cs); err != nil {
			e.opts.Log.Error(err, "evaluate monitor", "monitor", m.Name, "namespace", m.Namespace)
		}
		e.recordDNS(ctx, m, cs)
	}
	return probeapi.ResultsResponse{Accepted: inserted, Duplicates: len(results) - inserted}, nil
}

// observe folds new checks of one monitor into its state and evaluates it.
func (e *Engine) observe(ctx context.Context, m *monv1.Monitor, checks []store.Check) error {
	st := e.state(string(m.UID))
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := e.load(ctx, m, st); err != nil {
		return err
	}
	for _, c := range checks {
		v := verdictOf(c)
		if old, ok := st.regions[c.Region]; ok && !v.CheckedAt.After(old.CheckedAt) {
			continue // an older or repeated result must not overwrite a newer verdict
		}
		st.regions[c.Region] = v
		if st.last == nil || v.CheckedAt.After(st.last.CheckedAt) {
			vv := v
			st.last = &vv
		}
	}
	return e.evaluate(ctx, m, st)
}

// monitorByUID finds a Monitor in the cache; nil when it does not exist.
func (e *Engine) monitorByUID(ctx context.Context, uid string) (*monv1.Monitor, error) {
	var list monv1.MonitorList
	if err := e.opts.Client.List(ctx, &list, client.MatchingFields{UIDIndex: uid}); err != nil {
		return nil, fmt.Errorf("find monitor %s: %w", uid, err)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return &list.Items[0], nil
}

// UIDIndex is the cache field index of Monitors by metadata.uid.
const UIDIndex = "metadata.uid"

// evaluate applies the quorum rule to the monitor's latest verdicts and opens
// or resolves its incident. Callers hold st.mu.
func (e *Engine) evaluate(ctx context.Context, m *monv1.Monitor, st *monitorState) error {
	if m.Spec.Paused || !m.DeletionTimestamp.IsZero() {
		return nil
	}
	now := e.opts.Now()
	facts, err := e.regionFacts(ctx)
	if err != nil {
		return err
	}
	q := Tally(m, st.regions, facts, now)
	switch {
	case st.open == nil && q.Outage && !q.LastMileOnly:
		if err := e.openIncident(ctx, m, st, q, now); err != nil {
			return err
		}
	case st.open != nil && !st.open.ResolvedManually && q.Recovered:
		if err := e.resolveIncident(ctx, m, st, now); err != nil {
			return err
		}
	}
	if err := e.lastMileNotice(ctx, m, st, q, now); err != nil {
		return err
	}
	e.maybePush(m, st, now)
	return nil
}

func (e *Engine) openIncident(ctx context.Context, m *monv1.Monitor, st *monitorState, q Quorum, now time.Time) error {
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
	st.opens = append(pruneBefore(st.opens, now.Add(-time.Hour)), now)
	inc.IsFlapping = len(st.opens) >= FlapOpens
	if reason, ok, err := e.suppressed(ctx, m, now); err != nil {
		return err
	} else if ok {
		inc.AlertSuppressed, inc.SuppressionReason = true, reason
	}
	var events []store.OutboxEvent
	if !inc.AlertSuppressed && e.opts.Alerts != nil {
		var err error
		events, err = e.opts.Alerts.IncidentEvents(ctx, EventMonitorDown, m, inc, Decision{
			Region: firstOr(q.FailingRegions, ""), Reason: q.Reason, Explanation: q.Summary(),
		})
		if err != nil {
			return fmt.Errorf("build down event: %w", err)
		}
	}
	opened, err := e.opts.Store.OpenIncident(ctx, inc, events...)
	switch {
	case errors.Is(err, store.ErrIncidentOpen):
		// Another replica (or a manual open) won: adopt its incident.
		existing, gerr := e.opts.Store.GetOpenIncident(ctx, string(m.UID))
		if gerr != nil {
			return fmt.Errorf("read open incident: %w", gerr)
		}
		st.open = &existing
		return nil
	case err != nil:
		return fmt.Errorf("open incident: %w", err)
	}
	st.open = &opened
	metrics.IncidentsOpened.WithLabelValues(strconv.FormatBool(inc.AlertSuppressed)).Inc()
	RecordIncidentEvent(e.opts.Recorder, m, true, opened.ID)
	if e.opts.Subscribers != nil && !inc.AlertSuppressed {
		if err := e.opts.Subscribers.IncidentOpened(ctx, m.Namespace, string(m.UID), opened.ID); err != nil {
			e.opts.Log.Error(err, "notify status page subscribers")
		}
	}
	e.opts.Log.Info("incident opened", "monitor", m.Name, "namespace", m.Namespace, "incident", opened.ID,
		"regions", q.FailingRegions, "suppressed", inc.AlertSuppressed)
	e.push(m, st, now)
	return nil
}

func (e *Engine) resolveIncident(ctx context.Context, m *monv1.Monitor, st *monitorState, now time.Time) error {
	inc := *st.open
	var events []store.OutboxEvent
	if !inc.AlertSuppressed && e.opts.Alerts != nil && !snoozed(inc, now) {
		resolved := inc
		resolved.ResolvedAt = &now
		var err error
		if events, err = e.opts.Alerts.IncidentEvents(ctx, EventMonitorUp, m, resolved, Decision{}); err != nil {
			return fmt.Errorf("build up event: %w", err)
		}
	}
	_, err := e.opts.Store.ResolveIncident(ctx, inc.ID, now, false, "", events...)
	if err != nil && !errors.Is(err, store.ErrIncidentResolved) {
		return fmt.Errorf("resolve incident: %w", err)
	}
	metrics.IncidentsResolved.WithLabelValues("recovered").Inc()
	RecordIncidentEvent(e.opts.Recorder, m, false, inc.ID)
	if e.opts.Subscribers != nil && !inc.AlertSuppressed {
		if err := e.opts.Subscribers.IncidentResolved(ctx, m.Namespace, string(m.UID), inc.ID); err != nil {
			e.opts.Log.Error(err, "notify status page subscribers")
		}
	}
	e.opts.Log.Info("incident resolved", "monitor", m.Name, "namespace", m.Namespace, "incident", inc.ID)
	st.open = nil
	e.push(m, st, now)
	return nil
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
// have an agent online, from this engine's contacts or the ProbeRegion
// status another replica wrote.
func (e *Engine) regionFacts(ctx context.Context) (RegionFacts, error) {
	var list monv1.ProbeRegionList
	if err := e.opts.Client.List(ctx, &list); err != nil {
		return RegionFacts{}, fmt.Errorf("list probe regions: %w", err)
	}
	facts := RegionFacts{ISP: map[string]string{}, Online: map[string]bool{}}
	for _, r := range list.Items {
		code := webhooks.RegionCode(&r)
		if r.Spec.ISP != "" {
			facts.ISP[code] = r.Spec.ISP
		}
		if n, _ := e.AgentsOnline(code, agentOnlineWindow); n > 0 || r.Status.Online {
			facts.Online[code] = true
		}
	}
	return facts, nil
}

// lastMileNotice emits last_mile.unreachable when only ISP vantage points
// fail while data-centre regions reach the target, and last_mile.recovered
// when they reach it again. No incident is opened for such failures.
func (e *Engine) lastMileNotice(ctx context.Context, m *monv1.Monitor, st *monitorState, q Quorum, now time.Time) error {
	switch {
	case st.lastMile == nil && q.LastMileOnly && len(q.FailingRegions) > 0:
		st.lastMile = &lastMile{NoticeID: newID(), Since: now, ISPs: q.FailingISPs}
		return e.notice(ctx, EventLastMileDown, m, st, q)
	case st.lastMile != nil && len(q.FailingISPs) == 0:
		err := e.notice(ctx, EventLastMileUp, m, st, q)
		st.lastMile = nil
		return err
	}
	return nil
}

func (e *Engine) notice(ctx context.Context, kind string, m *monv1.Monitor, st *monitorState, q Quorum) error {
	if e.opts.Alerts == nil {
		return nil
	}
	lm, ok := e.opts.Alerts.(LastMileAlerts)
	if !ok {
		return nil
	}
	events, err := lm.LastMileEvents(ctx, kind, m, LastMileNotice{
		NoticeID: st.lastMile.NoticeID, Since: st.lastMile.Since, ISPs: st.lastMile.ISPs, FailingRegions: q.FailingRegions,
	})
	if err != nil {
		return fmt.Errorf("build %s event: %w", kind, err)
	}
	return e.opts.Store.EnqueueEvents(ctx, events...)
}

// LastMileAlerts is implemented by Alerts that send last-mile notices.
type LastMileAlerts interface {
	LastMileEvents(ctx context.Context, kind string, m *monv1.Monitor, n LastMileNotice) ([]store.OutboxEvent, error)
}

// LastMileNotice describes one last-mile outage.
type LastMileNotice struct {
	NoticeID       string
	Since          time.Time
	ISPs           []string
	FailingRegions []string
}

func snoozed(inc store.Incident, now time.Time) bool {
	return inc.SnoozedUntil != nil && now.Before(*inc.SnoozedUntil)
}

// FlapOpens incidents opened within an hour mark the newest as flapping.
const FlapOpens = 3

func pruneBefore(ts []time.Time, cutoff time.Time) []time.Time {
	out := ts[:0]
	for _, t := range ts {
		if t.After(cutoff) {
			out = append(out, t)
		}
	}
	return out
}

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

// maybePush asks the Monitor controller to refresh status: at once when the
// state changed, else at most every StatusInterval.
func (e *Engine) maybePush(m *monv1.Monitor, st *monitorState, now time.Time) {
	key := ""
	if st.last != nil {
		key = st.last.Status
	}
	for _, code := range sortedKeys(st.regions) {
		key += "," + code + "=" + st.regions[code].Status
	}
	if st.open != nil {
		key += "/" + st.open.ID
	}
	if key != st.pushedKey || now.Sub(st.lastPush) >= e.opts.StatusInterval {
		e.push(m, st, now)
		st.pushedKey = key
	}
}

func (e *Engine) push(m *monv1.Monitor, st *monitorState, now time.Time) {
	st.lastPush = now
	obj := &monv1.Monitor{}
	obj.Name, obj.Namespace = m.Name, m.Namespace
	select {
	case e.updates <- event.TypedGenericEvent[*monv1.Monitor]{Object: obj}:
	default: // the controller is behind; its next pass reads the latest state anyway
	}
}

func sum256(b []byte) [32]byte { return sha256.Sum256(b) }

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
