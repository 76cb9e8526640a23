package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// result is what one backend's run measured.
type result struct {
	backend, machine string
	n, interval      int
	loadStart        string
	loadEnd          string

	createTook   time.Duration
	createErrors int
	created      int // through kube-apiserver and the webhooks
	seeded       int // written straight into etcd
	seedTook     time.Duration
	// existing Monitors were in place before the manager started (a kept
	// -data directory); then the manager's start is the cold start.
	existing int
	// createCPU is the CPU time kube-apiserver, etcd and the manager
	// spent during the creates.
	createCPU  map[string]time.Duration
	reconciled time.Duration // from the first create until all are Ready
	// readyWrites is kube-apiserver's rate of Monitor status writes and
	// readyCPU every control-plane process's CPU from the first create (or
	// the manager's start) until all were Ready, or until the run ended.
	readyWrites float64
	readyCPU    map[string]time.Duration
	readyWall   time.Duration
	// readyAtEnd Monitors were Ready at the end of the run, readyEndAfter
	// after the first create, when not all of them were.
	readyAtEnd    int
	readyEndAfter time.Duration
	scheduled     time.Duration // from the first create until the agent has all
	coldStart     time.Duration // from the restart until the agent has all again
	coldRecon     time.Duration // from the restart until the monitor work queue drained
	coldBase      time.Duration // a bare informer's list and sync of the same Monitors

	steady               time.Duration
	managerCPU, agentCPU float64 // cores
	// steadyCPU is every process's CPU time in the steady window, and
	// machineBusy the share of all CPUs busy then (from /proc/stat).
	steadyCPU              map[string]time.Duration
	machineBusy            float64
	managerRSS, agentRSS   int64
	checksPerSec           float64
	storedPerSec           float64 // results the manager stored, per second
	bufferedEnd            float64 // results the agent held at the window's end
	ingestLagP99           string
	scheduleLagP99         string
	writes                 map[string]float64 // per second, by "VERB resource/subresource"
	statusWrites           float64
	restListP50, restList  time.Duration // p50 and p99 of GET /monitors
	restListN              int
	restListBytes          int
	restListErr            []string
	restGetRate            float64
	restGetP99             time.Duration
	restGetErr             int
	detect                 []time.Duration
	detectMissing          int
	managerRSSAfterCreated int64
}

