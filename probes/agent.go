package probes

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/uptime-operator/uptime-operator/internal/backoff"
	"github.com/uptime-operator/uptime-operator/internal/httpserver"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// AgentOptions configure a probe agent; they mirror the flags of
// `uptime-operator probe`.
type AgentOptions struct {
	// Region is the ProbeRegion code (--region).
	Region string
	// ServerURL is the manager's probe API base URL (--server).
	ServerURL string
	// TokenFile holds the bearer token, reread per request (--token-file).
	TokenFile string
	// AllowPrivate lets checks reach private addresses (--allow-private).
	AllowPrivate bool
	// BrowserPath is the local Chromium of browser checks
	// (--browser-path); empty looks one up on PATH. A region's remote
	// browser (ProbeRegion spec.browser.endpoint) is used instead when set.
	BrowserPath string
	// BufferDir enables on-disk buffering of undelivered results (--buffer-dir).
	BufferDir string
	// Listen is the address of /healthz, /readyz and, unless MetricsListen
	// is set, /metrics (--listen); empty disables the listener.
	Listen string
	// MetricsListen, when set, is where /metrics is served instead
	// (--metrics-listen): over TLS with MetricsTLS, every scrape through
	// MetricsAuth. The probe command makes them what the manager's
	// --metrics-secure endpoint has: a self-signed certificate and
	// controller-runtime's filter, which answers only callers kube-apiserver
	// authenticates (TokenReview) and authorizes for get on the non-resource
	// URL /metrics (SubjectAccessReview).
	MetricsListen string
	MetricsTLS    *tls.Config
	MetricsAuth   func(http.Handler) (http.Handler, error)
	// AgentID names this agent in result batches; defaults to the hostname.
	AgentID string
	// HTTPClient talks to the manager (set its TLS roots for a private CA).
	HTTPClient *http.Client
	// Concurrency bounds simultaneous checks (default 64).
	Concurrency int
	// BatchSize flushes a batch at this many results (default 200).
	BatchSize int
	// FlushInterval flushes at least this often (default 2s).
	FlushInterval time.Duration
	// MaxBufferedInMemory bounds results held in memory (default 10000).
	MaxBufferedInMemory int
	// PollWait is the long-poll wait (default probeapi.DefaultWait).
	PollWait time.Duration
	// CallTimeout bounds a push, and a long poll beyond its wait (default
	// 30s). Over a link that silently drops packets a call otherwise hangs
	// until TCP gives up, about 15 minutes: pushes queue behind it and the
	// agent notices no failure.
	CallTimeout time.Duration
	// Log receives agent logs; callers give it the region's key/value (the
	// probe command and dev do), so lines do not repeat it.
	Log logr.Logger
	// Clock and IntervalUnit are for tests (see Scheduler).
	Clock        Clock
	IntervalUnit time.Duration
}

// Agent pulls its region's assignments from the manager, runs them on a
// Scheduler and pushes the results back in batches, buffering them while
// the manager is unreachable.
type Agent struct {
	// adhocSeen remembers ad-hoc requests already run.
	adhocMu   sync.Mutex
	adhocSeen map[string]time.Time

	Region    string
	AgentID   string
	Client    *probeapi.Client
	Scheduler *Scheduler
	Buffer    *Buffer
	Env       *Env

	batchSize     int
	flushInterval time.Duration
	pollWait      time.Duration
	callTimeout   time.Duration
	log           logr.Logger
	metrics       *metrics
	flushNow      chan struct{}
	urgentNow     chan struct{}
	ready         atomic.Bool
	// started is when this agent began: results checked before it were
	// left on disk by an earlier run, and are replayed.
	started time.Time
	// metricsElsewhere: /metrics has a listener of its own, not Handler's.
	metricsElsewhere bool
}

// NewAgent builds an agent from options.
func NewAgent(opts AgentOptions) (*Agent, error) {
	if opts.Region == "" || opts.ServerURL == "" {
		return nil, errors.New("region and server url are required")
	}
	id := opts.AgentID
	if id == "" {
		id, _ = os.Hostname()
	}
	client := &probeapi.Client{BaseURL: opts.ServerURL, HTTPClient: opts.HTTPClient, AgentID: id}
	if opts.TokenFile != "" {
		client.Token = probeapi.TokenFile(opts.TokenFile)
	}
	a := &Agent{
		Region:  opts.Region,
		AgentID: id,
		Client:  client,
		Buffer:  &Buffer{Dir: opts.BufferDir, MemoryLimit: opts.MaxBufferedInMemory},
		Env: &Env{Guard: netguard.Guard{AllowPrivate: opts.AllowPrivate}, Region: opts.Region, Log: opts.Log,
			Browsers: &Browsers{Path: opts.BrowserPath}},
		batchSize:     opts.BatchSize,
		flushInterval: opts.FlushInterval,
		pollWait:      opts.PollWait,
		callTimeout:   opts.CallTimeout,
		log:           opts.Log,
		flushNow:      make(chan struct{}, 1),
		urgentNow:     make(chan struct{}, 1),
		started:       time.Now(),

		metricsElsewhere: opts.MetricsListen != "",
	}
	if a.batchSize <= 0 {
		a.batchSize = 200
	}
	if a.flushInterval <= 0 {
		a.flushInterval = 2 * time.Second
	}
	if a.pollWait <= 0 {
		a.pollWait = probeapi.DefaultWait
	}
	if a.callTimeout <= 0 {
		a.callTimeout = 30 * time.Second
	}
	a.Scheduler = &Scheduler{Concurrency: opts.Concurrency, Clock: opts.Clock, IntervalUnit: opts.IntervalUnit, Run: a.runScheduled}
	a.metrics = newMetrics(
		func() float64 { return float64(a.Scheduler.InFlight()) },
		func() float64 { return float64(a.Buffer.Len()) },
		func() float64 { return float64(a.Buffer.Dropped()) },
		func() float64 { return float64(a.Scheduler.Len()) },
	)
	a.Scheduler.ObserveLag = func(d time.Duration) { a.metrics.lag.Observe(d.Seconds()) }
	a.Scheduler.OnSkip = func(*probeapi.Assignment) { a.metrics.skipped.Inc() }
	return a, nil
}

