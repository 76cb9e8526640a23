package manager_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// TestCacheHoldsNoManagedFields: the manager's cache strips managedFields,
// which were a large part of every cached Monitor (one entry per writer),
// while kube-apiserver keeps them, and writes through the cached object
// (the controller's status patch) still work.
func TestCacheHoldsNoManagedFields(t *testing.T) {
	env := testenv.Use(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := env.Client.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "cache"}}); err != nil {
		t.Fatal(err)
	}
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "cached", Namespace: "default"},
		Spec: monv1.MonitorSpec{URL: "https://example.com/", IntervalSeconds: 60}}
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(m)
	// The controller's status write is a second field manager on the server.
	var server monv1.Monitor
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, key, &server); err != nil {
			return false, err
		}
		return server.Status.ObservedGeneration == server.Generation, nil
	}); err != nil {
		t.Fatalf("the monitor was never reconciled: %v", err)
	}
	if len(server.ManagedFields) == 0 {
		t.Fatal("kube-apiserver holds no managedFields for the monitor; the test proves nothing")
	}
	var cached monv1.Monitor
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := env.Manager.GetClient().Get(ctx, key, &cached)
		return err == nil && cached.ResourceVersion == server.ResourceVersion, nil
	}); err != nil {
		t.Fatalf("the cache never caught up with resourceVersion %s: %v", server.ResourceVersion, err)
	}
	if len(cached.ManagedFields) != 0 {
		t.Fatalf("the cached monitor holds %d managedFields entries, want none", len(cached.ManagedFields))
	}
}
