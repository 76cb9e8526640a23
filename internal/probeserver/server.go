package probeserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/assign"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// RegionTokenKey is the data key of region token Secrets.
const RegionTokenKey = "token"

// Options configure a Server.
type Options struct {
	// Client reads Monitors (by monv1.UIDIndex) and ProbeRegions from the
	// cache and creates TokenReviews.
	Client client.Client
	// Plans resolves the plan of a monitor whose status does not name its
	// regions yet (nil: such a monitor waits for its status).
	Plans *plans.Resolver
	// Secrets reads region token Secrets directly.
	Secrets assign.SecretReader
	// ManagerNamespace holds region token Secrets by default and the
	// ServiceAccounts of managed regions' agents.
	ManagerNamespace string
	// Ingest stores and judges results (the engine).
	Ingest func(ctx context.Context, results []probeapi.Result) (probeapi.ResultsResponse, error)
	// Contact, when set, hears of every agent contact (the engine shares
	// them with the other replicas through the store).
	Contact func(region, agent string, at time.Time)
	// Report, when set, hears what every accepted push said of the results
	// its agent holds back: how many it still held and how many it
	// delivered late (the engine shares them through the store, for the
	// ProbeRegion status).
	Report func(region, agent string, at time.Time, backlog, replayed int)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Log receives the server's logs.
	Log logr.Logger
}

// Server is the manager side of the probe API. It tracks assignment changes
// (for long polls), agent contact and ad-hoc checks waiting for an agent.
type Server struct {
	opts Options
	// credentials reads the Secrets that assignments resolve.
	credentials assign.SecretReader
	// auth remembers who tokens are (see Authenticate).
	auth *authCache

	mu      sync.Mutex
	changed chan struct{}
	// gen counts Monitor and ProbeRegion changes; built[region] is the
	// list last built for a region, at some generation.
	gen   uint64
	built map[string]*builtList
	// building serializes list builds: agents of one region polling at
	// once find the list one of them built.
	building sync.Mutex
	// adhoc are one-off checks by request id.
	adhoc map[string]*adhocRequest
	// contact[region][agent] is the last time an agent of the region called.
	contact map[string]map[string]time.Time
	// backlog[region][agent] is what an agent of the region still held at
	// its last push (metrics.ProbeBacklog).
	backlog map[string]map[string]agentBacklog
}

// agentBacklog is the backlog an agent reported with a push, and when.
type agentBacklog struct {
	results int
	at      time.Time
}

// BacklogWindow is how recent an agent's push must be for its reported
// backlog to count in metrics.ProbeBacklog: the online window of agents.
const BacklogWindow = 90 * time.Second

// New returns a probe API server.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log.GetSink() == nil {
		opts.Log = logr.Discard()
	}
	s := &Server{opts: opts, changed: make(chan struct{}), contact: map[string]map[string]time.Time{}, backlog: map[string]map[string]agentBacklog{}, adhoc: map[string]*adhocRequest{},
		built: map[string]*builtList{}, auth: newAuthCache(opts.Now)}
	if opts.Secrets != nil {
		s.credentials = assign.NewSecretCache(opts.Secrets, assign.CredentialsTTL, opts.Now)
	}
	return s
}

var _ probeapi.Server = (*Server)(nil)

// AssignmentsChanged wakes every long poll so agents re-read their lists. The
// manager calls it on any Monitor, ProbeRegion or Secret change.
func (e *Server) AssignmentsChanged() {
	e.mu.Lock()
	e.gen++
	e.wakeLocked()
	e.mu.Unlock()
}

// wakeLocked wakes every long poll; e.mu is held.
func (e *Server) wakeLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

func (e *Server) changedCh() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.changed
}

func (e *Server) touchAgent(region, agent string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.contact[region] == nil {
		e.contact[region] = map[string]time.Time{}
	}
	now := e.opts.Now()
	e.contact[region][agent] = now
	if e.opts.Contact != nil {
		e.opts.Contact(region, agent, now)
	}
}

