package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/postgres"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

// The split-ingest suite: manager replicas (Engines) share one PostgreSQL
// store, and each region's agent reaches only one of them, as it does
// behind a Service. Whatever replica judges, an outage seen by every region
// must open exactly one incident confirmed by all of them, and a failure
// seen by one region must open none. Every case also runs with all results
// sent to one replica (the control).

// splitInterval is the monitors' check interval; a tick is one interval.
const splitInterval = 60 * time.Second

// splitCluster is one shared database, its replicas (each with its own
// connection pool, as separate processes have) and the agents' routes.
type splitCluster struct {
	t        *testing.T
	ctx      context.Context
	dsn      string
	schema   string
	st       store.Store // the test's own view of the database
	m        *monv1.Monitor
	replicas []*Engine
	// route maps a region to the replica its agent polls and sends results
	// to.
	route map[string]int

	mu  sync.Mutex
	now time.Time
}

func postgresDSN(t *testing.T) string { return testutil.PostgresDSN(t) }

// newSplitCluster starts n replicas on a fresh schema for a monitor of
// regions, every region's agent online. start is the clock at the start.
func newSplitCluster(t *testing.T, n int, regions []string, start time.Time) *splitCluster {
	t.Helper()
	dsn := postgresDSN(t)
	ctx := context.Background()
	schema := "split_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	st, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = st.Close()
		if conn, err := pgx.Connect(ctx, dsn); err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			_ = conn.Close(ctx)
		}
	})
	c := &splitCluster{t: t, ctx: ctx, dsn: dsn, schema: schema, st: st, route: map[string]int{}, now: start}
	c.m = &monv1.Monitor{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default", UID: types.UID(uuid.NewString())},
		Spec:       monv1.MonitorSpec{Name: "API", URL: "https://example.com", IntervalSeconds: 60, Regions: regions},
		Status:     monv1.MonitorStatus{EffectiveRegions: regions, EffectiveIntervalSeconds: 60},
	}
	for range n {
		c.replicas = append(c.replicas, c.newReplica(regions))
	}
	for i, r := range regions {
		c.route[r] = i % n
	}
	c.contact()
	return c
}

// contact has every region's agent call its replica (as its long poll
// does) and waits until the store shares the contacts.
func (c *splitCluster) contact() {
	c.t.Helper()
	now := c.clock()
	for region, i := range c.route {
		c.replicas[i].ShareContact(region, "agent-"+region, now)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		online, err := c.st.AgentsOnline(c.ctx, now)
		if err != nil {
			c.t.Fatal(err)
		}
		if len(online) == len(c.route) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("agent contacts %v not shared within 10 s", online)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// newReplica is one more manager replica on the cluster's database, with
// its own store. The ProbeRegions' status says nothing about agents: each
// replica learns which regions are online from the contacts shared through
// the store. Like a manager at start (its Monitor controller's first pass),
// it reads the monitor's live state once.
func (c *splitCluster) newReplica(regions []string) *Engine {
	st, err := postgres.Open(c.ctx, c.dsn, postgres.Options{Schema: c.schema})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = st.Close() })
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = monv1.AddToScheme(scheme)
	objs := []client.Object{c.m.DeepCopy()}
	for _, r := range regions {
		objs = append(objs, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: r}})
	}
	k := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&monv1.Monitor{}, monv1.UIDIndex, func(o client.Object) []string { return []string{string(o.GetUID())} }).Build()
	e := New(Options{Store: st, Client: k, Secrets: k, Alerts: countingAlerts{}, Now: c.clock})
	if _, err := e.LiveState(c.ctx, c.m); err != nil {
		c.t.Fatal(err)
	}
	return e
}

func (c *splitCluster) clock() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// restart replaces every replica with a new one (empty memory).
func (c *splitCluster) restart() {
	for i := range c.replicas {
		c.replicas[i] = c.newReplica(c.m.Spec.Regions)
	}
}

