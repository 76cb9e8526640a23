package engine

import (
	"context"
	"crypto/subtle"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/assign"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// ProbeServiceAccount is the ServiceAccount managed probe Deployments run
// as; its tokens are accepted (via TokenReview) for every region.
const ProbeServiceAccount = "uptime-operator-probe"

// RegionTokenKey is the data key of region token Secrets.
const RegionTokenKey = "token"

// probeState tracks assignment changes (for long polls), agent contact and
// ad-hoc checks waiting for an agent.
type probeState struct {
	mu      sync.Mutex
	changed chan struct{}
	// adhoc are one-off checks by request id.
	adhoc map[string]*adhocRequest
	// contact[region][agent] is the last time an agent of the region called.
	contact map[string]map[string]time.Time
}

func newProbeState() probeState {
	return probeState{changed: make(chan struct{}), contact: map[string]map[string]time.Time{}, adhoc: map[string]*adhocRequest{}}
}

// AssignmentsChanged wakes every long poll so agents re-read their lists. The
// manager calls it on any Monitor, ProbeRegion or Secret change.
func (e *Engine) AssignmentsChanged() {
	e.probe.mu.Lock()
	close(e.probe.changed)
	e.probe.changed = make(chan struct{})
	e.probe.mu.Unlock()
}

func (e *Engine) changedCh() <-chan struct{} {
	e.probe.mu.Lock()
	defer e.probe.mu.Unlock()
	return e.probe.changed
}

func (e *Engine) touchAgent(region, agent string) {
	e.probe.mu.Lock()
	defer e.probe.mu.Unlock()
	if e.probe.contact[region] == nil {
		e.probe.contact[region] = map[string]time.Time{}
	}
	now := e.opts.Now()
	e.probe.contact[region][agent] = now
	e.shareContact(region, agent, now)
}

// AgentsOnline returns how many agents of region called within window and
// the last contact.
func (e *Engine) AgentsOnline(region string, window time.Duration) (int, time.Time) {
	e.probe.mu.Lock()
	defer e.probe.mu.Unlock()
	now := e.opts.Now()
	n, last := 0, time.Time{}
	for _, t := range e.probe.contact[region] {
		if now.Sub(t) <= window {
			n++
		}
		if t.After(last) {
			last = t
		}
	}
	return n, last
}

// ProbeServer returns the manager side of the probe API.
func (e *Engine) ProbeServer() probeapi.Server { return probeServer{e} }

type probeServer struct{ e *Engine }

// Authorize accepts the region's token Secret, or a token of the probe
// ServiceAccount in the manager's namespace verified by TokenReview.
func (p probeServer) Authorize(ctx context.Context, token, region string) error {
	if token == "" {
		return probeapi.ErrUnauthorized
	}
	var regions monv1.ProbeRegionList
	if err := p.e.opts.Client.List(ctx, &regions); err != nil {
		return fmt.Errorf("list probe regions: %w", err)
	}
	var pr *monv1.ProbeRegion
	for i := range regions.Items {
		if monitor.RegionCode(&regions.Items[i]) == region {
			pr = &regions.Items[i]
		}
	}
	if pr == nil {
		return probeapi.ErrForbidden
	}
	if ref := pr.Spec.Placement.TokenSecretRef; ref != nil {
		ns := pr.Spec.Placement.Namespace
		if ns == "" {
			ns = p.e.opts.ManagerNamespace
		}
		var s corev1.Secret
		if err := p.e.opts.Secrets.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, &s); err == nil {
			if want := s.Data[ref.Key]; len(want) > 0 && subtle.ConstantTimeCompare(want, []byte(token)) == 1 {
				return nil
			}
		}
	}
	tr := &authv1.TokenReview{Spec: authv1.TokenReviewSpec{Token: token}}
	if err := p.e.opts.Client.Create(ctx, tr); err != nil {
		return fmt.Errorf("review token: %w", err)
	}
	want := "system:serviceaccount:" + p.e.opts.ManagerNamespace + ":" + ProbeServiceAccount
	if tr.Status.Authenticated && tr.Status.User.Username == want {
		return nil
	}
	return probeapi.ErrUnauthorized
}