// runBackend runs every phase against one store backend.
func runBackend(ctx context.Context, o options, bin, dir, backend string) (*result, error) {
	r := &result{backend: backend, machine: machine(), n: o.n, interval: o.interval, loadStart: loadAvg()}
	store := ""
	switch backend {
	case "sqlite":
		store = filepath.Join(dir, "uptime.db")
		if o.data != "" {
			store = filepath.Join(o.data, "uptime.db")
		}
	case "postgres":
		dsn := os.Getenv("UPTIME_TEST_POSTGRES_DSN")
		if dsn == "" {
			return nil, errors.New(`UPTIME_TEST_POSTGRES_DSN is not set (eval "$(hack/postgres.sh | tail -n1)")`)
		}
		schema := fmt.Sprintf("bench_scale_%d", time.Now().Unix())
		drop, err := createSchema(ctx, dsn, schema)
		if err != nil {
			return nil, err
		}
		if !o.keep {
			defer drop()
		}
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		store = dsn + sep + "search_path=" + schema
		r.backend = "postgres (schema " + schema + ")"
	default:
		return nil, fmt.Errorf("unknown backend %q (sqlite or postgres)", backend)
	}

	targets, err := startTargets(o.n, 4, o.data)
	if err != nil {
		return nil, err
	}
	defer targets.close()
	// 256 keys: the per-key limit is 1,200 requests a minute.
	cl, err := startCluster(ctx, bin, dir, store, 256, o.data)
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	w := newWatcher(cl.cfg)
	// The watch ends before the control plane stops (deferred calls run
	// last first): kube-apiserver waits for open watches when stopping.
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go w.run(wctx)

	start := time.Now()
	if cl.existing >= o.n {
		// Every Monitor is in place: the manager's start was a cold start.
		r.existing, start = cl.existing, cl.managerStarted
		r.coldBase = cl.baseline
		say("%d Monitors in place: timing the manager's start as a cold start", cl.existing)
	} else {
		// Create the Monitors, as fast as the apiserver and the webhooks
		// take them. Those an earlier run created are not created again
		// (the last few, created side by side, may be: they exist).
		through := o.n
		if o.viaWebhooks > 0 {
			through = min(o.n, o.viaWebhooks)
		}
		if from := max(0, cl.existing-o.creators); from < through {
			say("creating Monitors %d to %d with %d concurrent creates", from, through-1, o.creators)
			before := cpuOf(cl)
			r.createErrors, err = createMonitors(ctx, cl, targets, o, from, through)
			if err != nil {
				return nil, err
			}
			r.created, r.createTook = through-from, time.Since(start)
			after := cpuOf(cl)
			r.createCPU = map[string]time.Duration{}
			for k, v := range after {
				r.createCPU[k] = v - before[k]
			}
			say("created in %s; CPU meanwhile: %s", r.createTook.Round(time.Second), cpuText(r.createCPU, r.createTook))
		}
		if through < o.n {
			say("writing Monitors %d to %d straight into etcd", through, o.n-1)
			t0 := time.Now()
			if err := seedMonitors(ctx, cl, targets, through, o.n, o.interval); err != nil {
				return nil, err
			}
			r.seeded, r.seedTook = o.n-max(through, cl.existing), time.Since(t0)
			say("written in %s", r.seedTook.Round(time.Second))
		}
		if o.createOnly {
			say("%d reconciled, the agent's count is printed below", w.ready())
			r.loadEnd = loadAvg()
			return r, nil
		}
	}

	// The measurements go on once every Monitor is scheduled; status
	// writes are paced, so "all Ready" may come later: a watch of the
	// harness's own records when, for as long as the run lasts.
	readyAt := make(chan time.Time, 1)
	kc, err := kubernetes.NewForConfig(cl.cfg)
	if err != nil {
		return nil, err
	}
	// kube-apiserver's counters of status writes and the CPU so far: the
	// status writes of a cold start are all its own (kube-apiserver
	// started with it), those of a create run are counted from here.
	writes0, cpu0 := statusWritesOf(ctx, kc), cpuOf(cl)
	if r.existing > 0 {
		writes0 = 0
	}
	readyPhase := func(end time.Time) {
		r.readyWall = end.Sub(start)
		r.readyWrites = (statusWritesOf(ctx, kc) - writes0) / time.Since(start).Seconds()
		r.readyCPU = map[string]time.Duration{}
		for k, v := range cpuOf(cl) {
			r.readyCPU[k] = v - cpu0[k]
		}
	}
	go func() {
		for ctx.Err() == nil {
			if w.ready() >= o.n {
				t := time.Now()
				readyPhase(t)
				readyAt <- t
				return
			}
			time.Sleep(time.Second)
		}
	}()
	defer func() {
		select {
		case t := <-readyAt:
			r.reconciled = t.Sub(start)
		default:
			r.readyAtEnd, r.readyEndAfter = w.ready(), time.Since(start)
			readyPhase(time.Now())
		}
	}()
	var scheduledAt time.Time
	err = wait.PollUntilContextTimeout(ctx, time.Second, o.reconcileTO, true, func(context.Context) (bool, error) {
		if cl.manager.exited() || cl.agent.exited() {
			return false, fmt.Errorf("a process exited; see %s", cl.dir)
		}
		sched, _ := scrapeGauge(cl.agentMetrics, "uptime_probe_scheduled_monitors")
		now := time.Now()
		if int(sched) >= o.n {
			scheduledAt = now
		}
		if now.Second()%10 == 0 {
			say("%s: %d Ready, %d scheduled", now.Sub(start).Round(time.Second), w.ready(), int(sched))
		}
		return !scheduledAt.IsZero(), nil
	})
	if err != nil {
		return r, fmt.Errorf("waiting for scheduling: %w", err)
	}
	r.scheduled = scheduledAt.Sub(start)
	if r.existing > 0 {
		r.coldStart = r.scheduled
	}
	if u, err := cl.manager.usage(); err == nil {
		r.managerRSSAfterCreated = u.rss
	}
	say("all scheduled after %s; %d Ready", r.scheduled.Round(time.Second), w.ready())
	if o.waitReady {
		say("waiting until every Monitor is Ready (-wait-ready)")
		err := wait.PollUntilContextTimeout(ctx, time.Second, o.reconcileTO, true, func(context.Context) (bool, error) {
			if cl.manager.exited() {
				return false, fmt.Errorf("the manager exited; see %s", cl.dir)
			}
			n := w.ready()
			if time.Now().Second()%10 == 0 {
				say("%s: %d Ready", time.Since(start).Round(time.Second), n)
			}
			return n >= o.n, nil
		})
		if err != nil {
			return r, fmt.Errorf("waiting for Ready: %w", err)
		}
		// The watcher's goroutine records the figures within a second.
		for len(readyAt) == 0 && ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
		}
	}

	// One interval so that every monitor has been checked and its first
	// status written, then the steady window.
	say("waiting one interval (%d s) before the steady window", o.interval)
	if err := sleepCtx(ctx, time.Duration(o.interval)*time.Second); err != nil {
		return r, err
	}
	if err := steadyWindow(ctx, cl, r, o.steady); err != nil {
		return r, err
	}
	if err := restLoad(ctx, cl, w, r, o); err != nil && ctx.Err() != nil {
		return r, err
	}
	if err := detection(ctx, cl, w, targets, r, o); err != nil {
		return r, err
	}
	if o.coldStart && r.existing == 0 {
		if err := coldStart(ctx, cl, r, o); err != nil {
			return r, err
		}
	}
	r.loadEnd = loadAvg()
	return r, nil
}