// tick has every agent call its replica, sends one result per region given,
// each to its region's replica, all at the same time, then moves the clock
// on by one interval.
func (c *splitCluster) tick(status map[string]probeapi.Status) {
	c.t.Helper()
	c.contact()
	now := c.clock()
	var wg sync.WaitGroup
	for region, s := range status {
		res := probeapi.Result{ID: uuid.NewString(), MonitorID: string(c.m.UID), Region: region, CheckedAt: now, Status: s}
		if s == probeapi.StatusDown {
			res.ErrorType, res.ErrorMessage = probeapi.ErrorTimeout, "timed out"
		}
		e := c.replicas[c.route[region]]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.Ingest(c.ctx, []probeapi.Result{res}); err != nil {
				c.t.Error(err)
			}
		}()
	}
	wg.Wait()
	c.mu.Lock()
	c.now = c.now.Add(splitInterval)
	c.mu.Unlock()
}

// seed stores results taken at, straight into the store (history from
// before the replicas started).
func (c *splitCluster) seed(at time.Time, status map[string]probeapi.Status) {
	c.t.Helper()
	var checks []store.Check
	for region, s := range status {
		checks = append(checks, store.Check{ID: uuid.NewString(), MonitorID: string(c.m.UID), Namespace: c.m.Namespace,
			Region: region, CheckedAt: at.UTC().Truncate(time.Microsecond), Status: store.CheckStatus(s)})
	}
	if _, err := c.st.InsertChecks(c.ctx, checks); err != nil {
		c.t.Fatal(err)
	}
}

func (c *splitCluster) incidents() []store.Incident {
	c.t.Helper()
	list, err := c.st.ListIncidents(c.ctx, store.IncidentQuery{MonitorID: string(c.m.UID), Page: 1, PageSize: 100})
	if err != nil {
		c.t.Fatal(err)
	}
	return list.Items
}

// alerts counts the queued alert events by kind.
func (c *splitCluster) alerts() map[string]int {
	c.t.Helper()
	ds, err := c.st.ListDeliveries(c.ctx, store.DeliveryQuery{Limit: 100})
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]int{}
	for _, d := range ds {
		out[d.Kind]++
	}
	return out
}

// wantOneIncident checks that exactly one incident exists, confirmed by
// regions, with one down alert.
func (c *splitCluster) wantOneIncident(regions ...string) store.Incident {
	c.t.Helper()
	incs := c.incidents()
	if len(incs) != 1 {
		c.t.Fatalf("%d incidents, want 1: %+v", len(incs), incs)
	}
	inc := incs[0]
	got := slices.Sorted(slices.Values(inc.ConfirmingRegions))
	if inc.Confirmations != len(regions) || !slices.Equal(got, regions) {
		c.t.Fatalf("incident confirmed by %d %v, want %d %v", inc.Confirmations, inc.ConfirmingRegions, len(regions), regions)
	}
	if n := c.alerts()[alertevent.MonitorDown]; n != 1 {
		c.t.Fatalf("%d %s alerts queued, want 1", n, alertevent.MonitorDown)
	}
	return inc
}

func (c *splitCluster) wantNoIncident() {
	c.t.Helper()
	if incs := c.incidents(); len(incs) != 0 {
		c.t.Fatalf("%d incidents, want none: first confirmed by %v", len(incs), incs[0].ConfirmingRegions)
	}
	if n := len(c.alerts()); n != 0 {
		c.t.Fatalf("%d alerts queued, want none", n)
	}
}

var (
	bothDown  = map[string]probeapi.Status{"a": probeapi.StatusDown, "b": probeapi.StatusDown}
	bothUp    = map[string]probeapi.Status{"a": probeapi.StatusUp, "b": probeapi.StatusUp}
	onlyADown = map[string]probeapi.Status{"a": probeapi.StatusDown, "b": probeapi.StatusUp}
	onlyBDown = map[string]probeapi.Status{"a": probeapi.StatusUp, "b": probeapi.StatusDown}
)

