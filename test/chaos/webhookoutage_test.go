//go:build chaos

package chaos

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/trust"
	"github.com/uptime-operator/uptime-operator/probes"
)

var webhookOutage = flag.Duration("chaos.webhook-outage", envDuration("CHAOS_WEBHOOK_OUTAGE", 5*time.Minute),
	"how long TestWebhookReceiverOutage keeps the receiver down (env CHAOS_WEBHOOK_OUTAGE; `make chaos` runs 5m)")

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}

// scheduleSpan is the time from a delivery's first attempt to its sixth
// under the specification's schedule (5+10+20+40+80 s).
const scheduleSpan = 155 * time.Second

// TestWebhookReceiverOutage takes a webhook receiver down (its port closed,
// as when its process is gone) for -chaos.webhook-outage (5 minutes) while
// real incidents open and resolve (two in-process agents, a target that
// fails and recovers), then brings it back on the same address. The manager
// runs with --delivery-retry-window 15m. Measured: every delivery queued
// before and during the outage arrives, once per X-Service-Delivery id; the
// attempt log follows the documented schedule (5, 10, 20, 40, 80 s, then
// every 80 s): no attempt early, the worst lateness; how long after the
// receiver's return the last delivery arrived.
func TestWebhookReceiverOutage(t *testing.T) {
	t.Parallel()
	outage := *webhookOutage
	window := max(15*time.Minute, outage+5*time.Minute)
	must(t, trust.LoadFile(receiverCAFile(t)))
	const ns = "uptime-operator-system"
	env := startEnv(t, manager.Options{Store: filepath.Join(t.TempDir(), "uptime.db"), APIListen: "127.0.0.1:0",
		AllowPrivateTargets: true, Namespace: ns, DeliveryRetryWindow: window})
	ctx, cancel := context.WithTimeout(context.Background(), outage+8*time.Minute)
	defer cancel()
	apiAddr, err := env.Manager.APIAddr(ctx)
	must(t, err)
	must(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	regions := []string{"eu-1", "us-1"}
	agentCtx, stopAgents := context.WithCancel(ctx)
	var agents sync.WaitGroup
	defer func() { stopAgents(); agents.Wait() }()
	for _, code := range regions {
		token := remoteRegion(t, ctx, env.Client, ns, code)
		agents.Add(1)
		go func() {
			defer agents.Done()
			_ = probes.RunAgent(agentCtx, probes.AgentOptions{
				Region: code, ServerURL: "http://" + apiAddr, TokenFile: token, AllowPrivate: true,
				BufferDir: filepath.Join(t.TempDir(), "buffer-"+code), IntervalUnit: 20 * time.Millisecond,
				FlushInterval: 100 * time.Millisecond, PollWait: time.Second,
			})
		}()
	}
	const team = "team"
	must(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}))
	receiver := newHookReceiver(t)
	secret := webhookChannel(t, ctx, env.Client, team, "hook", receiver.url())
	receiver.mu.Lock()
	receiver.secret = func() []byte { return secret }
	receiver.mu.Unlock()
	var ch monv1.AlertChannel
	must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: team, Name: "hook"}, &ch))
	target := newSwitchTarget(t, "")
	const monitors = 3
	for i := 0; i < monitors; i++ {
		must(t, env.Client.Create(ctx, &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d", i), Namespace: team},
			Spec: monv1.MonitorSpec{URL: target.URL, IntervalSeconds: 30, Regions: regions, HTTP: &monv1.HTTPConfig{TimeoutMs: 2000}}}))
	}
	st := env.Manager.Store
	deliveries := func() []store.Delivery {
		ds, err := st.ListDeliveries(ctx, store.DeliveryQuery{ChannelID: string(ch.UID), Limit: 10000})
		must(t, err)
		return ds
	}
	arrivedCount := func() int { a, _ := receiver.snapshot(); return len(a) }
	// One incident with the receiver up: the path works.
	cycle := func(down time.Duration) {
		target.set(true)
		time.Sleep(down)
		target.set(false)
	}
	cycle(5 * time.Second)
	waitFor(t, "the first incident's deliveries", 2*time.Minute, func() bool { return arrivedCount() >= 2*monitors })

	// The outage: incidents keep opening and resolving while the receiver
	// is gone, from its first seconds to its last half minute.
	receiver.stop()
	down := time.Now()
	end := down.Add(outage)
	for time.Until(end) > 25*time.Second {
		cycle(min(10*time.Second, time.Until(end)/4))
		if wait := min(20*time.Second, time.Until(end)-20*time.Second); wait > 0 {
			time.Sleep(wait)
		}
	}
	time.Sleep(time.Until(end))
	receiver.start(t)
	back := time.Now()
	t.Logf("receiver down for %s", back.Sub(down).Round(time.Second))

	waitFor(t, "every delivery to finish", 4*time.Minute, func() bool {
		for _, d := range deliveries() {
			if d.Status == store.DeliveryPending {
				return false
			}
		}
		return true
	})
	ds := deliveries()
	arrived, bad := receiver.snapshot()
	var during, old, lost, twice, notDelivered, early, windowAttempts int
	var worstLate time.Duration
	var lastArrival time.Time
	for _, d := range ds {
		if !d.CreatedAt.Before(down) && d.CreatedAt.Before(back) {
			during++
			if back.Sub(d.CreatedAt) > scheduleSpan {
				old++
			}
		}
		if d.Status != store.DeliveryDelivered {
			notDelivered++
		}
		switch n := len(arrived[d.ID]); {
		case n == 0:
			lost++
		case n > 1:
			twice++
		default:
			if arrived[d.ID][0].After(lastArrival) {
				lastArrival = arrived[d.ID][0]
			}
		}
		log, err := st.ListDeliveryAttempts(ctx, d.ID)
		must(t, err)
		for i := 1; i < len(log); i++ {
			want := alertevent.Backoff(i)
			gap := log[i].At.Sub(log[i-1].At)
			if gap < want-250*time.Millisecond {
				early++
				t.Logf("delivery %s: attempt %d came %s after attempt %d, schedule %s", d.ID, i+1, gap, i, want)
			}
			worstLate = max(worstLate, gap-want)
			if i+1 > alertevent.MaxAttempts {
				windowAttempts++
			}
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].CreatedAt.Before(ds[j].CreatedAt) })
	t.Logf("%d deliveries, %d queued during the outage (%d of them more than %s before its end); %d attempts after the 6th; bad signatures %d",
		len(ds), during, old, scheduleSpan, windowAttempts, bad)
	record(t, fmt.Sprintf("deliveries queued during a %s receiver outage", back.Sub(down).Round(time.Second)),
		fmt.Sprintf("%d (%d of them more than %s before it ended)", during, old, scheduleSpan), "> 0", during > 0)
	record(t, "deliveries lost (queued vs received)", fmt.Sprintf("%d of %d", lost, len(ds)), "0", lost == 0 && notDelivered == 0)
	recordCount(t, "deliveries received more than once (by X-Service-Delivery)", twice, 0)
	recordCount(t, "attempts earlier than the schedule (5, 10, 20, 40, 80 s, then every 80 s)", early, 0)
	record(t, "worst lateness of an attempt against the schedule", worstLate.Round(100*time.Millisecond).String(), "≤ 3s (the worker polls every 1 s)", worstLate <= 3*time.Second)
	if !lastArrival.IsZero() {
		after := lastArrival.Sub(back)
		record(t, "last delivery after the receiver came back", after.Round(100*time.Millisecond).String(), "≤ 82s (one 80 s interval)", after <= 82*time.Second)
	}
	recordCount(t, "deliveries with a bad signature", bad, 0)
}
