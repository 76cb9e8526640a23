package controllers_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// TestProbeRegionReplayStatus: a remote region's two agents come back after
// a cut link, one pushing to the real manager through the probe API, the
// other to a second replica sharing the store (its writes made here as its
// engine makes them). The region's status, written by the one manager,
// sums what both still hold and what both replayed, and shows the backlog
// back at zero once both drained.
func TestProbeRegionReplayStatus(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" && os.Getenv("CI") != "true" {
		t.Skip("KUBEBUILDER_ASSETS is not set (make test sets it)")
	}
	const ns, region, token = "uptime-operator-system", "far", "far-region-token-0123456789abcdef"
	db := filepath.Join(t.TempDir(), "uptime.db")
	env, err := testenv.Start(manager.Options{Namespace: ns, APIListen: "127.0.0.1:0", Store: db, SkipNameValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
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

	check(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	check(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "far-token", Namespace: ns},
		Data: map[string][]byte{probeserver.RegionTokenKey: []byte(token)}}))
	pr := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: region}, Spec: monv1.ProbeRegionSpec{
		City: "Dublin", Placement: monv1.ProbePlacement{Mode: monv1.PlacementRemote,
			TokenSecretRef: &monv1.SecretKeySelector{Name: "far-token", Key: probeserver.RegionTokenKey}}}}
	check(c.Create(ctx, pr))
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
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