// TestSplitIngest reproduces every case of issue 16's table: regions a and
// b, 60 s interval, two failing regions required; a's results go to
// replica 1 and b's to replica 2 (split), or both to one replica (control).
func TestSplitIngest(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	cases := []struct {
		name string
		// history seeds the store before the replicas start.
		history func(c *splitCluster)
		run     func(c *splitCluster)
	}{
		{name: "both down on an empty store", run: func(c *splitCluster) {
			c.tick(bothDown)
			inc := c.wantOneIncident("a", "b")
			// Every replica shows the store's state, not only its own regions.
			for i, e := range c.replicas {
				live, err := e.LiveState(c.ctx, c.m)
				if err != nil {
					t.Fatal(err)
				}
				if live.OpenIncident == nil || live.OpenIncident.ID != inc.ID || len(live.Regions) != 2 {
					t.Fatalf("replica %d: live state %+v, want the incident and both regions", i, live)
				}
				for _, r := range live.Regions {
					if r.Status != "down" {
						t.Fatalf("replica %d shows %s %s, want down", i, r.Code, r.Status)
					}
				}
				x, err := e.ExplainMonitor(c.ctx, c.m)
				if err != nil {
					t.Fatal(err)
				}
				if x.Failing != 2 || x.Voting != 2 || x.State != "incident_open" {
					t.Fatalf("replica %d explains failing=%d voting=%d state=%s, want 2/2/incident_open", i, x.Failing, x.Voting, x.State)
				}
			}
			for range 5 {
				c.tick(bothDown)
			}
			c.wantOneIncident("a", "b")
		}},
		{name: "both down 10 min after a restart", history: func(c *splitCluster) {
			c.seed(start.Add(-10*time.Minute), bothUp)
		}, run: func(c *splitCluster) {
			c.tick(bothDown)
			c.wantOneIncident("a", "b")
		}},
		{name: "both down 1 interval after a restart", history: func(c *splitCluster) {
			c.seed(start.Add(-splitInterval), bothUp)
		}, run: func(c *splitCluster) {
			c.tick(bothDown)
			inc := c.wantOneIncident("a", "b")
			if !inc.StartedAt.Equal(start) {
				t.Fatalf("incident started at %s, want the first down tick %s", inc.StartedAt, start)
			}
		}},
		{name: "only b down while a is up", history: func(c *splitCluster) {
			c.seed(start.Add(-splitInterval), bothUp)
		}, run: func(c *splitCluster) {
			for range 10 {
				c.tick(onlyBDown)
			}
			c.wantNoIncident()
		}},
		{name: "only a down after a restart", history: func(c *splitCluster) {
			c.seed(start.Add(-splitInterval), bothUp)
		}, run: func(c *splitCluster) {
			for range 10 {
				c.tick(onlyADown)
			}
			c.wantNoIncident()
		}},
		{name: "only a down just after starting", run: func(c *splitCluster) {
			for range 10 {
				c.tick(onlyADown)
			}
			c.wantNoIncident()
		}},
		{name: "outage then recovery", history: func(c *splitCluster) {
			c.seed(start.Add(-splitInterval), bothUp)
		}, run: func(c *splitCluster) {
			c.tick(onlyADown)
			c.tick(bothDown)
			c.tick(bothDown)
			c.wantOneIncident("a", "b")
			c.tick(onlyBDown)
			c.tick(bothUp)
			incs := c.incidents()
			if len(incs) != 1 || incs[0].ResolvedAt == nil {
				t.Fatalf("incidents %+v, want one resolved", incs)
			}
			if n := c.alerts()[alertevent.MonitorUp]; n != 1 {
				t.Fatalf("%d %s alerts queued, want 1", n, alertevent.MonitorUp)
			}
		}},
	}
	for _, replicas := range []int{2, 1} {
		mode := "split"
		if replicas == 1 {
			mode = "control"
		}
		for _, tc := range cases {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				c := newSplitCluster(t, replicas, []string{"a", "b"}, start)
				if tc.history != nil {
					tc.history(c)
					c.restart()
				}
				tc.run(c)
			})
		}
	}
}

// TestSplitIngestReplicaKilled: a replica dies mid-outage and its region's
// agent moves to the other replica, which carries on with the same
// incident and resolves it once.
func TestSplitIngestReplicaKilled(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	c := newSplitCluster(t, 2, []string{"a", "b"}, start)
	c.seed(start.Add(-splitInterval), bothUp)
	c.tick(bothDown)
	c.tick(bothDown)
	inc := c.wantOneIncident("a", "b")

	c.replicas = c.replicas[:1] // replica 2 is gone; b's agent moves to replica 1
	c.route["b"] = 0
	for range 3 {
		c.tick(bothDown)
	}
	if got := c.wantOneIncident("a", "b"); got.ID != inc.ID {
		t.Fatalf("incident %s replaced by %s", inc.ID, got.ID)
	}
	c.tick(bothUp)
	c.tick(bothUp)
	incs := c.incidents()
	if len(incs) != 1 || incs[0].ResolvedAt == nil {
		t.Fatalf("incidents %+v, want the one resolved", incs)
	}
	if got := c.alerts(); got[alertevent.MonitorDown] != 1 || got[alertevent.MonitorUp] != 1 {
		t.Fatalf("alerts %v, want one down and one up", got)
	}
}

