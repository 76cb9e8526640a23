package engine

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// Housekeeping intervals.
const (
	heartbeatEvery = 5 * time.Second
	// sweepEvery is how often the leader judges every monitor from the
	// store (SweepMonitors).
	sweepEvery = 10 * time.Second
	// sweepRate bounds the sweep's judgements per second: a judgement is a
	// store read or two, and judging 100,000 monitors every 10 s kept a
	// core busy. A sweep judges only the unsettled monitors (open incident,
	// failing votes, last-mile notice), except the first after an engine
	// starts, which judges all: 5,000 of them every 10 s, 100,000 in 200 s.
	// What only the sweep notices (a region gone stale after three
	// intervals, a warm-up's end) is noticed that much later; results
	// themselves are judged at once.
	sweepRate      = 500
	retentionEvery = time.Hour
)

// SetupWithManager registers the engine's cache indexes, forgets deleted
// monitors, and runs the heartbeat, sweep and retention loops
// (on the leader only, so HA replicas do not judge heartbeats twice).
func (e *Engine) SetupWithManager(ctx context.Context, mgr ctrl.Manager, retention time.Duration) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &monv1.Monitor{}, monv1.UIDIndex, func(o client.Object) []string {
		return []string{string(o.GetUID())}
	}); err != nil {
		return fmt.Errorf("index monitors by uid: %w", err)
	}
	if err := idx.IndexField(ctx, &monv1.Monitor{}, HeartbeatTokenIndex, func(o client.Object) []string {
		if h := monv1.HeartbeatTokenHash(o.(*monv1.Monitor)); h != "" {
			return []string{h}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index monitors by heartbeat token: %w", err)
	}
	if err := idx.IndexField(ctx, &monv1.Monitor{}, MonitorTypeIndex, func(o client.Object) []string {
		return []string{string(o.(*monv1.Monitor).Spec.Type)}
	}); err != nil {
		return fmt.Errorf("index monitors by type: %w", err)
	}
	inf, err := mgr.GetCache().GetInformer(ctx, &monv1.Monitor{})
	if err != nil {
		return fmt.Errorf("get informer: %w", err)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(o any) {
			if m, ok := o.(*monv1.Monitor); ok {
				e.Forget(string(m.UID))
			}
		},
	}); err != nil {
		return fmt.Errorf("watch monitor deletions: %w", err)
	}
	return mgr.Add(&housekeeping{e: e, retention: retention})
}

// sweepLoop sweeps the monitors, starting a sweep at most every
// sweepEvery, each paced to sweepRate judgements a second; the first sweep
// judges every monitor, the later ones the unsettled ones (see sweep).
func (h *housekeeping) sweepLoop(ctx context.Context) {
	for all := true; ; all = false {
		start := time.Now()
		if err := h.e.sweep(ctx, sweepRate, all); err != nil && ctx.Err() == nil {
			h.e.opts.Log.Error(err, "sweep monitors")
		}
		if !sleepCtx(ctx, sweepEvery-time.Since(start)) {
			return
		}
	}
}

// sleepCtx waits d (nothing when d ≤ 0) and reports whether ctx is still
// going.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return ctx.Err() == nil
}

// housekeeping runs the periodic work of the leader.
type housekeeping struct {
	e         *Engine
	retention time.Duration
}

// NeedLeaderElection keeps heartbeat judgement, the sweep and pruning on one
// replica.
func (h *housekeeping) NeedLeaderElection() bool { return true }

// Start runs until ctx ends.
func (h *housekeeping) Start(ctx context.Context) error {
	hb := time.NewTicker(heartbeatEvery)
	defer hb.Stop()
	prune := time.NewTicker(retentionEvery)
	defer prune.Stop()
	// The sweep runs on its own: paced, it takes longer than a heartbeat
	// tick once there are more than sweepEvery × sweepRate monitors.
	go h.sweepLoop(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-hb.C:
			_ = h.e.CheckHeartbeats(ctx)
		case <-prune.C:
			h.prune(ctx)
		}
	}
}

// prune deletes raw checks older than the retention in chunks; rollups stay,
// so long-range uptime is unaffected. The whole history of a monitor
// deleted longer ago than the retention, and not adopted by a re-created
// one, goes too (store.GenerationStore).
func (h *housekeeping) prune(ctx context.Context) {
	if n, err := h.e.RetireVanished(ctx); err != nil {
		h.e.opts.Log.Error(err, "retire vanished monitors")
	} else if n > 0 {
		h.e.opts.Log.Info("retired the history of monitors deleted without their finalizer", "monitors", n)
	}
	if h.retention <= 0 {
		return
	}
	cutoff := h.e.opts.Now().Add(-h.retention)
	n, err := h.e.opts.Store.PruneChecks(ctx, cutoff, 5000)
	if err != nil {
		h.e.opts.Log.Error(err, "prune checks")
		return
	}
	if n > 0 {
		h.e.opts.Log.Info("pruned raw checks", "deleted", n, "olderThan", cutoff)
	}
	if _, err := h.e.opts.Store.PruneRollups(ctx, time.Minute, h.e.opts.Now().Add(-h.retention)); err != nil {
		h.e.opts.Log.Error(err, "prune minute rollups")
	}
	n, err = h.e.opts.Store.PruneRetiredHistory(ctx, cutoff)
	if err != nil {
		h.e.opts.Log.Error(err, "prune history of deleted monitors")
		return
	}
	if n > 0 {
		h.e.opts.Log.Info("pruned history of deleted monitors", "monitors", n, "deletedBefore", cutoff)
	}
}

// RetireVanished retires, in the store, the generations of monitors that
// are gone although their history finalizer never ran (removed by hand, or
// a store that outlived its cluster), so their open incidents end and their
// history is pruned after the retention unless a re-created monitor adopts
// it (store.GenerationStore). Only the leader calls it, after the cache
// has synced: a generation is claimed from the cache, so one missing from
// it is gone. It returns how many it retired.
func (e *Engine) RetireVanished(ctx context.Context) (int, error) {
	gens, err := e.opts.Store.UnretiredGenerations(ctx)
	if err != nil {
		return 0, err
	}
	now := e.opts.Now()
	n := 0
	for _, g := range gens {
		m, err := e.monitorByUID(ctx, g.UID)
		if err != nil {
			return n, err
		}
		if m != nil {
			continue
		}
		if err := e.opts.Store.RetireMonitorHistory(ctx, g, now); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

var _ manager.LeaderElectionRunnable = (*housekeeping)(nil)
