package apiserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// Bounded work per request (issue 36 row 5, docs/rest-api.md "Bounded
// work per request"): every endpoint that takes a list of ids refuses an
// over-limit list before any lookup, and resolves a list of the maximum
// size, known or unknown ids, with a constant number of requests to
// kube-apiserver. The server under test reaches kube-apiserver only through
// a client whose transport counts every request; its reads of the
// manager's informer cache cost none.

const (
	boundedNS       = "bounded-ws"
	boundedMonitors = 1000
	maxIDs          = 500
)

// apiCalls counts the requests a client sends to kube-apiserver.
type apiCalls struct {
	mu            sync.Mutex
	reads, writes int
	// conflicts are the writes kube-apiserver refused with 409: a
	// controller's status write the cache had not seen yet. Each costs
	// one read and one write again, and no test can prevent the race.
	conflicts int
	log       []string
}

func (c *apiCalls) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		c.mu.Lock()
		if r.Method == http.MethodGet {
			c.reads++
		} else {
			c.writes++
		}
		if len(c.log) < 20 {
			c.log = append(c.log, r.Method+" "+r.URL.Path)
		}
		c.mu.Unlock()
		resp, err := rt.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusConflict {
			c.mu.Lock()
			c.conflicts++
			c.mu.Unlock()
		}
		return resp, err
	})
}

func (c *apiCalls) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads, c.writes, c.conflicts, c.log = 0, 0, 0, nil
}

// counts are the reads and the writes since reset, less one of each per
// write refused with a conflict (the retry's read and write), and the first
// requests.
func (c *apiCalls) counts() (reads, writes int, log string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	log = strings.Join(c.log, ", ")
	if c.conflicts > 0 {
		log += fmt.Sprintf(" (%d conflicts)", c.conflicts)
	}
	return c.reads - c.conflicts, c.writes - c.conflicts, log
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// countedServer is a server built from opts whose every request to
// kube-apiserver (writes, and reads that bypass the cache) goes through a
// counting transport; its cached reads are the manager's cache, as in
// production.
func countedServer(opts apiserver.Options, cfg *rest.Config, calls *apiCalls) (*apiserver.Server, error) {
	counted := rest.CopyConfig(cfg)
	counted.WrapTransport = calls.wrap
	c, err := client.New(counted, client.Options{Scheme: manager.Scheme(), Cache: &client.CacheOptions{Reader: env.Manager.GetCache()}})
	if err != nil {
		return nil, err
	}
	direct, err := client.New(counted, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		return nil, err
	}
	opts.Client, opts.Reader, opts.CredentialSecrets = c, direct, direct
	return apiserver.New(opts), nil
}

// seedMonitors creates n paused, keyed Monitors in ns straight on the API
// server (eight at a time) and returns their uids once the manager's cache
// holds them all.
func seedMonitors(ns string, n int) ([]string, error) {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	// env.Client keeps client-go's default 5 requests a second: a
	// thousand creates would take minutes. kube-apiserver's own fairness
	// is enough here.
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	seeder, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		return nil, err
	}
	next := make(chan int)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("m-%04d", i)},
					Spec: monv1.MonitorSpec{Name: fmt.Sprintf("Monitor %d", i), URL: fmt.Sprintf("https://93.184.216.34/m/%d", i),
						Paused: true, Key: fmt.Sprintf("k-%04d", i)}}
				if err := seeder.Create(ctx, m); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("create monitor %d: %w", i, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var list monv1.MonitorList
		if err := env.Manager.GetClient().List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		if len(list.Items) >= n {
			ids := make([]string, 0, len(list.Items))
			for i := range list.Items {
				ids = append(ids, string(list.Items[i].UID))
			}
			return ids, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the cache holds %d of %d monitors", len(list.Items), n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// unknownIDs are n UUIDs that name nothing.
func unknownIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(uuid.NewUUID())
	}
	return out
}

// boundedLab is the workspace of the bounded-work tests and benchmark: a
// namespace of boundedMonitors Monitors, a group, a status page, a webhook
// connection and a maintenance window, and a counted server.
type boundedLab struct {
	server                    *apiserver.Server
	calls                     *apiCalls
	known, unknown            []string
	group, page, conn, window string
}