// TestSplitIngestThreeReplicas: regions a, b and c, each on its own replica.
func TestSplitIngestThreeReplicas(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	regions := []string{"a", "b", "c"}
	t.Run("two of three down", func(t *testing.T) {
		c := newSplitCluster(t, 3, regions, start)
		c.seed(start.Add(-splitInterval), map[string]probeapi.Status{"a": "up", "b": "up", "c": "up"})
		c.restart()
		c.tick(map[string]probeapi.Status{"a": "down", "b": "up", "c": "up"})
		c.wantNoIncident()
		c.tick(map[string]probeapi.Status{"a": "down", "b": "down", "c": "up"})
		c.wantOneIncident("a", "b")
		c.tick(map[string]probeapi.Status{"a": "down", "b": "down", "c": "down"})
		c.wantOneIncident("a", "b") // confirmations are those of the opening
		c.tick(map[string]probeapi.Status{"a": "up", "b": "up", "c": "up"})
		if incs := c.incidents(); len(incs) != 1 || incs[0].ResolvedAt == nil {
			t.Fatalf("incidents %+v, want one resolved", incs)
		}
	})
	t.Run("all down on an empty store", func(t *testing.T) {
		c := newSplitCluster(t, 3, regions, start)
		c.tick(map[string]probeapi.Status{"a": "down", "b": "down", "c": "down"})
		// The results arrive together: the incident opens as soon as two
		// failing regions are stored, with every failing region stored by
		// then (two or three of them), and only once.
		incs := c.incidents()
		if len(incs) != 1 || incs[0].Confirmations < 2 || incs[0].Confirmations != len(incs[0].ConfirmingRegions) {
			t.Fatalf("incidents %+v, want one confirmed by at least 2 regions", incs)
		}
		if n := c.alerts()[alertevent.MonitorDown]; n != 1 {
			t.Fatalf("%d down alerts, want 1", n)
		}
		for range 3 {
			c.tick(map[string]probeapi.Status{"a": "down", "b": "down", "c": "down"})
		}
		if got := c.incidents(); len(got) != 1 {
			t.Fatalf("%d incidents, want 1", len(got))
		}
	})
	t.Run("one of three down", func(t *testing.T) {
		c := newSplitCluster(t, 3, regions, start)
		for range 10 {
			c.tick(map[string]probeapi.Status{"a": "up", "b": "down", "c": "up"})
		}
		c.wantNoIncident()
	})
}

// TestSplitIngestSilentRegion: region b's agent is online but never sends
// a result for the monitor. During the warm-up (one staleness period from
// the monitor's first result) b is waited for; after it, a alone confirms.
func TestSplitIngestSilentRegion(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	for _, replicas := range []int{2, 1} {
		t.Run(fmt.Sprintf("replicas=%d", replicas), func(t *testing.T) {
			c := newSplitCluster(t, replicas, []string{"a", "b"}, start)
			down := map[string]probeapi.Status{"a": probeapi.StatusDown}
			stale := staleness(c.m)
			for c.clock().Sub(start) <= stale {
				c.tick(down)
				c.wantNoIncident()
			}
			c.tick(down)
			c.wantOneIncident("a")
		})
	}
}

// TestSweepRefreshesFromStore: the leader's sweep pushes a status refresh
// for results only another replica received.
func TestSweepRefreshesFromStore(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	c := newSplitCluster(t, 2, []string{"a", "b"}, start)
	c.route["a"], c.route["b"] = 1, 1 // the leader (replica 0) receives nothing
	leader := c.replicas[0]
	if err := leader.SweepMonitors(c.ctx); err != nil {
		t.Fatal(err)
	}
	drain(leader)
	c.tick(bothDown)
	if err := leader.SweepMonitors(c.ctx); err != nil {
		t.Fatal(err)
	}
	if n := drain(leader); n != 1 {
		t.Fatalf("the sweep pushed %d status refreshes, want 1", n)
	}
	if err := leader.SweepMonitors(c.ctx); err != nil {
		t.Fatal(err)
	}
	if n := drain(leader); n != 0 {
		t.Fatalf("an unchanged monitor was pushed %d times within the status interval", n)
	}
}

