package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// HistoryKeeper is the part of the store that carries a monitor's history
// from one generation of its object to the next (store.GenerationStore):
// history is keyed by metadata.uid, which a delete and re-create changes.
type HistoryKeeper interface {
	ClaimMonitorHistory(ctx context.Context, c store.HistoryClaim) (adopted string, err error)
	RetireMonitorHistory(ctx context.Context, id store.MonitorIdentity, at time.Time) error
}

// monitorIdentity is the generation m is: its UID and the names that
// outlive it.
func monitorIdentity(m *monv1.Monitor) store.MonitorIdentity {
	return store.MonitorIdentity{UID: string(m.UID), Namespace: m.Namespace, Name: m.Name, Key: m.Spec.Key, Type: string(m.Spec.Type)}
}

// reconcileHistory claims the monitor's generation in the store the first
// time this process sees it, adopting the history a deleted predecessor
// left (see monv1.AdoptHistoryFromAnnotation). It runs before the live
// state is read, so the status written by this reconcile already shows the
// adopted uptime and incidents.
func (r *MonitorReconciler) reconcileHistory(ctx context.Context, m *monv1.Monitor) error {
	if r.History == nil {
		return nil
	}
	uid := string(m.UID)
	if _, ok := r.claimed.Load(uid); ok {
		return nil
	}
	adopted, err := r.History.ClaimMonitorHistory(ctx, store.HistoryClaim{
		MonitorIdentity: monitorIdentity(m), AdoptFrom: monv1.HistorySource(m), At: m.CreationTimestamp.Time,
	})
	if err != nil {
		return fmt.Errorf("claim history: %w", err)
	}
	if adopted != "" {
		ctrl.LoggerFrom(ctx).Info("adopted the history of a deleted monitor", "previousUID", adopted)
	}
	r.claimed.Store(uid, struct{}{})
	return nil
}

// Claims made ahead of a paced first write (see prefetchClaim).
const (
	// claimQueue is how many claims wait for a claimer at most; past it
	// a Monitor claims in its own reconcile, as before.
	claimQueue = 1 << 17
	// claimers is how many claims are under way at once. With SQLite
	// they share the single writer's commits, so many in flight is many
	// per commit: with one claim per reconcile worker (32), a writer
	// whose commits also carried the agents' results took 1–2 s per
	// commit and first status writes after a cold create at 100,000 came
	// at 18 a second.
	claimers = 256
)

// claimPrefetch runs the claims of Monitors waiting for their first
// status write, off the reconcile workers, so that when each one's turn
// comes its claim is done (reconcileHistory then finds it claimed).
type claimPrefetch struct {
	queue chan *monv1.Monitor
}

// prefetchClaim queues m's claim when this process has not claimed it
// yet; it never blocks (a full queue leaves the claim to the reconcile).
func (r *MonitorReconciler) prefetchClaim(m *monv1.Monitor) {
	if r.History == nil || r.prefetch.queue == nil {
		return
	}
	if _, ok := r.claimed.Load(string(m.UID)); ok {
		return
	}
	// What a claim reads of m, not the whole object: the queue may hold
	// every Monitor of a bulk create.
	c := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name, UID: m.UID, CreationTimestamp: m.CreationTimestamp}}
	c.Spec.Key, c.Spec.Type = m.Spec.Key, m.Spec.Type
	if from, ok := m.Annotations[monv1.AdoptHistoryFromAnnotation]; ok {
		c.Annotations = map[string]string{monv1.AdoptHistoryFromAnnotation: from}
	}
	select {
	case r.prefetch.queue <- c:
	default:
	}
}

// startClaimPrefetch adds the claimers to mgr: they run while this
// replica leads, as the reconciles do.
func (r *MonitorReconciler) startClaimPrefetch(mgr ctrl.Manager) error {
	if r.History == nil {
		return nil
	}
	r.prefetch.queue = make(chan *monv1.Monitor, claimQueue)
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		var wg sync.WaitGroup
		for range claimers {
			wg.Go(func() {
				for {
					select {
					case <-ctx.Done():
						return
					case m := <-r.prefetch.queue:
						if err := r.reconcileHistory(ctx, m); err != nil && ctx.Err() == nil {
							ctrl.LoggerFrom(ctx).V(1).Info("claim ahead of the first status write failed; the reconcile claims", "monitor", m.Name, "error", err.Error())
						}
					}
				}
			})
		}
		wg.Wait()
		return nil
	}))
}

// retireHistory records in the store that the monitor was deleted; its
// history stays for a re-created monitor to adopt.
func (r *MonitorReconciler) retireHistory(ctx context.Context, m *monv1.Monitor) error {
	if r.History == nil {
		return nil
	}
	if err := r.History.RetireMonitorHistory(ctx, monitorIdentity(m), m.DeletionTimestamp.Time); err != nil {
		return fmt.Errorf("retire history of monitor %s: %w", m.Name, err)
	}
	r.claimed.Delete(string(m.UID))
	return nil
}