// RunAgent runs a probe agent until ctx ends: main.go's `probe` subcommand
// calls it with its flags.
func RunAgent(ctx context.Context, opts AgentOptions) error {
	a, err := NewAgent(opts)
	if err != nil {
		return err
	}
	if opts.Listen != "" {
		a.serve(ctx, opts.Listen, a.Handler(), nil)
	}
	if opts.MetricsListen != "" {
		if opts.MetricsTLS == nil || opts.MetricsAuth == nil {
			return errors.New("metrics listen address without TLS and authentication")
		}
		h, err := opts.MetricsAuth(a.MetricsHandler())
		if err != nil {
			return fmt.Errorf("metrics authentication: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", h)
		a.serve(ctx, opts.MetricsListen, mux, opts.MetricsTLS)
	}
	return a.Run(ctx)
}

// serve serves h on addr (over TLS when tlsConfig is set) until ctx ends.
func (a *Agent) serve(ctx context.Context, addr string, h http.Handler, tlsConfig *tls.Config) {
	srv := httpserver.New(h, httpserver.Limits{})
	srv.Addr, srv.TLSConfig = addr, tlsConfig
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	go func() {
		var err error
		if tlsConfig != nil {
			err = srv.ListenAndServeTLS("", "")
		} else {
			err = srv.ListenAndServe()
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error(err, "serve agent endpoints", "address", addr)
		}
	}()
}

// Run pulls assignments, runs checks and delivers results until ctx ends,
// then makes a last delivery attempt and spills what is left to disk.
func (a *Agent) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() { a.Scheduler.Start(ctx); close(done) }()
	go a.pollLoop(ctx)
	urgentDone := make(chan struct{})
	urgent, rest := &lane{peek: a.Buffer.PeekUrgent}, &lane{peek: a.Buffer.Peek}
	go func() { a.pushLoop(ctx, a.urgentNow, urgent); close(urgentDone) }()
	a.pushLoop(ctx, a.flushNow, rest)
	<-done
	<-urgentDone
	final, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a.flush(final, urgent)
	a.flush(final, rest)
	if err := a.Buffer.Spill(); err != nil {
		return fmt.Errorf("spill results at shutdown: %w", err)
	}
	return nil
}

// Handler serves /healthz (the process is alive), /readyz (assignments were
// received) and, unless they are served on a listener of their own
// (AgentOptions.MetricsListen), /metrics.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !a.ready.Load() {
			http.Error(w, "no assignments yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	if !a.metricsElsewhere {
		mux.Handle("GET /metrics", a.MetricsHandler())
	}
	return mux
}

// MetricsHandler serves the agent's metrics, uptime_probe_* and the Go
// and process collectors.
func (a *Agent) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(a.metrics.registry, promhttp.HandlerOpts{})
}

// pollBackoff spaces the polls after failures, 1 s doubling to 30 s, with
// half of each wait random so that the agents of every region do not poll
// a restarted manager in step.
var pollBackoff = backoff.Policy{Base: time.Second, Max: 30 * time.Second, Jitter: 0.5}

// pollLoop long-polls the manager and updates the schedule.
func (a *Agent) pollLoop(ctx context.Context) {
	revision := ""
	failures := 0
	for ctx.Err() == nil {
		pollCtx, cancel := context.WithTimeout(ctx, a.pollWait+a.callTimeout)
		list, err := a.Client.Assignments(pollCtx, a.Region, revision, a.pollWait)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			a.log.Error(err, "poll assignments")
			sleep(ctx, pollBackoff.Delay(failures))
			failures++
			continue
		}
		failures = 0
		if list == nil {
			continue
		}
		runnable := make([]probeapi.Assignment, 0, len(list.Assignments))
		for _, as := range list.Assignments {
			if Supported(as.Type) {
				runnable = append(runnable, as)
			}
		}
		a.Env.Browsers.Configure(list.Browser)
		a.Scheduler.Update(runnable)
		for _, adhoc := range list.AdHoc {
			a.runAdHoc(ctx, adhoc)
		}
		revision = list.Revision
		a.ready.Store(true)
		a.log.V(1).Info("assignments updated", "revision", revision, "monitors", len(runnable))
	}
}

