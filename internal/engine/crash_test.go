package engine_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
	"github.com/uptime-operator/uptime-operator/probes"
)

// Environment of the child manager process of TestManagerKill.
const (
	childEnv      = "UPTIME_CRASH_CHILD"
	childKubecfg  = "UPTIME_CRASH_KUBECONFIG"
	childStore    = "UPTIME_CRASH_STORE"
	childAPI      = "UPTIME_CRASH_API"
	childWebhook  = "UPTIME_CRASH_WEBHOOK"
	childCertDir  = "UPTIME_CRASH_CERTDIR"
	crashRegionNS = managerNS
)

// crashRegions are TestManagerKill's regions, apart from the suite's.
var crashRegions = []string{"crash-1", "crash-2", "crash-3"}

// TestCrashChildManager is the manager process TestManagerKill kills; it
// does nothing unless started by that test.
func TestCrashChildManager(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("started only by TestManagerKill")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(childKubecfg))
	if err != nil {
		t.Fatal(err)
	}
	host, portStr, _ := net.SplitHostPort(os.Getenv(childWebhook))
	port, _ := strconv.Atoi(portStr)
	m, err := manager.New(cfg, manager.Options{
		MetricsAddr: "0", HealthAddr: "0", WebhookHost: host, WebhookPort: port, WebhookCertDir: os.Getenv(childCertDir),
		APIListen: os.Getenv(childAPI), Store: os.Getenv(childStore), Namespace: crashRegionNS, AllowPrivateTargets: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = m.Start(context.Background()) // until killed
}

// TestManagerKill kills the manager with SIGKILL while probe agents push
// results, restarts it, and checks that no result is lost or counted twice
// and that the outage yields exactly one incident.
func TestManagerKill(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		t.Skip("inside the child")
	}
	// Its subject is the manager's restart: the package's manager stops
	// for it, and the child process serves the webhooks instead.
	env := testenv.Use(t, env)
	env.StopForTest(t)
	dir := t.TempDir()
	kubeconfig, err := env.Kubeconfig(dir, "crash-admin", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	c := env.Client
	apiAddr := freeAddr(t)
	dbPath := filepath.Join(dir, "uptime.db")
	webhookHost, webhookPort := env.WebhookAddr()
	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestCrashChildManager$", "-test.timeout", "10m")
		cmd.Env = append(os.Environ(), childEnv+"=1", childKubecfg+"="+kubeconfig, childStore+"="+dbPath, childAPI+"="+apiAddr,
			childWebhook+"="+net.JoinHostPort(webhookHost, strconv.Itoa(webhookPort)), childCertDir+"="+env.WebhookCertDir())
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	proc := child()
	defer func() { _ = proc.Process.Kill(); _, _ = proc.Process.Wait() }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The target fails for crash-1 and crash-2 and answers crash-3: an
	// outage confirmed by two of three regions for the whole test.
	var hits sync.Map // region -> *atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		region := r.Header.Get(probes.RegionHeader)
		n, _ := hits.LoadOrStore(region, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		if region == crashRegions[2] {
			_, _ = w.Write([]byte("ok"))
			return
		}
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer target.Close()

	// The namespace is there (TestMain); creating a region waits for the
	// child's webhooks.
	agents := sync.WaitGroup{}
	for _, code := range crashRegions {
		token := engine.NewHeartbeatToken()
		mustT(t, c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tok-" + code, Namespace: crashRegionNS},
			Data: map[string][]byte{probeserver.RegionTokenKey: []byte(token)}}))
		waitUntil(t, "region "+code, func() bool {
			return c.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: code}, Spec: monv1.ProbeRegionSpec{
				Placement: monv1.ProbePlacement{Mode: monv1.PlacementRemote, TokenSecretRef: &monv1.SecretKeySelector{Name: "tok-" + code, Key: probeserver.RegionTokenKey}}}}) == nil
		})
		tokenFile := filepath.Join(dir, code+".token")
		mustT(t, os.WriteFile(tokenFile, []byte(token), 0o600))
		agents.Add(1)
		go func() {
			defer agents.Done()
			_ = probes.RunAgent(ctx, probes.AgentOptions{
				Region: code, ServerURL: "http://" + apiAddr, TokenFile: tokenFile, AllowPrivate: true,
				BufferDir: filepath.Join(dir, "buffer-"+code), IntervalUnit: 20 * time.Millisecond,
				FlushInterval: 100 * time.Millisecond, PollWait: time.Second,
			})
		}()
	}
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "crash", Namespace: env.Namespace(t, nil)},
		Spec: monv1.MonitorSpec{URL: target.URL, IntervalSeconds: 15, Regions: crashRegions, HTTP: &monv1.HTTPConfig{TimeoutMs: 2000}}}
	mustT(t, c.Create(ctx, m))
	waitUntil(t, "the first incident", func() bool {
		var got monv1.Monitor
		return c.Get(ctx, client.ObjectKeyFromObject(m), &got) == nil && got.Status.OpenIncident != nil
	})

	// Kill -9 while results flow, keep the agents running (they buffer),
	// restart after a pause.
	time.Sleep(500 * time.Millisecond)
	mustT(t, proc.Process.Signal(syscall.SIGKILL))
	_, _ = proc.Process.Wait()
	time.Sleep(2 * time.Second)
	proc = child()
	time.Sleep(4 * time.Second)

	// Stop the agents, give the last batches time to land, then stop the
	// manager and compare what the targets served with what was stored.
	cancel()
	agents.Wait()
	time.Sleep(2 * time.Second)
	_ = proc.Process.Signal(syscall.SIGTERM)
	_, _ = proc.Process.Wait()

	var served int64
	hits.Range(func(_, v any) bool { served += v.(*atomic.Int64).Load(); return true })
	st, err := sqlite.Open(context.Background(), dbPath, sqlite.Options{})
	mustT(t, err)
	defer st.Close()
	var got monv1.Monitor
	mustT(t, c.Get(context.Background(), client.ObjectKeyFromObject(m), &got))
	stats, err := st.Stats(context.Background(), store.StatsQuery{MonitorID: string(got.UID), From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour)})
	mustT(t, err)
	stored := stats.Total()
	// Checks with a response each reached the target once; a check that
	// timed out on a loaded machine before the target's handler ran is
	// stored without one and never counted as served.
	var answered int64
	q := store.ChecksQuery{MonitorID: string(got.UID), Limit: 500}
	for {
		page, next, err := st.ListChecks(context.Background(), q)
		mustT(t, err)
		for _, c := range page {
			if c.StatusCode != nil {
				answered++
			}
		}
		if next == nil {
			break
		}
		q.Before = next
	}
	t.Logf("checks served by the target: %d, stored: %d (%d with a response)", served, stored, answered)
	// Agents stopped by cancellation may drop the checks that were running
	// at that instant (at most one per region), never more; nothing may be
	// stored twice (ids are unique) nor lost across the kill.
	if answered > served || served-stored > 3 {
		t.Fatalf("stored %d checks (%d with a response) for %d served: results were lost or double-counted", stored, answered, served)
	}
	incidents, err := st.ListIncidents(context.Background(), store.IncidentQuery{MonitorID: string(got.UID), Page: 1, PageSize: 10})
	mustT(t, err)
	if len(incidents.Items) != 1 {
		for _, inc := range incidents.Items {
			t.Logf("incident %s started %s resolved %v regions %v", inc.ID, inc.StartedAt, inc.ResolvedAt, inc.ConfirmingRegions)
		}
		t.Fatalf("got %d incidents, want exactly 1 across the restart", len(incidents.Items))
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustT(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func mustT(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(fmt.Errorf("%w", err))
	}
}
