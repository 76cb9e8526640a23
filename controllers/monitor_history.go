package controllers

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

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