// AgentsOnline returns how many agents of region called within window and
// the last contact.
func (e *Server) AgentsOnline(region string, window time.Duration) (int, time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.opts.Now()
	n, last := 0, time.Time{}
	for _, t := range e.contact[region] {
		if now.Sub(t) <= window {
			n++
		}
		if t.After(last) {
			last = t
		}
	}
	return n, last
}

// Assignments long-polls for the region's assignment list.
func (p *Server) Assignments(ctx context.Context, region, known string) (*probeapi.AssignmentList, error) {
	p.touchAgent(region, agentFrom(ctx))
	for {
		changed := p.changedCh()
		list, err := p.AssignmentList(ctx, region)
		if err != nil {
			return nil, err
		}
		if list.Revision != known {
			return list, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, probeapi.ErrNotModified
		}
	}
}

// builtList is a region's assignment list as built at generation gen.
type builtList struct {
	gen         uint64
	at          time.Time
	took        time.Duration
	assignments []probeapi.Assignment
	browser     *probeapi.RegionBrowser
	revision    string
	// expires is when the credentials the build resolved may be stale
	// (assign.CredentialsTTL after it, by opts.Now); zero when it read no
	// Secret and left no monitor out, so only a change makes it stale.
	expires time.Time
}

// settle is how long after a build the next one waits for more changes:
// ten times what a build took, at least a second and at most ten. A bulk
// create or a restart changes Monitors many times a second, and each
// change woke every long poll into building the region's whole list (at
// 100,000 Monitors, O(N) work per create); coalesced, a build covers the
// changes of its settle time and costs at most about a tenth of a core.
func (b *builtList) settle() time.Duration {
	return min(max(time.Second, 10*b.took), 10*time.Second)
}

// AssignmentList computes the assignments of a region: every active,
// non-cron monitor whose effective regions include it. Monitors whose
// Secrets cannot be read are left out until they can. The list is built
// again only after a Monitor or ProbeRegion changed, and no sooner than
// the previous build's settle time; one-off checks are added at once.
func (e *Server) AssignmentList(ctx context.Context, region string) (*probeapi.AssignmentList, error) {
	b, err := e.regionList(ctx, region)
	if err != nil {
		return nil, err
	}
	list := &probeapi.AssignmentList{Region: region, Assignments: b.assignments, Browser: b.browser, Revision: b.revision}
	e.mu.Lock()
	for _, req := range e.adhoc {
		if req.region == region {
			list.AdHoc = append(list.AdHoc, req.check)
		}
	}
	e.mu.Unlock()
	if len(list.AdHoc) > 0 {
		slices.SortFunc(list.AdHoc, func(a, b probeapi.AdHocCheck) int { return strings.Compare(a.RequestID, b.RequestID) })
		ids := make([]string, len(list.AdHoc))
		for i, c := range list.AdHoc {
			ids[i] = c.RequestID
		}
		list.Revision += "+" + strings.Join(ids, ",")
	}
	return list, nil
}

// regionList returns region's list, building it when a change came after
// the last build, or when the last build is older than the credentials it
// resolved may be (assign.CredentialsTTL: Secrets are not watched, so a
// rotated header value or a Secret that now exists reaches the agents this
// way). A build that read no Secret and left no monitor out has no such
// age: at 100,000 Monitors rebuilding every region's list every 30 s for
// nothing took a tenth of the manager's CPU.
func (e *Server) regionList(ctx context.Context, region string) (*builtList, error) {
	e.building.Lock()
	defer e.building.Unlock()
	e.mu.Lock()
	b, gen := e.built[region], e.gen
	e.mu.Unlock()
	if b != nil && b.gen == gen && (b.expires.IsZero() || e.opts.Now().Before(b.expires)) {
		return b, nil
	}
	if b != nil && b.gen != gen {
		t := time.NewTimer(time.Until(b.at.Add(b.settle())))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		e.mu.Lock()
		gen = e.gen
		e.mu.Unlock()
	}
	start := time.Now()
	// The cache's own objects, not copies: this only reads them (an
	// assignment copies what it takes).
	var monitors monv1.MonitorList
	if err := e.opts.Client.List(ctx, &monitors, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list monitors: %w", err)
	}
	regions := &monitor.RegionResolver{Reader: e.opts.Client, Plans: e.opts.Plans}
	secrets := &secretReads{r: e.credentials}
	skipped := false
	assignments := assign.ForRegion(ctx, secrets, monitors.Items, region, regions, func(m *monv1.Monitor, err error) {
		skipped = true
		e.opts.Log.V(1).Info("monitor not assigned", "monitor", m.Name, "namespace", m.Namespace, "reason", err.Error())
	})
	browser, err := regionBrowser(ctx, e.opts.Client, region)
	if err != nil {
		return nil, err
	}
	b = &builtList{gen: gen, at: time.Now(), assignments: assignments, browser: browser, revision: assign.Revision(assignments)}
	if browser != nil {
		b.revision += fmt.Sprintf("/browser=%d,%s", browser.MaxConcurrent, browser.Endpoint)
	}
	b.took = b.at.Sub(start)
	if secrets.n > 0 || skipped {
		b.expires = e.opts.Now().Add(assign.CredentialsTTL)
	}
	e.mu.Lock()
	e.built[region] = b
	e.mu.Unlock()
	return b, nil
}

