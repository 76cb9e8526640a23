package manager_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// TestEveryReplicaServes: with leader election on, a replica that is not the
// leader still serves the direct API (REST, probe API, webhooks) and the
// aggregated API, and reports ready only once they are bound. Before this
// held, the listeners ran on the leader only, so half of the connections that
// a Service spread over two replicas were refused.
func TestEveryReplicaServes(t *testing.T) {
	// Its subject is the start-up of replicas: the first runs with leader
	// election on, instead of the package's manager.
	env := testenv.Use(t, env)
	dir := t.TempDir()
	opts := func(db string) manager.Options {
		return manager.Options{
			LeaderElection: true, LeaderElectionNamespace: "default",
			APIListen: "127.0.0.1:0", AggregatedListen: "127.0.0.1:0",
			Store: filepath.Join(dir, db), AllowPrivateTargets: true,
		}
	}
	env.RunManager(t, opts("leader.db"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := env.Manager.APIAddr(ctx); err != nil {
		t.Fatalf("the first replica never served the API: %v", err)
	}

	// The second replica: its own webhook port and store file (only its
	// listeners are under test); the first holds the leader lease.
	replica := opts("second.db")
	replica.WebhookHost, replica.WebhookCertDir = "127.0.0.1", env.WebhookCertDir()
	replica.WebhookPort = freePort(t)
	health := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	replica.HealthAddr, replica.MetricsAddr, replica.SkipNameValidation = health, "0", true
	second, err := manager.New(env.Config, replica)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- second.Start(runCtx) }()
	defer func() { stop(); <-done }()

	apiAddr, err := second.APIAddr(ctx)
	if err != nil {
		t.Fatalf("a replica that is not the leader never served the direct API: %v", err)
	}
	aggAddr, err := second.AggregatedAddr(ctx)
	if err != nil {
		t.Fatalf("a replica that is not the leader never served the aggregated API: %v", err)
	}
	resp, err := http.Get("http://" + apiAddr + "/probe/v1/assignments?region=x")
	if err != nil {
		t.Fatalf("probe API on the second replica: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("probe API without a token on the second replica: %d, want 401", resp.StatusCode)
	}
	if c, err := net.DialTimeout("tcp", aggAddr, 5*time.Second); err != nil {
		t.Fatalf("aggregated listener of the second replica: %v", err)
	} else {
		c.Close()
	}
	for {
		resp, err := http.Get("http://" + health + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("the second replica never became ready (last: %v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