// createSchema makes a fresh PostgreSQL schema for the run.
func createSchema(ctx context.Context, dsn, schema string) (drop func(), err error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return nil, fmt.Errorf("create schema: %w", err)
	}
	return func() {
		c, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	}, nil
}

// targets are HTTP servers on 127.0.0.1; monitor i checks
// http://<server i mod k>/m/i, which answers 200 "ok" until i is turned
// bad, then 503.
type targets struct {
	addrs []string
	bad   []atomic.Bool
	srvs  []*http.Server
}

// With data set the addresses are kept in data/targets: Monitors that an
// earlier run created point at them, so a later run listens there again.
func startTargets(n, k int, data string) (*targets, error) {
	var addrs []string
	keep := ""
	if data != "" {
		keep = filepath.Join(data, "targets")
		if b, err := os.ReadFile(keep); err == nil {
			addrs = strings.Fields(string(b))
		}
	}
	t := &targets{bad: make([]atomic.Bool, n)}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/m/"))
		if err != nil || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		if t.bad[i].Load() {
			http.Error(w, "bad", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	for i := range k {
		addr := "127.0.0.1:0"
		if i < len(addrs) {
			addr = addrs[i]
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.close()
			return nil, err
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.srvs = append(t.srvs, srv)
		t.addrs = append(t.addrs, ln.Addr().String())
	}
	if keep != "" {
		if err := os.WriteFile(keep, []byte(strings.Join(t.addrs, "\n")), 0o644); err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

func (t *targets) url(i int) string { return fmt.Sprintf("http://%s/m/%d", t.addrs[i%len(t.addrs)], i) }

func (t *targets) close() {
	for _, s := range t.srvs {
		_ = s.Close()
	}
}

func monitorName(i int) string { return fmt.Sprintf("bench-%06d", i) }

// createMonitors creates monitors 0..n-1, retrying each a few times (the
// webhooks answer slowly when the manager is busy).
func createMonitors(ctx context.Context, cl *cluster, t *targets, o options, from, to int) (errs int, err error) {
	next := make(chan int)
	var failed atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for range o.creators {
		wg.Go(func() {
			for i := range next {
				m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: monitorName(i), Namespace: workspaceNS}}
				m.Spec = monv1.MonitorSpec{Name: fmt.Sprintf("Bench %d", i), Type: monv1.MonitorHTTP, URL: t.url(i),
					IntervalSeconds: int32(o.interval), Regions: []string{regionCode}}
				var err error
				for try := range 8 {
					if err = cl.c.Create(ctx, m.DeepCopy()); err == nil || strings.Contains(err.Error(), "already exists") {
						err = nil
						break
					}
					if ctx.Err() != nil {
						return
					}
					time.Sleep(time.Duration(250<<try) * time.Millisecond)
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}
	last := time.Now()
	for i := from; i < to; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
		}
		if time.Since(last) > 10*time.Second {
			say("  %d created", i)
			last = time.Now()
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if f := failed.Load(); f > 0 {
		say("%d creates failed; the first: %v", f, firstErr.Load())
	}
	return int(failed.Load()), nil
}

// steadyWindow measures CPU, RSS, checks, lags and apiserver writes over d.
func steadyWindow(ctx context.Context, cl *cluster, r *result, d time.Duration) error {
	say("steady window of %s", d)
	kc, err := kubernetes.NewForConfig(cl.cfg)
	if err != nil {
		return err
	}
	apiBefore, err := apiserverWrites(ctx, kc)
	if err != nil {
		return err
	}
	mBefore, err := scrape(cl.managerMetrics)
	if err != nil {
		return err
	}
	aBefore, err := scrape(cl.agentMetrics)
	if err != nil {
		return err
	}
	mu0, err := cl.manager.usage()
	if err != nil {
		return err
	}
	au0, err := cl.agent.usage()
	if err != nil {
		return err
	}
	all0 := everyCPU(cl)
	busy0, total0 := machineCPU()
	t0 := time.Now()
	// RSS is the largest seen in the window.
	tick := time.NewTicker(5 * time.Second)
	deadline := time.After(d)
loop:
	for {
		select {
		case <-ctx.Done():
			tick.Stop()
			return ctx.Err()
		case <-deadline:
			break loop
		case <-tick.C:
			if u, err := cl.manager.usage(); err == nil {
				r.managerRSS = max(r.managerRSS, u.rss)
			}
			if u, err := cl.agent.usage(); err == nil {
				r.agentRSS = max(r.agentRSS, u.rss)
			}
		}
	}
	tick.Stop()
	secs := time.Since(t0).Seconds()
	mu1, err := cl.manager.usage()
	if err != nil {
		return err
	}
	au1, err := cl.agent.usage()
	if err != nil {
		return err
	}
	r.managerRSS, r.agentRSS = max(r.managerRSS, mu1.rss), max(r.agentRSS, au1.rss)
	r.managerCPU = (mu1.cpu - mu0.cpu).Seconds() / secs
	r.agentCPU = (au1.cpu - au0.cpu).Seconds() / secs
	r.steady = time.Duration(secs * float64(time.Second))
	r.steadyCPU = map[string]time.Duration{}
	for k, v := range everyCPU(cl) {
		r.steadyCPU[k] = v - all0[k]
	}
	if busy1, total1 := machineCPU(); total1 > total0 {
		r.machineBusy = (busy1 - busy0) / (total1 - total0)
	}
	apiAfter, err := apiserverWrites(ctx, kc)
	if err != nil {
		return err
	}
	r.writes = map[string]float64{}
	for k, v := range apiAfter {
		if dv := v - apiBefore[k]; dv > 0 {
			r.writes[k] = dv / secs
			if strings.HasSuffix(k, "/status") {
				r.statusWrites += dv / secs
			}
		}
	}
	mAfter, err := scrape(cl.managerMetrics)
	if err != nil {
		return err
	}
	aAfter, err := scrape(cl.agentMetrics)
	if err != nil {
		return err
	}
	r.ingestLagP99 = quantile(mBefore, mAfter, "uptime_operator_ingest_lag_seconds", 0.99)
	r.scheduleLagP99 = quantile(aBefore, aAfter, "uptime_probe_schedule_lag_seconds", 0.99)
	r.checksPerSec = (sumPrefix(aAfter, "uptime_probe_checks_total") - sumPrefix(aBefore, "uptime_probe_checks_total")) / secs
	r.storedPerSec = (sumPrefix(mAfter, "uptime_operator_check_results_total") - sumPrefix(mBefore, "uptime_operator_check_results_total")) / secs
	r.bufferedEnd = sumPrefix(aAfter, "uptime_probe_buffered_results")
	return nil
}

// apiserverWrites reads kube-apiserver's apiserver_request_total for
// Monitors, by "VERB monitors[/subresource]", write verbs only.
// statusWritesOf is kube-apiserver's count of Monitor status writes so
// far (0 when its metrics cannot be read).
func statusWritesOf(ctx context.Context, kc *kubernetes.Clientset) float64 {
	m, _ := apiserverWrites(ctx, kc)
	n := 0.0
	for k, v := range m {
		if strings.HasSuffix(k, "/status") {
			n += v
		}
	}
	return n
}

func apiserverWrites(ctx context.Context, kc *kubernetes.Clientset) (map[string]float64, error) {
	raw, err := kc.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver metrics: %w", err)
	}
	out := map[string]float64{}
	for _, s := range parseMetrics(string(raw)) {
		if s.name != "apiserver_request_total" || s.labels["resource"] != "monitors" {
			continue
		}
		verb := s.labels["verb"]
		switch verb {
		case "POST", "PUT", "PATCH", "DELETE", "APPLY":
		default:
			continue
		}
		key := verb + " monitors"
		if sub := s.labels["subresource"]; sub != "" {
			key += "/" + sub
		}
		out[key] += s.value
	}
	return out, nil
}

// restLoad measures GET /monitors and GET /monitors/:id while the checks
// go on.
func restLoad(ctx context.Context, cl *cluster, w *watcher, r *result, o options) error {
	hc := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	get := func(path string, key string) (int, int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cl.apiURL+path, nil)
		if err != nil {
			return 0, 0, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := hc.Do(req)
		if err != nil {
			return 0, 0, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, int(n), err
	}
	say("REST GET /monitors for %s", o.restWindow)
	var lat []time.Duration
	end := time.Now().Add(o.restWindow)
	// At least one request, each given at most a minute: a list that
	// takes longer is reported, and the run goes on.
	listHC := &http.Client{Timeout: time.Minute, Transport: hc.Transport}
	for i := 0; time.Now().Before(end) || i < 1; i++ {
		t := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cl.apiURL+"/monitors", nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+cl.keys[i%len(cl.keys)])
		resp, err := listHC.Do(req)
		if err != nil {
			r.restListErr = append(r.restListErr, err.Error())
			continue
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			r.restListErr = append(r.restListErr, fmt.Sprintf("status %d, %v", resp.StatusCode, err))
			continue
		}
		lat = append(lat, time.Since(t))
		r.restListBytes = int(n)
	}
	r.restListN = len(lat)
	r.restListP50, r.restList = percentile(lat, 0.5), percentile(lat, 0.99)

	say("REST GET /monitors/:id with %d clients for %s", o.restClients, o.restWindow)
	ids := w.uids()
	if len(ids) < 1000 {
		// The watcher has not listed them yet (at 100,000 on a busy
		// machine its paged list can take minutes): read some by name.
		ids = nil
		for i := 0; i < o.n && len(ids) < 1000; i += max(1, o.n/1000) {
			if uid, err := uidOf(ctx, cl, w, monitorName(i)); err == nil {
				ids = append(ids, uid)
			}
		}
	}
	if len(ids) == 0 {
		return errors.New("no monitor uids seen")
	}
	var mu sync.Mutex
	var all []time.Duration
	var errs atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(o.restWindow)
	t0 := time.Now()
	for c := range o.restClients {
		wg.Go(func() {
			var mine []time.Duration
			for i := c; time.Now().Before(stop); i += o.restClients {
				t := time.Now()
				code, _, err := get("/monitors/"+ids[rand.IntN(len(ids))], cl.keys[i%len(cl.keys)])
				if err != nil || code != http.StatusOK {
					errs.Add(1)
					continue
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	r.restGetRate = float64(len(all)) / time.Since(t0).Seconds()
	r.restGetP99 = percentile(all, 0.99)
	r.restGetErr = int(errs.Load())
	return nil
}

// detection turns o.bad targets bad at one instant and polls GET
// /incidents until each of their monitors has an open incident.
func detection(ctx context.Context, cl *cluster, w *watcher, t *targets, r *result, o options) error {
	if o.bad == 0 {
		return nil
	}
	uidToIndex := map[string]int{}
	want := map[string]bool{}
	step := o.n / o.bad
	for k := range o.bad {
		i := k * step
		uid, err := uidOf(ctx, cl, w, monitorName(i))
		if err != nil {
			return err
		}
		uidToIndex[uid] = i
		want[uid] = true
	}
	say("turning %d targets bad; polling GET /incidents for their incidents", o.bad)
	turned := time.Now()
	for _, i := range uidToIndex {
		t.bad[i].Store(true)
	}
	defer func() {
		for _, i := range uidToIndex {
			t.bad[i].Store(false)
		}
	}()
	hc := &http.Client{Timeout: 30 * time.Second}
	seen := map[string]time.Duration{}
	limit := time.Duration(3*o.interval)*time.Second + time.Minute
	for len(seen) < len(want) && time.Since(turned) < limit {
		for page := 1; ; page++ {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet,
				fmt.Sprintf("%s/incidents?status=ongoing&page_size=100&page=%d", cl.apiURL, page), nil)
			req.Header.Set("Authorization", "Bearer "+cl.keys[page%len(cl.keys)])
			resp, err := hc.Do(req)
			if err != nil {
				return fmt.Errorf("GET /incidents: %w", err)
			}
			var body struct {
				Items []struct {
					MonitorID string `json:"monitor_id"`
				} `json:"items"`
			}
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err != nil {
				return fmt.Errorf("GET /incidents: %w", err)
			}
			now := time.Since(turned)
			for _, it := range body.Items {
				if want[it.MonitorID] {
					if _, ok := seen[it.MonitorID]; !ok {
						seen[it.MonitorID] = now
					}
				}
			}
			if len(body.Items) < 100 {
				break
			}
		}
		if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	for _, d := range seen {
		r.detect = append(r.detect, d)
	}
	r.detectMissing = len(want) - len(seen)
	return nil
}

// uidOf is the uid of the Monitor name: as the watcher saw it, else read
// from kube-apiserver.
func uidOf(ctx context.Context, cl *cluster, w *watcher, name string) (string, error) {
	if uid := w.uid(name); uid != "" {
		return uid, nil
	}
	var m monv1.Monitor
	if err := cl.c.Get(ctx, client.ObjectKey{Namespace: workspaceNS, Name: name}, &m); err != nil {
		return "", fmt.Errorf("no uid for %s: %w", name, err)
	}
	return string(m.UID), nil
}

// coldStart restarts the manager and the agent with every Monitor in
// place and times until the agent has all of them scheduled again.
func coldStart(ctx context.Context, cl *cluster, r *result, o options) error {
	say("cold start: restarting the manager and the agent")
	cl.agent.stop()
	cl.manager.stop()
	// The baseline runs while no manager does, against the same server.
	n, base, err := informerSync(ctx, cl.cfg)
	if err != nil {
		return err
	}
	r.coldBase = base
	say("cold start: a bare informer listed and synced %d Monitors in %s", n, base.Round(time.Millisecond))
	restart := func(p *proc) (*proc, error) {
		args := p.cmd.Args[1:]
		var env []string
		for _, e := range p.cmd.Env {
			if strings.HasPrefix(e, "KUBECONFIG=") {
				env = append(env, e)
			}
		}
		return startProc(p.cmd.Path, args, env, p.logPath+".restart")
	}
	t0 := time.Now()
	if cl.manager, err = restart(cl.manager); err != nil {
		return err
	}
	if cl.agent, err = restart(cl.agent); err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, o.reconcileTO, true, func(context.Context) (bool, error) {
		if cl.manager.exited() {
			return false, errors.New("the manager exited after the restart")
		}
		sched, _ := scrapeGauge(cl.agentMetrics, "uptime_probe_scheduled_monitors")
		return int(sched) >= o.n, nil
	})
	if err != nil {
		return fmt.Errorf("cold start: %w", err)
	}
	r.coldStart = time.Since(t0)
	say("cold start: all scheduled after %s", r.coldStart.Round(100*time.Millisecond))
	// The manager reconciles every Monitor after a restart; the work queue
	// drains when that is done.
	err = wait.PollUntilContextTimeout(ctx, time.Second, o.reconcileTO, true, func(context.Context) (bool, error) {
		depth, err := scrapeGauge(cl.managerMetrics, `workqueue_depth{controller="monitor",name="monitor"}`)
		return err == nil && depth == 0 && time.Since(t0) > 5*time.Second, nil
	})
	if err == nil {
		r.coldRecon = time.Since(t0)
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func percentile(xs []time.Duration, q float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func runCmd(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func (r *result) print(out io.Writer) {
	mib := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	fmt.Fprintf(out, "\nbench-scale: %d HTTP Monitors, %d s interval, one region, store %s\n", r.n, r.interval, r.backend)
	fmt.Fprintf(out, "machine: %s; load average at start %s, at end %s\n", r.machine, r.loadStart, r.loadEnd)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(k, v, goal string) { fmt.Fprintf(tw, "  %s\t%s\t%s\n", k, v, goal) }
	row("figure", "measured", "goal")
	from := "from the first create"
	if r.existing > 0 {
		from = "from the manager's start"
		row("Monitors already in place (created by an earlier run, kept with -data)", strconv.Itoa(r.existing), "")
	} else {
		if r.created > 0 {
			row(fmt.Sprintf("create %d Monitors (kube-apiserver + webhooks)", r.created), fmt.Sprintf("%s (%.0f/s, %d failed)", r.createTook.Round(time.Second),
				float64(r.created)/r.createTook.Seconds(), r.createErrors), "")
			row("  CPU during the creates (of 2 cores)", cpuText(r.createCPU, r.createTook), "")
		}
		if r.seeded > 0 {
			row(fmt.Sprintf("write %d more straight into etcd (-via-webhooks)", r.seeded), r.seedTook.Round(time.Second).String(), "")
		}
	}
	if r.scheduled > 0 {
		row("all scheduled on the agent, "+from, r.scheduled.Round(100*time.Millisecond).String(), "≤ 120s")
		if r.reconciled > 0 {
			row("all status Ready (observedGeneration current), "+from, r.reconciled.Round(time.Second).String(),
				fmt.Sprintf("≤ %ds (2 intervals)", 2*r.interval))
		} else {
			row("status Ready (observedGeneration current) at the end of the run", fmt.Sprintf("%d of %d, %s %s",
				r.readyAtEnd, r.n, r.readyEndAfter.Round(time.Second), from), fmt.Sprintf("all ≤ %ds (2 intervals)", 2*r.interval))
		}
		if r.readyWall > 0 {
			row("  status writes/s until then (kube-apiserver's count)", fmt.Sprintf("%.1f/s", r.readyWrites), "the pacing limit (100/s)")
			row("  CPU until then (of 2 cores)", cpuText(r.readyCPU, r.readyWall), "")
		}
	}
	if r.coldStart > 0 {
		row("cold start: manager+agent (re)started, until all scheduled", r.coldStart.Round(100*time.Millisecond).String(), "≤ 120s")
		row("  baseline: a bare informer lists and syncs the same Monitors", r.coldBase.Round(10*time.Millisecond).String(), "")
		row("  ratio (baseline ÷ cold start)", fmt.Sprintf("%.2f", r.coldBase.Seconds()/r.coldStart.Seconds()), "≥ 0.25")
		if r.coldRecon > 0 {
			row("cold start: until the monitor work queue drained", r.coldRecon.Round(time.Second).String(), "")
		}
	}
	if r.steady == 0 {
		tw.Flush()
		return
	}
	row(fmt.Sprintf("steady window (after one interval) %s: checks/s", r.steady.Round(time.Second)), fmt.Sprintf("%.0f", r.checksPerSec),
		fmt.Sprintf("%.0f (N / interval)", float64(r.n)/float64(r.interval)))
	row("  results stored by the manager per second", fmt.Sprintf("%.0f", r.storedPerSec), "")
	row("  results the agent still held at the window's end", fmt.Sprintf("%.0f", r.bufferedEnd), "")
	row("manager CPU / RSS (max in window)", fmt.Sprintf("%.2f cores / %s", r.managerCPU, mib(r.managerRSS)), "")
	row("agent CPU / RSS (max in window)", fmt.Sprintf("%.2f cores / %s", r.agentCPU, mib(r.agentRSS)), "")
	row("  every process's CPU in the window", cpuText(r.steadyCPU, r.steady), "")
	row(fmt.Sprintf("  the machine's %d CPUs busy", runtime.NumCPU()), fmt.Sprintf("%.0f%%", 100*r.machineBusy), "")
	row("manager RSS when all were scheduled", mib(r.managerRSSAfterCreated), "")
	row("ingest lag p99 (check start → stored)", r.ingestLagP99, "")
	row("agent schedule lag p99", r.scheduleLagP99, "")
	row("kube-apiserver status writes to Monitors", fmt.Sprintf("%.1f/s", r.statusWrites), "bounded")
	keys := make([]string, 0, len(r.writes))
	for k := range r.writes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		row("  "+k, fmt.Sprintf("%.1f/s", r.writes[k]), "")
	}
	row(fmt.Sprintf("REST GET /monitors (all, %.1f MB), %d requests", float64(r.restListBytes)/1e6, r.restListN),
		fmt.Sprintf("p50 %s, p99 %s", r.restListP50.Round(time.Millisecond), r.restList.Round(time.Millisecond)), "")
	if len(r.restListErr) > 0 {
		row("  REST GET /monitors failed", fmt.Sprintf("%d: %s", len(r.restListErr), r.restListErr[0]), "")
	}
	row("REST GET /monitors/:id", fmt.Sprintf("%.0f req/s, p99 %s, %d errors", r.restGetRate, r.restGetP99.Round(100*time.Microsecond), r.restGetErr),
		"≥ 400 req/s, p99 ≤ 100ms (2026-11-26 at 100,000: 455 req/s, p99 85ms)")
	if len(r.detect) > 0 || r.detectMissing > 0 {
		row(fmt.Sprintf("detection: %d targets turned bad → incident open (GET /incidents)", len(r.detect)+r.detectMissing),
			fmt.Sprintf("p50 %s, p99 %s, max %s, %d never", percentile(r.detect, 0.5).Round(100*time.Millisecond),
				percentile(r.detect, 0.99).Round(100*time.Millisecond), percentile(r.detect, 1).Round(100*time.Millisecond), r.detectMissing),
			fmt.Sprintf("p99 ≤ %ds", r.interval+5))
	}
	tw.Flush()
}

// cpuOf reads the CPU time of kube-apiserver, etcd and the manager.
func cpuOf(cl *cluster) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if u, err := controlPlaneUsage(name); err == nil {
			out[name] = u.cpu
		}
	}
	if u, err := cl.manager.usage(); err == nil {
		out["manager"] = u.cpu
	}
	return out
}

// everyCPU is cpuOf plus the agent and this program (its targets and
// watchers), so that the steady window shows who had the machine's CPUs.
func everyCPU(cl *cluster) map[string]time.Duration {
	out := cpuOf(cl)
	if u, err := cl.agent.usage(); err == nil {
		out["agent"] = u.cpu
	}
	if u, err := pidUsage(os.Getpid()); err == nil {
		out["bench-scale (targets, watchers)"] = u.cpu
	}
	return out
}

// machineCPU reads the busy and total jiffies of all CPUs from /proc/stat.
func machineCPU() (busy, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	for i, v := range f[1:] {
		n, _ := strconv.ParseFloat(v, 64)
		if i >= 8 { // guest time is already in user time
			break
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}

// cpuText shows CPU time over a wall time as cores, largest first.
func cpuText(cpu map[string]time.Duration, wall time.Duration) string {
	keys := make([]string, 0, len(cpu))
	for k := range cpu {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return int(cpu[b] - cpu[a]) })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f cores", k, cpu[k].Seconds()/wall.Seconds()))
	}
	return strings.Join(parts, ", ")
}