// regionBrowser is the browser settings of region's ProbeRegion, with the
// default concurrency filled in; nil when it sets none.
func regionBrowser(ctx context.Context, r client.Reader, region string) (*probeapi.RegionBrowser, error) {
	var list monv1.ProbeRegionList
	if err := r.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list probe regions: %w", err)
	}
	for i := range list.Items {
		pr := &list.Items[i]
		if monitor.RegionCode(pr) != region || pr.Spec.Browser == nil {
			continue
		}
		n := int(pr.Spec.Browser.MaxConcurrent)
		if n <= 0 {
			n = monv1.DefaultBrowserConcurrency
		}
		return &probeapi.RegionBrowser{Endpoint: pr.Spec.Browser.Endpoint, MaxConcurrent: n}, nil
	}
	return nil, nil
}

// secretReads counts the Secret reads of one build (a nil reader reads
// nothing and fails).
type secretReads struct {
	r assign.SecretReader
	n int
}

func (s *secretReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	s.n++
	if s.r == nil {
		return fmt.Errorf("no Secret reader for %s", key)
	}
	return s.r.Get(ctx, key, obj, opts...)
}

// adhocRequest is a one-off check waiting for its region's agent.
type adhocRequest struct {
	region string
	check  probeapi.AdHocCheck
	save   bool
	done   chan probeapi.Result
}

// RunOnAgent queues a one-off check for region's agents and waits for the
// result (or ctx). The agent runs it from its own vantage point.
func (e *Server) RunOnAgent(ctx context.Context, region string, a probeapi.Assignment, save bool) (probeapi.Result, error) {
	req := &adhocRequest{region: region, save: save, done: make(chan probeapi.Result, 1),
		check: probeapi.AdHocCheck{RequestID: uuid.NewString(), Assignment: a}}
	e.mu.Lock()
	e.adhoc[req.check.RequestID] = req
	// A one-off check changes no region's list: the long polls wake and
	// add it to the list they have.
	e.wakeLocked()
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.adhoc, req.check.RequestID)
		e.mu.Unlock()
	}()
	select {
	case res := <-req.done:
		return res, nil
	case <-ctx.Done():
		return probeapi.Result{}, fmt.Errorf("no result from region %s: %w", region, ctx.Err())
	}
}

// CheckOnResume queues one saved check of m in each of its regions, run as
// soon as the region's agents see their list: the spec's state table says a
// resumed monitor is "checked right away", and its next scheduled slot may be
// up to 15 minutes off. The engine calls it when it observes a Monitor's
// spec go from paused to active, so every way of resuming (REST, bulk, MCP,
// kubectl) gets it. A check no agent picks up within the monitor's interval
// is dropped: by then the scheduled check has run.
func (e *Server) CheckOnResume(m *monv1.Monitor) {
	if m.Spec.Paused || m.Spec.Type == monv1.MonitorCron || !m.DeletionTimestamp.IsZero() {
		return
	}
	m = m.DeepCopy()
	go func() {
		a, err := assign.ToAssignment(context.Background(), e.opts.Secrets, m)
		if err != nil {
			e.opts.Log.V(1).Info("resumed monitor not checked at once", "monitor", m.Name, "namespace", m.Namespace, "reason", err.Error())
			return
		}
		ttl := time.Duration(a.IntervalSeconds) * time.Second
		for _, region := range monitor.Regions(m) {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), ttl)
				defer cancel()
				_, _ = e.RunOnAgent(ctx, region, a, true)
			}()
		}
	}()
}