// Assignments long-polls for the region's assignment list.
func (p probeServer) Assignments(ctx context.Context, region, known string) (*probeapi.AssignmentList, error) {
	p.e.touchAgent(region, agentFrom(ctx))
	for {
		changed := p.e.changedCh()
		list, err := p.e.AssignmentList(ctx, region)
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

// AssignmentList computes the assignments of a region: every active,
// non-cron monitor whose effective regions include it. Monitors whose
// Secrets cannot be read are left out until they can.
func (e *Engine) AssignmentList(ctx context.Context, region string) (*probeapi.AssignmentList, error) {
	var monitors monv1.MonitorList
	if err := e.opts.Client.List(ctx, &monitors); err != nil {
		return nil, fmt.Errorf("list monitors: %w", err)
	}
	list := &probeapi.AssignmentList{Region: region}
	list.Assignments = assign.ForRegion(ctx, e.credentials, monitors.Items, region, func(m *monv1.Monitor, err error) {
		e.opts.Log.V(1).Info("monitor not assigned", "monitor", m.Name, "namespace", m.Namespace, "reason", err.Error())
	})
	list.Revision = assign.Revision(list.Assignments)
	e.probe.mu.Lock()
	for _, req := range e.probe.adhoc {
		if req.region == region {
			list.AdHoc = append(list.AdHoc, req.check)
		}
	}
	e.probe.mu.Unlock()
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

// adhocRequest is a one-off check waiting for its region's agent.
type adhocRequest struct {
	region string
	check  probeapi.AdHocCheck
	save   bool
	done   chan probeapi.Result
}

// runOnAgent queues a one-off check for region's agents and waits for the
// result (or ctx). The agent runs it from its own vantage point.
func (e *Engine) runOnAgent(ctx context.Context, region string, a probeapi.Assignment, save bool) (probeapi.Result, error) {
	req := &adhocRequest{region: region, save: save, done: make(chan probeapi.Result, 1),
		check: probeapi.AdHocCheck{RequestID: newID(), Assignment: a}}
	e.probe.mu.Lock()
	e.probe.adhoc[req.check.RequestID] = req
	e.probe.mu.Unlock()
	defer func() {
		e.probe.mu.Lock()
		delete(e.probe.adhoc, req.check.RequestID)
		e.probe.mu.Unlock()
	}()
	e.AssignmentsChanged()
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
func (e *Engine) CheckOnResume(m *monv1.Monitor) {
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
		for _, region := range monitorRegions(m) {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), ttl)
				defer cancel()
				_, _ = e.runOnAgent(ctx, region, a, true)
			}()
		}
	}()
}

// claimAdHoc hands results of one-off checks to their waiters and reports
// which of them must not be stored.
func (e *Engine) claimAdHoc(results []probeapi.Result) map[string]bool {
	e.probe.mu.Lock()
	defer e.probe.mu.Unlock()
	var skip map[string]bool
	for _, r := range results {
		req, ok := e.probe.adhoc[r.ID]
		if !ok {
			continue
		}
		select {
		case req.done <- r:
		default:
		}
		delete(e.probe.adhoc, r.ID)
		if !req.save {
			if skip == nil {
				skip = map[string]bool{}
			}
			skip[r.ID] = true
		}
	}
	return skip
}

// IngestResults stores and evaluates a batch from an agent.
func (p probeServer) IngestResults(ctx context.Context, batch *probeapi.ResultBatch) (probeapi.ResultsResponse, error) {
	p.e.touchAgent(batch.Region, batch.AgentID)
	for i := range batch.Results {
		if batch.Results[i].Region == "" {
			batch.Results[i].Region = batch.Region
		}
	}
	return p.e.Ingest(ctx, batch.Results)
}

// agentFrom is the agent id of a long poll (probeapi.WithAgent), "agent"
// for an agent too old to send one.
func agentFrom(ctx context.Context) string {
	if a := probeapi.AgentFrom(ctx); a != "" {
		return a
	}
	return "agent"
}