// newBoundedLab builds the lab on the suite's control plane.
func newBoundedLab() *boundedLab {
	newWorkspace(boundedNS, "pro")
	l := &boundedLab{calls: &apiCalls{}}
	var err error
	l.server, err = countedServer(suiteOptions(), env.Config, l.calls)
	Expect(err).NotTo(HaveOccurred())
	ids, err := seedMonitors(boundedNS, boundedMonitors)
	Expect(err).NotTo(HaveOccurred())
	l.known, l.unknown = ids[:maxIDs], unknownIDs(maxIDs)

	rec := l.do("POST", "/monitor-groups", "standard", map[string]any{"name": "Payments"})
	Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
	l.group = obj(rec)["id"].(string)
	rec = l.do("POST", "/status/pages", "standard", map[string]any{"title": "Bounded"})
	Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
	l.page = obj(rec)["id"].(string)
	rec = l.do("POST", "/integrations/webhook/connections", "automation", map[string]any{"webhook_url": "https://93.184.216.34/hook"})
	Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
	l.conn = obj(rec)["connection_id"].(string)
	start := time.Now().Add(24 * time.Hour).UTC()
	rec = l.do("POST", "/maintenance", "owner", map[string]any{"title": "Window", "starts_at": start.Format(time.RFC3339),
		"ends_at": start.Add(time.Hour).Format(time.RFC3339)})
	Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())
	l.window = obj(rec)["id"].(string)
	return l
}

// do sends a request to the lab's server with the workspace's key of level
// ("owner": the owner through the aggregated front door).
func (l *boundedLab) do(method, path, level string, body any) *httptest.ResponseRecorder {
	if level == "owner" {
		return doOn(l.server, method, path, "", body, asUser(boundedNS, "owner"))
	}
	return doOn(l.server, method, path, key(boundedNS, level), body)
}

// boundedCase is one request with a list of ids.
type boundedCase struct {
	method, path, level string
	body                any
}

// cases are the list endpoints, each with a list of the maximum size of
// ids (the given ones), as they are sent.
func (l *boundedLab) cases(ids []string) map[string]boundedCase {
	specs := make([]any, len(ids))
	for i, id := range ids {
		specs[i] = map[string]any{"key": fmt.Sprintf("k-%04d", i), "name": fmt.Sprintf("Monitor %d", i),
			"url": fmt.Sprintf("https://93.184.216.34/m/%d", i), "paused": true, "group_id": id}
	}
	entries := make([]any, len(ids))
	for i, id := range ids {
		entries[i] = map[string]any{"monitor_id": id}
	}
	start := time.Now().Add(48 * time.Hour).UTC()
	return map[string]boundedCase{
		"routing monitor_ids": {"PUT", "/integrations/connections/" + l.conn + "/routing", "automation",
			map[string]any{"scope": "monitors", "monitor_ids": ids}},
		"routing group_ids": {"PUT", "/integrations/connections/" + l.conn + "/routing", "automation",
			map[string]any{"scope": "groups", "group_ids": ids}},
		"connection update routing": {"PUT", "/integrations/connections/" + l.conn, "automation",
			map[string]any{"routing": map[string]any{"scope": "monitors", "monitor_ids": ids}}},
		"bulk add_tags":        {"POST", "/monitors/bulk", "standard", map[string]any{"action": "add_tags", "ids": ids, "tags": []string{"bulk"}}},
		"bulk move_group":      {"POST", "/monitors/bulk", "standard", map[string]any{"action": "move_group", "ids": ids, "group_id": l.group}},
		"status page monitors": {"PUT", "/status/pages/" + l.page + "/monitors", "standard", map[string]any{"monitors": entries}},
		"maintenance create": {"POST", "/maintenance", "owner", map[string]any{"title": "Many", "starts_at": start.Format(time.RFC3339),
			"ends_at": start.Add(time.Hour).Format(time.RFC3339), "monitor_ids": ids}},
		"maintenance update": {"PATCH", "/maintenance/" + l.window, "owner", map[string]any{"scope": "monitors", "monitor_ids": ids}},
		"automation plan":    {"POST", "/automation/monitors/plan", "read-only", map[string]any{"monitors": specs}},
	}
}

// send sends c and returns the answer and the kube-apiserver requests it
// cost.
func (l *boundedLab) send(c boundedCase) (rec *httptest.ResponseRecorder, reads, writes int, log string) {
	l.calls.reset()
	rec = l.do(c.method, c.path, c.level, c.body)
	reads, writes, log = l.calls.counts()
	return rec, reads, writes, log
}

