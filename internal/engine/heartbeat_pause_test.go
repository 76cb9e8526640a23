package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// TestRunsSkippedWhilePausedAreNotMissed pauses an hourly cron monitor over
// two scheduled runs, once through the REST API (a pause window in the
// store) and once in its spec (kubectl): after the resume the schedule
// restarts, so the skipped runs open no incident, and the next run is
// missed as usual when no ping comes.
func TestRunsSkippedWhilePausedAreNotMissed(t *testing.T) {
	for _, how := range []string{"pause window", "spec"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			created := time.Date(2026, 11, 26, 10, 0, 30, 0, time.UTC)
			m := &monv1.Monitor{
				ObjectMeta: metav1.ObjectMeta{Name: "backup", Namespace: "default", UID: "7a000000-0000-4000-8000-000000000001",
					CreationTimestamp: metav1.NewTime(created)},
				Spec: monv1.MonitorSpec{Name: "backup", Type: monv1.MonitorCron, Cron: &monv1.CronConfig{CronExpression: "0 * * * *"}},
			}
			now := created
			e, st, c := cronEngine(t, m, func() time.Time { return now })
			setPaused := func(p bool) {
				var cur monv1.Monitor
				if err := c.Get(ctx, client.ObjectKeyFromObject(m), &cur); err != nil {
					t.Fatal(err)
				}
				cur.Spec.Paused = p
				if err := c.Update(ctx, &cur); err != nil {
					t.Fatal(err)
				}
			}
			missed := func() int {
				t.Helper()
				items, _, err := st.ListChecks(ctx, store.ChecksQuery{MonitorID: string(m.UID), Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, it := range items {
					if it.ErrorType == "missed_heartbeat" {
						n++
					}
				}
				return n
			}
			step := func(at time.Time) {
				t.Helper()
				now = at
				if err := e.CheckHeartbeats(ctx); err != nil {
					t.Fatal(err)
				}
			}

			pausedAt, resumedAt := created.Add(10*time.Minute), created.Add(150*time.Minute) // 10:10:30 to 12:30:30
			if how == "pause window" {
				if err := st.PauseMonitor(ctx, string(m.UID), pausedAt); err != nil {
					t.Fatal(err)
				}
				if err := st.ResumeMonitor(ctx, string(m.UID), resumedAt); err != nil {
					t.Fatal(err)
				}
			} else {
				step(pausedAt)
				setPaused(true)
				step(pausedAt.Add(time.Minute))
				step(created.Add(70 * time.Minute)) // 11:10: paused, the 11:00 run is skipped
				setPaused(false)
				step(resumedAt)
			}
			step(resumedAt.Add(time.Minute))
			if n := missed(); n != 0 {
				t.Fatalf("%d missed runs recorded for runs skipped while paused", n)
			}
			step(time.Date(2026, 11, 26, 13, 0, 30, 0, time.UTC))
			if n := missed(); n != 1 {
				t.Fatalf("%d missed runs after the 13:00 run passed without a ping, want 1", n)
			}
		})
	}
}

func TestHeartbeatKeepsTheReportedExecutionCount(t *testing.T) {
	ctx := context.Background()
	m := &monv1.Monitor{
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "default", UID: "7a000000-0000-4000-8000-000000000002",
			CreationTimestamp: metav1.Now()},
		Spec: monv1.MonitorSpec{Name: "job", Type: monv1.MonitorCron, Cron: &monv1.CronConfig{CronExpression: "@daily"}},
	}
	e, st, _ := cronEngine(t, m, time.Now)
	n := int64(42)
	if err := e.Heartbeat(ctx, m, Ping{OK: true, ExecutionCount: &n}); err != nil {
		t.Fatal(err)
	}
	items, _, err := st.ListChecks(ctx, store.ChecksQuery{MonitorID: string(m.UID), Limit: 10})
	if err != nil || len(items) != 1 {
		t.Fatalf("checks %v (%v)", items, err)
	}
	if got := string(items[0].Details); got != `{"execution_count":42}` {
		t.Fatalf("details = %s", got)
	}
}

// cronEngine is an engine on a fresh SQLite store and a fake client holding
// cron monitor m, with the clock now.
func cronEngine(t *testing.T, m *monv1.Monitor, now func() time.Time) (*Engine, store.Store, client.Client) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = monv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(m).
		WithIndex(&monv1.Monitor{}, monv1.UIDIndex, func(o client.Object) []string { return []string{string(o.GetUID())} }).
		WithIndex(&monv1.Monitor{}, MonitorTypeIndex, func(o client.Object) []string { return []string{string(o.(*monv1.Monitor).Spec.Type)} }).Build()
	return New(Options{Store: st, Client: c, Secrets: c, Alerts: countingAlerts{}, Now: now}), st, c
}
