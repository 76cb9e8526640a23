package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

var (
	env    *testenv.Env
	k8s    client.Client
	ctx    = context.Background()
	st     store.Store
	eng    *fakeEngine
	clk    *clocktesting.FakePassiveClock
	srv    *apiserver.Server
	public *fakePublic

	// API keys by name: "<namespace>/<level>".
	keys = map[string]string{}
)

// startEnv starts the suite's control plane and manager: BeforeSuite, or
// startBenchEnv for a benchmark run alone. The manager's own store goes to
// a file in dir; the API under test gets the store BeforeSuite opens.
func startEnv(dir string) (*testenv.Env, error) {
	return testenv.Start(manager.Options{DefaultPlan: "free", AllowPrivateTargets: true, Store: filepath.Join(dir, "manager.db")})
}

func TestAPIServer(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "REST API (envtest + SQLite)")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, err = startEnv(GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	k8s = env.Client

	for _, code := range []string{"eu-1", "us-1", "us-2"} {
		Expect(k8s.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: code}})).To(Succeed())
	}
	// "free" is the default plan: three monitors, no features.
	Expect(k8s.Create(ctx, &monv1.Plan{
		ObjectMeta: metav1.ObjectMeta{Name: "free"},
		Spec: monv1.PlanSpec{
			Limits:  monv1.PlanLimits{Monitors: 3, MinIntervalSeconds: 60, ProbeLocations: 2},
			Regions: []string{"eu-1", "us-1"},
		},
	})).To(Succeed())
	// "starter" has status pages and deploy events; "pro" everything.
	Expect(k8s.Create(ctx, &monv1.Plan{
		ObjectMeta: metav1.ObjectMeta{Name: "starter"},
		Spec:       monv1.PlanSpec{Features: []monv1.Feature{monv1.FeatureStatusPages, monv1.FeatureDeployEvents, monv1.FeatureSLO}},
	})).To(Succeed())
	Expect(k8s.Create(ctx, &monv1.Plan{
		ObjectMeta: metav1.ObjectMeta{Name: "pro"},
		Spec:       monv1.PlanSpec{Features: plans.AllFeatures()},
	})).To(Succeed())
	for ns, plan := range map[string]string{"team": "pro", "other": "pro", "free-ws": ""} {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if plan != "" {
			n.Labels = map[string]string{monv1.PlanLabel: plan}
		}
		Expect(k8s.Create(ctx, n)).To(Succeed())
	}
	for _, k := range []struct {
		ns    string
		level apikeys.Level
	}{{"team", apikeys.ReadOnly}, {"team", apikeys.Standard}, {"team", apikeys.Automation},
		{"other", apikeys.Standard}, {"other", apikeys.Automation}, {"free-ws", apikeys.Standard}, {"free-ws", apikeys.Automation}} {
		full, _, err := apikeys.Create(ctx, k8s, k.ns, string(k.level)+" key", k.level)
		Expect(err).NotTo(HaveOccurred())
		keys[k.ns+"/"+string(k.level)] = full
	}

	st, err = sqlite.Open(ctx, filepath.Join(GinkgoT().TempDir(), "history.db"), sqlite.Options{})
	Expect(err).NotTo(HaveOccurred())
	clk = clocktesting.NewFakePassiveClock(time.Now())
	eng = &fakeEngine{store: st, client: env.Manager.GetClient()}
	public = &fakePublic{}
	srv = apiserver.New(suiteOptions())
	// Wait until the cache serves the API keys.
	Eventually(func() int { return do("GET", "/automation/whoami", key("team", "standard"), nil).Code }).
		WithTimeout(30 * time.Second).Should(Equal(http.StatusOK))
})

var _ = AfterSuite(func() {
	coretest.ReportContract(GinkgoWriter)
	if st != nil {
		_ = st.Close()
	}
	if env != nil {
		env.Stop()
	}
})

