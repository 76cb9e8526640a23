package statuspage_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/uptime-operator/uptime-operator/controllers"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// baseURL is the public base URL the suite configures.
const baseURL = "https://status.example.com"

var (
	env    *testenv.Env
	k8s    client.Client
	cached client.Client
	db     store.Store
	clk    *clocktesting.FakeClock
	public *statuspage.Public
	ctx    = context.Background()
	cancel context.CancelFunc
	ipSeq  atomic.Int64
	// suiteT is the suite's test, for its ArtifactDir (kept with -artifacts).
	suiteT *testing.T
)

func TestStatusPages(t *testing.T) {
	suiteT = t
	RegisterFailHandler(Fail)
	RunSpecs(t, "Status pages (envtest + SQLite)")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	// Reconciles that refresh status take seconds on a loaded 2-core
	// machine; Gomega's 1 s default made the suite flaky there.
	SetDefaultEventuallyTimeout(15 * time.Second)
	var err error
	// The manager's SQLite store is the one its engine and Monitor
	// controller read: specs write history there and let the real pipeline
	// derive Monitor status from it.
	// The OpenID provider of the single sign-on specs runs before the
	// manager, whose admission accepts sso pages only with a provider.
	oidcCfg := startSSOFixture()
	env, err = testenv.Start(manager.Options{AllowPrivateTargets: true, PublicURL: baseURL,
		Store: filepath.Join(GinkgoT().TempDir(), "uptime.db"), OIDC: oidcCfg})
	Expect(err).NotTo(HaveOccurred())
	k8s = env.Client
	db = env.Manager.Store

	// The handler's clock (sessions, rate limit, cache); the store keeps
	// real time, which the fake clock starts from.
	clk = clocktesting.NewFakeClock(time.Now().UTC().Truncate(time.Second))

	// The suite runs the StatusPage controller on a manager of its own, so it
	// does not depend on how internal/manager wires it (name validation is
	// skipped in case the shared manager runs it too).
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 manager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect((&controllers.StatusPageReconciler{Client: mgr.GetClient(), BaseURL: baseURL}).SetupWithManager(mgr)).To(Succeed())
	cached = mgr.GetClient()
	var mctx context.Context
	mctx, cancel = context.WithCancel(ctx)
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(mctx)).To(Succeed())
	}()
	Expect(mgr.GetCache().WaitForCacheSync(mctx)).To(BeTrue())

	public = &statuspage.Public{
		Reader:  cached,
		Secrets: k8s,
		Store:   db,
		Clock:   clk,
		BaseURL: baseURL,
	}
})

var _ = AfterSuite(func() {
	stopSSOFixture()
	if cancel != nil {
		cancel()
	}
	if env != nil {
		env.Stop()
	}
})

// nextIP returns a client address not used before, so specs do not share a
// rate-limit bucket unless they mean to.
func nextIP() string {
	n := ipSeq.Add(1)
	return fmt.Sprintf("198.51.%d.%d:40000", n/250, n%250+1)
}

// request builds a public request from a fresh client address.
func request(method, target string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = nextIP()
	return r
}

// serveStatus calls ServeStatus and returns the recorder.
func serveStatus(r *http.Request, slug, rest string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	public.ServeStatus(w, r, slug, rest)
	return w
}

// serveHTML calls ServeHTML and returns the recorder.
func serveHTML(r *http.Request, slug string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	public.ServeHTML(w, r, slug)
	return w
}

// expire moves the clock past the page data cache.
func expire() { clk.Step(statuspage.DefaultCacheTTL + time.Second) }

func httptestRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }
