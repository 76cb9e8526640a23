package controllers_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
	"github.com/uptime-operator/uptime-operator/probes"
)

// TestProbeRegionReplayStatus: a remote region's two agents come back after
// a cut link, one pushing to the real manager through the probe API, the
// other to a second replica sharing the store (its writes made here as its
// engine makes them). The region's status, written by the one manager,
// sums what both still hold and what both replayed, and shows the backlog
// back at zero once both drained.
func TestProbeRegionReplayStatus(t *testing.T) {
	const ns, region, token = probeNS, "far", "far-region-token-0123456789abcdef"
	env := testenv.Use(t, env)
	db := env.Options.Store
	ctx := context.Background()
	c := env.Client
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The other replica's connection to the shared store.
	other, err := sqlite.Open(ctx, db, sqlite.Options{})
	check(err)
	defer other.Close()

	check(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "far-token", Namespace: ns},
		Data: map[string][]byte{probeserver.RegionTokenKey: []byte(token)}}))
	pr := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: region}, Spec: monv1.ProbeRegionSpec{
		City: "Dublin", Placement: monv1.ProbePlacement{Mode: monv1.PlacementRemote,
			TokenSecretRef: &monv1.SecretKeySelector{Name: "far-token", Key: probeserver.RegionTokenKey}}}}
	check(c.Create(ctx, pr))
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: env.Namespace(t, nil)},
		Spec: monv1.MonitorSpec{URL: "https://example.com/", Regions: []string{region}}}
	check(c.Create(ctx, m))

	apiAddr, err := env.Manager.APIAddr(ctx)
	check(err)
	agent := &probeapi.Client{BaseURL: "http://" + apiAddr, MaxRetries: -1, AgentID: "agent-1",
		Token: func() (string, error) { return token, nil }}
	push := func(backlog, replayed int) {
		t.Helper()
		checkedAt := time.Now().UTC().Add(-time.Minute)
		_, err := agent.PushResults(ctx, &probeapi.ResultBatch{Region: region, AgentID: "agent-1", Backlog: backlog, Replayed: replayed,
			Results: []probeapi.Result{{ID: uuid.NewString(), MonitorID: string(m.UID), Region: region, Status: probeapi.StatusUp,
				CheckedAt: checkedAt, ResponseTimeMs: 12}}})
		check(err)
	}
	// The region's status at its next reconcile: the test changes its spec
	// to have one now rather than at the 30 s requeue.
	city := 0
	statusShows := func(what string, buffered, replayed int64) {
		t.Helper()
		// Both replicas' writes reached the store...
		deadline := time.Now().Add(30 * time.Second)
		for {
			online, err := other.AgentsOnline(ctx, time.Now().Add(-90*time.Second))
			check(err)
			replays, err := other.RegionReplays(ctx)
			check(err)
			if int64(online[region].Backlog) == buffered && replays[region].Results == replayed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the store holds backlog %d, replayed %d; want %d and %d", what, online[region].Backlog, replays[region].Results, buffered, replayed)
			}
			time.Sleep(100 * time.Millisecond)
		}
		// ...and the status shows them.
		city++
		patch := client.MergeFrom(pr.DeepCopy())
		pr.Spec.City = "Dublin " + string(rune('A'+city))
		check(c.Patch(ctx, pr, patch))
		var got monv1.ProbeRegion
		waitFor(t, what, func() bool {
			return c.Get(ctx, client.ObjectKey{Name: region}, &got) == nil && got.Status.ObservedGeneration == got.Generation &&
				got.Status.BufferedResults == buffered && got.Status.ReplayedResults == replayed &&
				got.Status.OnlineAgents == 2 && got.Status.LastReplay != nil
		})
	}

	// The link is back: agent-1 replays through this manager, agent-2
	// through the other replica, each still holding some.
	push(40, 12)
	check(other.RecordAgentReport(ctx, store.AgentReport{Region: region, Agent: "agent-2", At: time.Now(), Backlog: 2, Replayed: 5}))
	statusShows("both agents' backlog and replays", 42, 17)

	// Both drain.
	push(0, 40)
	check(other.RecordAgentReport(ctx, store.AgentReport{Region: region, Agent: "agent-2", At: time.Now(), Backlog: 0, Replayed: 2}))
	statusShows("both drained", 0, 59)
}