// suiteOptions are the options of the suite's server; specs that need other
// options build their own server from them.
func suiteOptions() apiserver.Options {
	monitors, err := apiserver.InformerMonitors(ctx, env.Manager.GetCache())
	Expect(err).NotTo(HaveOccurred())
	return apiserver.Options{
		Monitors:  monitors,
		Client:    env.Manager.GetClient(),
		Overlay:   env.Manager.Overlay(),
		Reader:    env.Manager.GetAPIReader(),
		Plans:     &plans.Resolver{Reader: env.Manager.GetClient(), DefaultPlan: "free"},
		Keys:      env.Manager.GetClient(),
		Store:     st,
		Engine:    eng,
		Public:    public,
		Clock:     clk,
		PublicURL: "https://uptime.example.com",
		// The suite's install has no OpenID provider.
		SSOUnavailable: statuspage.SSOUnavailable(statuspage.OIDC{}, "https://uptime.example.com"),

		AllowPrivateTargets: true,
	}
}

func key(ns, level string) string { return keys[ns+"/"+level] }

var ipSeq atomic.Int64

// request options.
type reqOpt func(*http.Request)

func fromIP(ip string) reqOpt { return func(r *http.Request) { r.RemoteAddr = ip + ":40000" } }
func header(k, v string) reqOpt {
	return func(r *http.Request) { r.Header.Set(k, v) }
}

// do sends a request to the API; every request comes from a fresh address
// unless fromIP says otherwise, so per-address limits do not leak between
// tests.
func do(method, path, apiKey string, body any, opts ...reqOpt) *httptest.ResponseRecorder {
	return doOn(srv, method, path, apiKey, body, opts...)
}

// doOn is do against another server (one built with other options).
func doOn(server *apiserver.Server, method, path, apiKey string, body any, opts ...reqOpt) *httptest.ResponseRecorder {
	var rd *bytes.Reader
	switch b := body.(type) {
	case nil:
		rd = bytes.NewReader(nil)
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		Expect(err).NotTo(HaveOccurred())
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	n := ipSeq.Add(1)
	req.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:40000", (n>>16)&255, (n>>8)&255, n&255)
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		o(req)
	}
	rec := httptest.NewRecorder()
	server.Handler().ServeHTTP(rec, req)
	// Every answer must match its operation in docs/openapi.json.
	if err := coretest.CheckAnswer(req, rec); err != nil {
		Fail(err.Error(), 1)
	}
	return rec
}

// obj decodes a JSON object response.
func obj(rec *httptest.ResponseRecorder) map[string]any {
	var m map[string]any
	ExpectWithOffset(1, json.Unmarshal(rec.Body.Bytes(), &m)).To(Succeed(), rec.Body.String())
	return m
}

// arr decodes a JSON array response.
func arr(rec *httptest.ResponseRecorder) []any {
	var a []any
	ExpectWithOffset(1, json.Unmarshal(rec.Body.Bytes(), &a)).To(Succeed(), rec.Body.String())
	return a
}

// fakeEngine implements apiserver.Engine on the real store, without quorum
// logic: enough to test the REST layer. The real engine is wired by the
// manager.
type fakeEngine struct {
	store  store.Store
	client client.Client

	mu    sync.Mutex
	pings []engine.Ping
	runs  []string
}

var _ apiserver.Engine = (*fakeEngine)(nil)

func (e *fakeEngine) OpenManualIncident(ctx context.Context, m *monv1.Monitor) (store.Incident, error) {
	return e.store.OpenIncident(ctx, store.Incident{Namespace: m.Namespace, MonitorID: string(m.UID), MonitorName: m.Spec.Name,
		MonitorURL: m.Spec.URL, MonitorType: string(m.Spec.Type), Confirmations: 1, ConfirmingRegions: []string{"eu-1"}, RegionsTotal: 2})
}

func (e *fakeEngine) ResolveIncident(ctx context.Context, id, note, by string) (store.Incident, error) {
	return e.store.ResolveIncident(ctx, id, time.Now(), true, note)
}

func (e *fakeEngine) AcknowledgeIncident(ctx context.Context, id, by string) (store.Incident, error) {
	inc, err := e.store.AcknowledgeIncident(ctx, id, by, time.Now())
	if err == store.ErrIncidentAcknowledged {
		return inc, nil
	}
	return inc, err
}