// runAdHoc runs a one-off check once (lists repeat it until its result
// arrives) and pushes its result at once, with the request id as result id.
func (a *Agent) runAdHoc(ctx context.Context, c probeapi.AdHocCheck) {
	a.adhocMu.Lock()
	if a.adhocSeen == nil {
		a.adhocSeen = map[string]time.Time{}
	}
	for id, at := range a.adhocSeen {
		if time.Since(at) > 10*time.Minute {
			delete(a.adhocSeen, id)
		}
	}
	if _, seen := a.adhocSeen[c.RequestID]; seen || !Supported(c.Assignment.Type) {
		a.adhocMu.Unlock()
		return
	}
	a.adhocSeen[c.RequestID] = time.Now()
	a.adhocMu.Unlock()
	go func() {
		as := c.Assignment
		res := Run(ctx, &as, a.Env)
		res.ID = c.RequestID
		a.metrics.checks.WithLabelValues(as.Type, string(res.Status)).Inc()
		a.Buffer.AddUrgent(res)
		select {
		case a.urgentNow <- struct{}{}:
		default:
		}
	}()
}

// runScheduled runs one scheduled check and queues its result.
func (a *Agent) runScheduled(ctx context.Context, as *probeapi.Assignment, _ time.Time) {
	res := Run(ctx, as, a.Env)
	a.metrics.checks.WithLabelValues(as.Type, string(res.Status)).Inc()
	now := a.flushNow
	if a.Buffer.Add(res) {
		now = a.urgentNow
	} else if a.Buffer.Len() < a.batchSize {
		return
	}
	select {
	case now <- struct{}{}:
	default:
	}
}

// pushLoop delivers batches of one lane (peek) every flushInterval or when
// asked (now). Two run side by side: the results that can change a
// monitor's state (Buffer.PeekUrgent), pushed at once, and the rest, so a
// large backlog batch in flight never holds back an outage.
func (a *Agent) pushLoop(ctx context.Context, now <-chan struct{}, l *lane) {
	t := time.NewTicker(a.flushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-now:
		}
		a.flush(ctx, l)
	}
}

// flush pushes the results of a lane until it is empty or a push fails.
func (a *Agent) flush(ctx context.Context, l *lane) {
	for ctx.Err() == nil {
		batch, ack := l.peek(a.batchSize)
		if len(batch) == 0 {
			return
		}
		if l.failing {
			l.replayCut = time.Now()
		}
		replayed := l.replayed(batch, a.started)
		pushCtx, cancel := context.WithTimeout(ctx, a.callTimeout)
		_, err := a.Client.PushResults(pushCtx, &probeapi.ResultBatch{Region: a.Region, AgentID: a.AgentID, Results: batch,
			Replayed: replayed, Backlog: max(a.Buffer.Len()-len(batch), 0)})
		cancel()
		if err != nil {
			l.failing = true
			a.metrics.pushes.WithLabelValues("error").Inc()
			a.log.Error(err, "push results", "buffered", a.Buffer.Len())
			return
		}
		if l.failing {
			// Results checked until the manager answered again waited too.
			l.replayCut, l.failing = time.Now(), false
		}
		a.metrics.pushes.WithLabelValues("ok").Inc()
		a.metrics.replayed.Add(float64(replayed))
		a.metrics.delivered.SetToCurrentTime()
		ack()
	}
}

// lane is one delivery lane of the buffer (Buffer.PeekUrgent or Buffer.Peek)
// and what its pushes went through, which only its push loop touches.
type lane struct {
	peek func(int) ([]probeapi.Result, func())
	// failing is set by a failed push and cleared by a successful one;
	// replayCut is the start of the last push made while it was set, and
	// then the end of the push that cleared it.
	failing   bool
	replayCut time.Time
}

// replayed counts the results of batch that failed pushes held back or an
// earlier run left on disk: those checked before the lane's pushes got
// through again after failing, or before the agent started.
func (l *lane) replayed(batch []probeapi.Result, started time.Time) int {
	cut := started
	if l.replayCut.After(cut) {
		cut = l.replayCut
	}
	n := 0
	for i := range batch {
		if batch[i].CheckedAt.Before(cut) {
			n++
		}
	}
	return n
}

// RunOnce runs one ad-hoc check of a definition, as POST /monitors/test
// does: nothing is scheduled or stored.
func RunOnce(ctx context.Context, a *probeapi.Assignment, region string, guard netguard.Guard) probeapi.Result {
	as := *a
	if as.ID == "" {
		as.ID = uuid.NewString()
	}
	return Run(ctx, &as, &Env{Guard: guard, Region: region})
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
