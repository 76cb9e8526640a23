package engine_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
	"github.com/uptime-operator/uptime-operator/probes"
)

const managerNS = "uptime-operator-system"

var (
	env     *testenv.Env
	k8s     client.Client
	ctx     context.Context
	cancel  context.CancelFunc
	apiURL  string
	tmp     string
	target  *regionTarget
	regions = []string{"r1", "r2", "r3"}
)

// TestMain starts one control plane and the manager for the package: the
// suite's, with the probe API on a listener of its own; TestManagerKill
// runs its own manager process on the same control plane instead. The
// child process of TestManagerKill starts none.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(m.Run())
	}
	testenv.Main(m, manager.Options{AllowPrivateTargets: true, Namespace: managerNS, APIListen: "127.0.0.1:0"},
		func(e *testenv.Env) error {
			env = e
			return e.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNS}})
		})
}

func TestEngine(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Engine with real probe agents (envtest)")
}

// regionTarget is a loopback HTTP target whose answer depends on the
// probing region (agents name it in the X-Uptime-Probe-Region header), so a
// test can take it "down" from some vantage points only.
type regionTarget struct {
	*httptest.Server
	mu   sync.Mutex
	down map[string]bool
}

func (t *regionTarget) setDown(regions ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.down = map[string]bool{}
	for _, r := range regions {
		t.down[r] = true
	}
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.Background())
	tmp = GinkgoT().TempDir()
	target = &regionTarget{down: map[string]bool{}}
	target.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target.mu.Lock()
		down := target.down[r.Header.Get(probes.RegionHeader)]
		target.mu.Unlock()
		if down {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("hello"))
	}))

	env = testenv.Use(GinkgoTB(), env)
	k8s = env.Client
	addr, err := env.Manager.APIAddr(ctx)
	Expect(err).NotTo(HaveOccurred())
	apiURL = "http://" + addr

	for _, code := range regions {
		token := engine.NewHeartbeatToken()
		Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "token-" + code, Namespace: managerNS},
			Data:       map[string][]byte{probeserver.RegionTokenKey: []byte(token)},
		})).To(Succeed())
		Expect(k8s.Create(ctx, &monv1.ProbeRegion{
			ObjectMeta: metav1.ObjectMeta{Name: code},
			Spec: monv1.ProbeRegionSpec{Placement: monv1.ProbePlacement{
				Mode: monv1.PlacementRemote, TokenSecretRef: &monv1.SecretKeySelector{Name: "token-" + code, Key: probeserver.RegionTokenKey},
			}},
		})).To(Succeed())
		tokenFile := filepath.Join(tmp, code+".token")
		Expect(os.WriteFile(tokenFile, []byte(token), 0o600)).To(Succeed())
		// Agents run as goroutines against the manager's real probe API.
		// IntervalUnit compresses time: a 15 s interval runs every 300 ms.
		go func() {
			defer GinkgoRecover()
			_ = probes.RunAgent(ctx, probes.AgentOptions{
				Region: code, ServerURL: apiURL, TokenFile: tokenFile, AllowPrivate: true,
				IntervalUnit: 20 * time.Millisecond, FlushInterval: 100 * time.Millisecond, PollWait: 2 * time.Second,
			})
		}()
	}
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if target != nil {
		target.Close()
	}
})

// newMonitor creates an http monitor of the target in all three regions.
func newMonitor(name string, extra func(*monv1.Monitor)) *monv1.Monitor {
	m := &monv1.Monitor{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: monv1.MonitorSpec{
			URL: target.URL + "/" + name, IntervalSeconds: 15, Regions: regions,
			HTTP: &monv1.HTTPConfig{TimeoutMs: 2000},
		},
	}
	if extra != nil {
		extra(m)
	}
	Expect(k8s.Create(ctx, m)).To(Succeed())
	return m
}

func incidents(m *monv1.Monitor) []store.Incident {
	list, err := env.Manager.Store.ListIncidents(ctx, store.IncidentQuery{MonitorID: string(m.UID), Page: 1, PageSize: 100})
	Expect(err).NotTo(HaveOccurred())
	return list.Items
}

func get(m *monv1.Monitor) *monv1.Monitor {
	var out monv1.Monitor
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), &out)).To(Succeed())
	return &out
}