func (e *fakeEngine) HeartbeatByToken(ctx context.Context, token string, p engine.Ping) error {
	var list monv1.MonitorList
	if err := e.client.List(ctx, &list); err != nil {
		return err
	}
	for _, m := range list.Items {
		if monv1.HeartbeatTokenHash(&m) == monv1.HashHeartbeatToken(token) {
			return e.Heartbeat(ctx, &m, p)
		}
	}
	return engine.ErrUnknownToken
}

func (e *fakeEngine) Heartbeat(_ context.Context, m *monv1.Monitor, p engine.Ping) error {
	if m.Spec.Paused {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pings = append(e.pings, p)
	return nil
}

func (e *fakeEngine) lastPing() *engine.Ping {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.pings) == 0 {
		return nil
	}
	p := e.pings[len(e.pings)-1]
	return &p
}

func (e *fakeEngine) pingCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.pings)
}

func (e *fakeEngine) ExplainMonitor(_ context.Context, m *monv1.Monitor) (engine.Explanation, error) {
	return engine.Explanation{MonitorID: string(m.UID), State: "up", QuorumRule: "2 of 2", Fault: engine.FaultUnknown,
		Abstaining: []string{}, Votes: []engine.RegionVote{}, Findings: []string{}}, nil
}

func (e *fakeEngine) ExplainIncident(_ context.Context, inc store.Incident) (engine.Explanation, error) {
	id := inc.ID
	return engine.Explanation{MonitorID: inc.MonitorID, IncidentID: &id, State: "down", Fault: engine.FaultYours,
		Abstaining: []string{}, Votes: []engine.RegionVote{}, Findings: []string{"confirmed by 2 of 2 regions"}}, nil
}

func (e *fakeEngine) RunCheck(_ context.Context, m *monv1.Monitor, region string, save bool) (probeapi.Result, error) {
	e.mu.Lock()
	e.runs = append(e.runs, fmt.Sprintf("%s/%s/%v", m.Spec.Name, region, save))
	e.mu.Unlock()
	code := 200
	if region == "" {
		region = "eu-1"
	}
	return probeapi.Result{ID: "run-1", MonitorID: string(m.UID), Region: region, CheckedAt: time.Now(),
		Status: probeapi.StatusUp, StatusCode: &code, ResponseTimeMs: 42}, nil
}

// fakePublic records what the public status routes pass on.
type fakePublic struct {
	mu   sync.Mutex
	last string
}

func (p *fakePublic) ServeStatus(w http.ResponseWriter, _ *http.Request, slug, rest string) {
	p.mu.Lock()
	p.last = slug + "|" + rest
	p.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (p *fakePublic) form(name string) func(http.ResponseWriter, *http.Request, string) {
	return func(w http.ResponseWriter, _ *http.Request, slug string) {
		p.mu.Lock()
		p.last = name + "|" + slug
		p.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}
}

func (p *fakePublic) ServeLogin(w http.ResponseWriter, r *http.Request, slug string) {
	p.form("login")(w, r, slug)
}
func (p *fakePublic) ServeSubscribe(w http.ResponseWriter, r *http.Request, slug string) {
	p.form("subscribe")(w, r, slug)
}
func (p *fakePublic) ServeConfirm(w http.ResponseWriter, r *http.Request, slug string) {
	p.form("confirm")(w, r, slug)
}
func (p *fakePublic) ServeUnsubscribe(w http.ResponseWriter, r *http.Request, slug string) {
	p.form("unsubscribe")(w, r, slug)
}
func (p *fakePublic) ServeLogout(w http.ResponseWriter, r *http.Request, slug string) {
	p.form("logout")(w, r, slug)
}
func (p *fakePublic) ServeSSOStart(w http.ResponseWriter, r *http.Request, slug string) {
	p.form("sso")(w, r, slug)
}
func (p *fakePublic) ServeSSOCallback(w http.ResponseWriter, r *http.Request) {
	p.form("sso-callback")(w, r, "")
}

func (p *fakePublic) ServeHTML(w http.ResponseWriter, _ *http.Request, slug string) {
	p.mu.Lock()
	p.last = "html|" + slug
	p.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}