// TestProbeRegionStatusAfterACutLink: a real agent of a remote region
// checks a local target through a link to the manager (a TCP relay) that
// the test cuts: its results wait in its buffer, and when the link returns
// the region's status counts at least the results the agent says it
// replayed, and nothing left buffered. The manager learns both from the
// agent's batches only, so this also holds the wire encoding of
// ResultBatch.Replayed and Backlog.
func TestProbeRegionStatusAfterACutLink(t *testing.T) {
	const ns, region, token = probeNS, "cut", "cut-region-token-0123456789abcdef"
	env := testenv.Use(t, env)
	ctx := context.Background()
	c := env.Client
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer target.Close()
	check(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cut-token", Namespace: ns},
		Data: map[string][]byte{probeserver.RegionTokenKey: []byte(token)}}))
	pr := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: region}, Spec: monv1.ProbeRegionSpec{
		City: "Cork", Placement: monv1.ProbePlacement{Mode: monv1.PlacementRemote,
			TokenSecretRef: &monv1.SecretKeySelector{Name: "cut-token", Key: probeserver.RegionTokenKey}}}}
	check(c.Create(ctx, pr))
	check(c.Create(ctx, &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "local", Namespace: env.Namespace(t, nil)},
		Spec: monv1.MonitorSpec{URL: target.URL + "/", IntervalSeconds: 15, Regions: []string{region}}}))

	apiAddr, err := env.Manager.APIAddr(ctx)
	check(err)
	link := newRelay(t, apiAddr)
	tokenFile := filepath.Join(t.TempDir(), "token")
	check(os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))
	// Checks every 300 ms (15 × 20 ms), batches every 50 ms.
	agent, err := probes.NewAgent(probes.AgentOptions{Region: region, AgentID: "cut-agent-1", ServerURL: "http://" + link.addr(),
		TokenFile: tokenFile, AllowPrivate: true, BufferDir: t.TempDir(), FlushInterval: 50 * time.Millisecond,
		PollWait: time.Second, CallTimeout: 2 * time.Second, IntervalUnit: 20 * time.Millisecond})
	check(err)
	agent.Client.Backoff, agent.Client.MaxRetries = 10*time.Millisecond, 1
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- agent.Run(runCtx) }()
	defer func() { stop(); <-done }()
	metric := func(name string) float64 {
		rec := httptest.NewRecorder()
		agent.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		sum := 0.0
		for _, line := range strings.Split(rec.Body.String(), "\n") {
			if f := strings.Fields(line); len(f) == 2 && (f[0] == name || strings.HasPrefix(f[0], name+"{")) {
				v, _ := strconv.ParseFloat(f[1], 64)
				sum += v
			}
		}
		return sum
	}
	waitFor(t, "the agent's first results delivered", func() bool {
		return metric("uptime_probe_last_delivery_timestamp_seconds") > 0 && agent.Buffer.Len() == 0
	})

	link.cut(true)
	waitFor(t, "results buffered behind the cut link", func() bool { return agent.Buffer.Len() >= 10 })
	link.cut(false)
	waitFor(t, "the buffer drained", func() bool { return agent.Buffer.Len() == 0 })
	replayed := metric("uptime_probe_replayed_results_total")
	if replayed < 10 {
		t.Fatalf("the agent replayed %v results, want at least the 10 buffered", replayed)
	}

	// The status at the region's next reconcile (a spec change rather
	// than the 30 s requeue).
	patch := client.MergeFrom(pr.DeepCopy())
	pr.Spec.City = "Cork city"
	check(c.Patch(ctx, pr, patch))
	var got monv1.ProbeRegion
	waitFor(t, "the region's status to count the replay", func() bool {
		return c.Get(ctx, client.ObjectKey{Name: region}, &got) == nil && got.Status.ObservedGeneration == got.Generation &&
			float64(got.Status.ReplayedResults) >= replayed && got.Status.BufferedResults == 0 && got.Status.LastReplay != nil
	})
}

// relay forwards TCP connections to a backend until cut: then it closes
// every open connection and refuses new ones, as a link that went down.
type relay struct {
	ln      net.Listener
	backend string
	mu      sync.Mutex
	down    bool
	conns   map[net.Conn]bool
}

func newRelay(t *testing.T, backend string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, backend: backend, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); r.cut(true) })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go r.serve(in)
		}
	}()
	return r
}

func (r *relay) addr() string { return r.ln.Addr().String() }

func (r *relay) serve(in net.Conn) {
	r.mu.Lock()
	if r.down {
		r.mu.Unlock()
		in.Close()
		return
	}
	r.mu.Unlock()
	out, err := net.Dial("tcp", r.backend)
	if err != nil {
		in.Close()
		return
	}
	r.mu.Lock()
	r.conns[in], r.conns[out] = true, true
	r.mu.Unlock()
	go func() { _, _ = io.Copy(out, in); out.Close() }()
	_, _ = io.Copy(in, out)
	in.Close()
}

// cut takes the link down (closing what is open) or brings it back.
func (r *relay) cut(down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = down
	if down {
		for c := range r.conns {
			c.Close()
		}
		clear(r.conns)
	}
}