// ClaimAdHoc hands results of one-off checks queued for region to their
// waiters and reports, by result id, whether each claimed result is to be
// stored (a check on resume) or not (a test, a run-check that saves
// nothing). A check queued for another region is not answered from this
// one.
func (e *Server) ClaimAdHoc(region string, results []probeapi.Result) map[string]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	var claimed map[string]bool
	for _, r := range results {
		req, ok := e.adhoc[r.ID]
		if !ok || req.region != region {
			continue
		}
		select {
		case req.done <- r:
		default:
		}
		delete(e.adhoc, r.ID)
		if claimed == nil {
			claimed = map[string]bool{}
		}
		claimed[r.ID] = req.save
	}
	return claimed
}

// IngestResults stores and evaluates a batch from an agent of region.
// A batch or result naming another region is refused whole: an agent
// never sends one, so it is a forgery or a misconfigured agent, and it is
// logged. Results of one-off checks queued for region go to their waiters
// (and are stored when the check asked for it); of the others, those for
// a monitor the region does not check, or with an unknown status, are
// left out, counted and logged, so an agent holding a result of a monitor
// that moved away while it ran is not stuck with it.
func (p *Server) IngestResults(ctx context.Context, region string, batch *probeapi.ResultBatch) (probeapi.ResultsResponse, error) {
	if err := batch.CheckRegion(region); err != nil {
		metrics.ProbeRefusals.WithLabelValues(metrics.RefusedRegionMismatch).Add(float64(len(batch.Results)))
		p.opts.Log.Info("refused a result batch naming another region", "region", region, "agent", textutil.Truncate(batch.AgentID, 64),
			"reason", textutil.Truncate(err.Error(), 200))
		return probeapi.ResultsResponse{}, err
	}
	p.touchAgent(region, batch.AgentID)
	claimed := p.ClaimAdHoc(region, batch.Results)
	kept := make([]probeapi.Result, 0, len(batch.Results))
	var unassigned, unknown int
	regions := &monitor.RegionResolver{Reader: p.opts.Client, Plans: p.opts.Plans}
	checks := map[string]bool{}
	for _, r := range batch.Results {
		if save, ok := claimed[r.ID]; ok {
			if save {
				kept = append(kept, r)
			}
			continue
		}
		if !r.Status.Known() {
			unknown++
			continue
		}
		checked, ok := checks[r.MonitorID]
		if !ok {
			var err error
			if checked, err = p.checks(ctx, regions, r.MonitorID, region); err != nil {
				return probeapi.ResultsResponse{}, err
			}
			checks[r.MonitorID] = checked
		}
		if !checked {
			unassigned++
			continue
		}
		kept = append(kept, r)
	}
	if unassigned+unknown > 0 {
		metrics.ProbeRefusals.WithLabelValues(metrics.RefusedUnassigned).Add(float64(unassigned))
		metrics.ProbeRefusals.WithLabelValues(metrics.RefusedUnknownStatus).Add(float64(unknown))
		p.opts.Log.Info("left out results the region may not report", "region", region, "agent", textutil.Truncate(batch.AgentID, 64),
			"unassignedMonitor", unassigned, "unknownStatus", unknown)
	}
	var resp probeapi.ResultsResponse
	if len(kept) > 0 {
		var err error
		if resp, err = p.opts.Ingest(ctx, kept); err != nil {
			return resp, err
		}
	}
	resp.Refused = unassigned + unknown
	p.recordBacklog(region, batch)
	return resp, nil
}