var _ = Describe("Bounded work per request", Ordered, func() {
	var lab *boundedLab

	BeforeAll(func() { lab = newBoundedLab() })

	It("refuses one id over each limit before any lookup, naming the list", func() {
		over := append(slices0(lab.unknown), string(uuid.NewUUID()))
		start := time.Now().Add(72 * time.Hour).UTC()
		for name, c := range map[string]struct {
			boundedCase
			field string
		}{
			"routing monitor_ids": {boundedCase{"PUT", "/integrations/connections/" + lab.conn + "/routing", "automation",
				map[string]any{"scope": "monitors", "monitor_ids": over}}, "monitor_ids"},
			"routing group_ids": {boundedCase{"PUT", "/integrations/connections/" + lab.conn + "/routing", "automation",
				map[string]any{"scope": "groups", "group_ids": over}}, "group_ids"},
			"connection create routing": {boundedCase{"POST", "/integrations/webhook/connections", "automation",
				map[string]any{"webhook_url": "https://93.184.216.34/other", "routing": map[string]any{"scope": "monitors", "monitor_ids": over}}}, "routing.monitor_ids"},
			"bulk": {boundedCase{"POST", "/monitors/bulk", "standard", map[string]any{"action": "move_group", "ids": over, "group_id": lab.group}}, "ids"},
			"status page monitors": {boundedCase{"PUT", "/status/pages/" + lab.page + "/monitors", "standard",
				map[string]any{"monitors": func() []any {
					out := make([]any, len(over))
					for i, id := range over {
						out[i] = map[string]any{"monitor_id": id}
					}
					return out
				}()}}, "monitors"},
			"maintenance monitor_ids": {boundedCase{"POST", "/maintenance", "owner", map[string]any{"title": "Over", "starts_at": start.Format(time.RFC3339),
				"ends_at": start.Add(time.Hour).Format(time.RFC3339), "monitor_ids": over}}, "monitor_ids"},
			"maintenance group_ids": {boundedCase{"PATCH", "/maintenance/" + lab.window, "owner", map[string]any{"scope": "groups", "group_ids": over[:101]}}, "group_ids"},
			"automation plan": {boundedCase{"POST", "/automation/monitors/plan", "read-only", map[string]any{"monitors": func() []any {
				out := make([]any, len(over))
				for i := range over {
					out[i] = map[string]any{"key": fmt.Sprintf("over-%d", i), "name": "x", "url": "https://93.184.216.34/"}
				}
				return out
			}()}}, "monitors"},
		} {
			rec, reads, writes, log := lab.send(c.boundedCase)
			Expect(rec.Code).To(Equal(http.StatusBadRequest), name+": "+rec.Body.String())
			body := obj(rec)
			Expect(body["code"]).To(Equal("VALIDATION_ERROR"), name)
			Expect(validationFields(body)).To(Equal([]string{c.field}), name+": "+rec.Body.String())
			Expect(reads+writes).To(BeZero(), name+": "+log)
		}
	})

	It("answers the maximum number of unknown ids with a constant number of kube-apiserver requests", func() {
		for name, c := range lab.cases(lab.unknown) {
			rec, reads, writes, log := lab.send(c)
			// One uncached list per kind looked up (monitors, groups),
			// and nothing written.
			Expect(reads).To(BeNumerically("<=", 2), name+": "+log)
			Expect(writes).To(BeZero(), name+": "+log)
			switch c.path {
			case "/monitors/bulk":
				Expect(rec.Code).To(Equal(http.StatusOK), name+": "+rec.Body.String())
				res := obj(rec)
				Expect(res["updated"]).To(BeEquivalentTo(0), name)
				Expect(res["failed"]).To(HaveLen(maxIDs), name)
			default:
				Expect(rec.Code).To(Equal(http.StatusBadRequest), name+": "+rec.Body.String())
				Expect(obj(rec)["code"]).To(Equal("VALIDATION_ERROR"), name)
				Expect(len(validationFields(obj(rec)))).To(BeNumerically(">=", maxIDs), name)
			}
		}
	})

	It("resolves the maximum number of known ids with a constant number of reads", func() {
		for name, c := range lab.cases(lab.known) {
			if strings.Contains(name, "group") || name == "automation plan" {
				continue // the known ids are monitors'; plans are below
			}
			rec, reads, writes, log := lab.send(c)
			Expect(rec.Code).To(BeNumerically("<", 300), name+": "+rec.Body.String())
			if c.path != "/monitors/bulk" {
				// The page, routing or window is read fresh once and
				// written once; the ids cost no request.
				Expect(reads).To(BeNumerically("<=", 2), name+": "+log)
				Expect(writes).To(BeNumerically("<=", 1), name+": "+log)
				continue
			}
			// One write per monitor (each is its own object) and no read
			// per monitor: each is written as the cache gave it (a write
			// refused with a conflict is read and written again, which
			// counts deducts).
			Expect(obj(rec)["updated"]).To(BeEquivalentTo(maxIDs), name)
			fmt.Fprintf(GinkgoWriter, "%s: %d reads, %d writes, %s\n", name, reads, writes, log)
			Expect(writes).To(Equal(maxIDs), name+": "+log)
			Expect(reads).To(BeNumerically("<=", 1), name+": "+log)
		}
		var page monv1.StatusPageList
		Expect(k8s.List(ctx, &page, client.InNamespace(boundedNS))).To(Succeed())
		Expect(page.Items).To(HaveLen(1))
		Expect(page.Items[0].Spec.Monitors).To(HaveLen(maxIDs))
		Expect(monitorCR(boundedNS, lab.known[0]).Spec.Tags).To(ContainElement("bulk"))
	})

	It("plans the maximum number of specs of existing monitors with a constant number of reads", func() {
		specs := make([]any, maxIDs)
		for i := range specs {
			specs[i] = map[string]any{"key": fmt.Sprintf("k-%04d", i), "name": fmt.Sprintf("Monitor %d", i),
				"url": fmt.Sprintf("https://93.184.216.34/m/%d", i), "paused": true}
		}
		rec, reads, writes, log := lab.send(boundedCase{"POST", "/automation/monitors/plan", "read-only", map[string]any{"monitors": specs}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["changes"]).To(HaveLen(maxIDs))
		Expect(reads).To(BeNumerically("<=", 2), log)
		Expect(writes).To(BeZero(), log)
	})

	It("finds a monitor created a moment ago by another writer (read-your-writes) within the same bound", func() {
		m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: boundedNS, Name: "just-made"},
			Spec: monv1.MonitorSpec{Name: "Just made", URL: "https://93.184.216.34/new", Paused: true}}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		ids := append(slices0(lab.unknown[:maxIDs-1]), string(m.UID))
		rec, reads, writes, log := lab.send(boundedCase{"POST", "/monitors/bulk", "standard", map[string]any{"action": "resume", "ids": ids}})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)["updated"]).To(BeEquivalentTo(1))
		// One uncached list finds it; a write that conflicts with the
		// controller's first status write is read and written again.
		Expect(reads).To(BeNumerically("<=", 3), log)
		Expect(writes).To(BeNumerically("<=", 3), log)
		Expect(monitorCR(boundedNS, string(m.UID)).Spec.Paused).To(BeFalse())
	})
})