func drain(e *Engine) int {
	n := 0
	for {
		select {
		case <-e.Updates():
			n++
		default:
			return n
		}
	}
}

// TestRegionAgentsAnywhere: the leader's ProbeRegion controller sees a
// region online when its agent is connected to another replica only (it
// read the leader's own connections before, so `kubectl get proberegions`
// showed the region offline and not Ready in a two-replica install).
func TestRegionAgentsAnywhere(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	c := newSplitCluster(t, 2, []string{"a", "b"}, start)
	leader := c.replicas[0]
	if n, _ := leader.AgentsOnline("b", 90*time.Second); n != 0 {
		t.Fatalf("the leader's own connections include b's agent (%d): the test does not split", n)
	}
	p, _ := leader.RegionAgentsAnywhere("b", 90*time.Second)
	if p.Agents != 1 || !p.Last.Equal(start) {
		t.Errorf("region b from the leader: %d agent(s), last contact %s; want 1 at %s", p.Agents, p.Last, start)
	}
	if p, _ := leader.RegionAgentsAnywhere("a", 90*time.Second); p.Agents != 1 {
		t.Errorf("region a (the leader's own agent): %d agent(s), want 1", p.Agents)
	}
	c.mu.Lock()
	c.now = start.Add(2 * time.Minute)
	c.mu.Unlock()
	if p, _ := leader.RegionAgentsAnywhere("b", 90*time.Second); p.Agents != 0 {
		t.Errorf("region b two minutes after its agent's last contact: %d agent(s), want 0", p.Agents)
	}
}

// TestReportsAddUpAcrossReplicas: two agents of one region push to two
// replicas after a cut link; the leader's view of the region (what its
// ProbeRegion status shows) sums the backlog each still holds and the
// results both replayed, and the backlog goes back to zero once both have
// drained, whichever replica heard it.
func TestReportsAddUpAcrossReplicas(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	c := newSplitCluster(t, 2, []string{"a"}, start)
	leader, other := c.replicas[0], c.replicas[1]
	view := func(what string, backlog int, replayed int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			p, r := leader.RegionAgentsAnywhere("a", 90*time.Second)
			if p.Backlog == backlog && r.Results == replayed {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: backlog %d replayed %d, want %d and %d", what, p.Backlog, r.Results, backlog, replayed)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	at := start.Add(time.Second)
	other.ShareContact("a", "agent-2", at)
	leader.ShareReport("a", "agent-a", at, 300, 100)
	other.ShareReport("a", "agent-2", at, 50, 7)
	view("both replaying", 350, 107)
	// A backlog that only changes size is written at most every few
	// seconds...
	leader.ShareReport("a", "agent-a", at.Add(time.Second), 280, 0)
	view("a shrinking backlog within the throttle", 350, 107)
	// ...but replayed results are written at once, with the backlog of
	// their push...
	leader.ShareReport("a", "agent-a", at.Add(1500*time.Millisecond), 200, 100)
	view("a replaying push", 250, 207)
	// ...and so is an empty backlog.
	leader.ShareReport("a", "agent-a", at.Add(2*time.Second), 0, 200)
	other.ShareReport("a", "agent-2", at.Add(2*time.Second), 0, 50)
	view("both drained", 0, 457)
	// A push with nothing held and nothing replayed writes nothing new.
	leader.ShareReport("a", "agent-a", at.Add(3*time.Second), 0, 0)
	view("steady", 0, 457)
	// The agent moves to the other replica, falls behind there, then comes
	// back to the leader empty: the leader writes its empty backlog again
	// once a contact's interval has passed, though its own last write said
	// zero too.
	other.ShareReport("a", "agent-a", at.Add(4*time.Second), 30, 0)
	view("agent-a behind on the other replica", 30, 457)
	leader.ShareReport("a", "agent-a", at.Add(5*time.Second), 0, 0)
	view("within the contact interval the leader's unchanged report is not rewritten", 30, 457)
	leader.ShareReport("a", "agent-a", at.Add(5*time.Second+contactShareEvery), 0, 0)
	view("rewritten after a contact interval", 0, 457)
}