// recordBacklog counts a delivered batch's replayed results and updates the
// region's backlog gauge with what its agents still hold (this replica's
// view), and hands both to Options.Report (the cluster's view).
func (p *Server) recordBacklog(region string, batch *probeapi.ResultBatch) {
	if batch.Replayed > 0 {
		metrics.ProbeReplayed.WithLabelValues(region).Add(float64(batch.Replayed))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.opts.Now()
	agents := p.backlog[region]
	if agents == nil {
		agents = map[string]agentBacklog{}
		p.backlog[region] = agents
	}
	agents[batch.AgentID] = agentBacklog{results: max(batch.Backlog, 0), at: now}
	total := 0
	for agent, b := range agents {
		if now.Sub(b.at) > BacklogWindow {
			delete(agents, agent)
			continue
		}
		total += b.results
	}
	metrics.ProbeBacklog.WithLabelValues(region).Set(float64(total))
	if p.opts.Report != nil {
		p.opts.Report(region, batch.AgentID, now, batch.Backlog, batch.Replayed)
	}
}

// checks reports whether region checks the monitor of uid: the monitor
// exists and its effective regions include region.
func (p *Server) checks(ctx context.Context, regions *monitor.RegionResolver, uid, region string) (bool, error) {
	// The cache's own object, not a copy: this only reads it, once per
	// monitor of every batch.
	var list monv1.MonitorList
	if err := p.opts.Client.List(ctx, &list, client.MatchingFields{monv1.UIDIndex: uid}, client.UnsafeDisableDeepCopy); err != nil {
		return false, fmt.Errorf("find monitor %s: %w", uid, err)
	}
	return len(list.Items) > 0 && slices.Contains(regions.Regions(ctx, &list.Items[0]), region), nil
}

// agentFrom is the agent id of a long poll (probeapi.WithAgent), "agent"
// for an agent too old to send one.
func agentFrom(ctx context.Context) string {
	if a := probeapi.AgentFrom(ctx); a != "" {
		return a
	}
	return "agent"
}

// SetupWithManager wakes long polls whenever a Monitor or ProbeRegion
// changes, and checks a monitor at once when its spec goes from paused to
// active.
func (e *Server) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	for _, obj := range []client.Object{&monv1.Monitor{}, &monv1.ProbeRegion{}} {
		inf, err := mgr.GetCache().GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("get informer: %w", err)
		}
		wake := func(any) { e.AssignmentsChanged() }
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: wake,
			UpdateFunc: func(o, n any) {
				if was, ok := o.(*monv1.Monitor); ok && was.Spec.Paused {
					if now, ok := n.(*monv1.Monitor); ok && !now.Spec.Paused {
						e.CheckOnResume(now)
					}
				}
				if assignmentsMayChange(o, n) {
					e.AssignmentsChanged()
				}
			},
			DeleteFunc: wake,
		}); err != nil {
			return fmt.Errorf("watch for assignment changes: %w", err)
		}
	}
	return nil
}

// assignmentsMayChange reports whether an update of a Monitor or
// ProbeRegion can change an assignment list. Status writes that only carry
// live state (the last check, uptime, incidents) cannot, and at 100,000
// Monitors each wake rebuilt every region's list for nothing: a spec change
// moves the generation, and the effective regions and interval are the
// only status fields an assignment reads (see ToAssignment), compared as
// an assignment reads them: a first status write that names the regions
// the spec names changes no list, and after a bulk create or a restart
// those came 100 a second.
func assignmentsMayChange(o, n any) bool {
	was, ok1 := o.(client.Object)
	now, ok2 := n.(client.Object)
	if !ok1 || !ok2 || was.GetGeneration() != now.GetGeneration() ||
		was.GetDeletionTimestamp().IsZero() != now.GetDeletionTimestamp().IsZero() {
		return true
	}
	if wm, ok := o.(*monv1.Monitor); ok {
		if nm, ok := n.(*monv1.Monitor); ok {
			return monitor.IntervalSeconds(wm) != monitor.IntervalSeconds(nm) ||
				!slices.Equal(monitor.Regions(wm), monitor.Regions(nm))
		}
	}
	return false
}