// slices0 is a copy of s that appends do not share.
func slices0(s []string) []string { return append([]string(nil), s...) }

// BenchmarkBoundedRequests times the list endpoints at their maximum size
// against a namespace of 1,000 Monitors on a real control plane (make
// bench), with known and with unknown ids, and reports the kube-apiserver
// requests of each as well. The requirement it measures: a 500-item list
// answers in well under a second.
func BenchmarkBoundedRequests(b *testing.B) {
	if env == nil {
		startBenchEnv(b)
	}
	lab := newBoundedLab()
	for _, set := range []struct {
		name string
		ids  []string
	}{{"unknown", lab.unknown}, {"known", lab.known}} {
		for name, c := range lab.cases(set.ids) {
			b.Run(strings.ReplaceAll(name, " ", "_")+"/"+set.name, func(b *testing.B) {
				var reads, writes int
				start := time.Now()
				for i := 0; i < b.N; i++ {
					// Past every rate-limit window: the benchmark measures
					// the work, not the limits.
					clk.SetTime(clk.Now().Add(16 * time.Minute))
					rec, r, w, _ := lab.send(c)
					if rec.Code == http.StatusTooManyRequests || rec.Code >= 500 {
						b.Fatalf("%s: %d %s", name, rec.Code, rec.Body.String())
					}
					reads, writes = reads+r, writes+w
				}
				elapsed := time.Since(start)
				b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(b.N), "ms/req")
				b.ReportMetric(float64(reads)/float64(b.N), "apiserver-reads/req")
				b.ReportMetric(float64(writes)/float64(b.N), "apiserver-writes/req")
			})
		}
	}
}

// startBenchEnv starts what the suite's BeforeSuite starts, for a benchmark
// run alone (-run '^$'); Gomega failures fail the benchmark.
func startBenchEnv(b *testing.B) {
	RegisterFailHandler(func(message string, _ ...int) { b.Fatal(message) })
	var err error
	env, err = startEnv(b.TempDir())
	if err != nil {
		b.Skipf("no control plane: %v", err)
	}
	b.Cleanup(env.Stop)
	k8s = env.Client
	Expect(k8s.Create(ctx, &monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "free"}})).To(Succeed())
	Expect(k8s.Create(ctx, &monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "pro"}, Spec: monv1.PlanSpec{Features: plans.AllFeatures()}})).To(Succeed())
	Expect(k8s.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "eu-1"}})).To(Succeed())
	st, err = sqlite.Open(ctx, filepath.Join(b.TempDir(), "history.db"), sqlite.Options{})
	Expect(err).NotTo(HaveOccurred())
	b.Cleanup(func() { _ = st.Close() })
	clk = clocktesting.NewFakePassiveClock(time.Now())
	eng = &fakeEngine{store: st, client: env.Manager.GetClient()}
	public = &fakePublic{}
	srv = apiserver.New(suiteOptions())
}
