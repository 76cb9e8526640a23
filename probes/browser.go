package probes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/chromium"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

func init() { register(checkBrowser, monv1.MonitorBrowser) }

// Browsers is where an agent's browser checks get their browser: a remote
// browser when the region names one (ProbeRegion spec.browser.endpoint),
// else a local Chromium. It also bounds how many browser checks run at
// once: each costs a browser process (or a browser context of the remote
// browser) and about a CPU-second.
type Browsers struct {
	// Path is the local Chromium binary (--browser-path); empty looks up
	// chromium, chromium-browser or google-chrome on PATH.
	Path string

	mu       sync.Mutex
	endpoint string
	slots    chan struct{}
	// shared is the local browser while checks use it (see local).
	shared *sharedBrowser
}

// sharedBrowser is a local Chromium that checks share, each in a browser
// context of its own (cookies, storage and cache apart, and its own
// guard proxy). Starting Chromium is most of what a check would cost
// (docs/performance.md), so it starts with the first check and stops after
// browserIdle without one.
type sharedBrowser struct {
	ctx   context.Context
	stop  func()
	users int
	idle  *time.Timer
}

// browserIdle is how long a local browser outlives its last check.
const browserIdle = 2 * time.Minute

// local returns the shared local browser, started when there is none,
// and the func that hands it back. A browser that failed (broken) is
// stopped when its last check hands it back, and the next check starts a
// new one.
func (b *Browsers) local(path string) (ctx context.Context, done func(broken bool), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sb := b.shared
	if sb == nil {
		if sb, err = startSharedBrowser(path); err != nil {
			return nil, nil, err
		}
		b.shared = sb
	}
	if sb.idle != nil {
		sb.idle.Stop()
		sb.idle = nil
	}
	sb.users++
	return sb.ctx, func(broken bool) {
		b.mu.Lock()
		defer b.mu.Unlock()
		sb.users--
		if broken && b.shared == sb {
			b.shared = nil
		}
		switch {
		case sb.users > 0:
		case b.shared != sb:
			sb.stop()
		default:
			sb.idle = time.AfterFunc(browserIdle, func() {
				b.mu.Lock()
				defer b.mu.Unlock()
				if b.shared == sb && sb.users == 0 {
					b.shared = nil
					sb.stop()
				}
			})
		}
	}, nil
}

// startSharedBrowser starts a local Chromium with a profile directory of
// its own. Its launch proxy is a guard proxy that allows nothing private:
// every check's browser context names its own proxy, so it only ever
// serves a context that would have none.
func startSharedBrowser(path string) (*sharedBrowser, error) {
	dir, err := os.MkdirTemp("", "uptime-browser-")
	if err != nil {
		return nil, fmt.Errorf("create the browser profile: %w", err)
	}
	proxy, err := chromium.StartGuardProxy(netguard.Guard{})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		append(chromium.Options(path, dir, proxy.URL()), chromedp.WindowSize(viewportWidth, viewportHeight))...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	stop := func() {
		cancel()
		cancelAlloc()
		proxy.Close()
		_ = os.RemoveAll(dir)
	}
	// The context of the first run is the browser's life (chromedp), so
	// the start is bounded by a timer rather than a derived context.
	hung := time.AfterFunc(browserStartTimeout, cancel)
	err = chromedp.Do(ctx)
	hung.Stop()
	if err != nil {
		stop()
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	return &sharedBrowser{ctx: ctx, stop: stop}, nil
}

// stopShared stops the shared local browser now (tests and benchmarks).
func (b *Browsers) stopShared() {
	b.mu.Lock()
	sb := b.shared
	b.shared = nil
	b.mu.Unlock()
	if sb != nil {
		if sb.idle != nil {
			sb.idle.Stop()
		}
		sb.stop()
	}
}

// browserStartTimeout bounds the start of a local browser.
const browserStartTimeout = 30 * time.Second

// defaultBrowsers serves checks whose Env names none (the manager's
// in-process checks of dev mode and POST /monitors/test): a local
// Chromium on PATH, two at a time.
var defaultBrowsers = &Browsers{}

// Configure applies a region's browser settings (nil: a local Chromium
// and the default concurrency). Checks holding a slot keep it; the new
// bound applies to the checks that start after.
func (b *Browsers) Configure(rb *probeapi.RegionBrowser) {
	endpoint, n := "", 0
	if rb != nil {
		endpoint, n = rb.Endpoint, rb.MaxConcurrent
	}
	if n <= 0 {
		n = defaultBrowserConcurrency
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.endpoint = endpoint
	if b.slots == nil || cap(b.slots) != n {
		b.slots = make(chan struct{}, n)
	}
}

// defaultBrowserConcurrency is the browser checks an agent runs at once
// when its region says nothing.
const defaultBrowserConcurrency = monv1.DefaultBrowserConcurrency

// source returns the remote endpoint, else the local binary; both empty
// when the agent has no browser.
func (b *Browsers) source() (endpoint, path string) {
	b.mu.Lock()
	endpoint = b.endpoint
	b.mu.Unlock()
	if endpoint != "" {
		return endpoint, ""
	}
	return "", chromium.Find(b.Path)
}

// acquire waits for a free browser slot until ctx ends.
func (b *Browsers) acquire(ctx context.Context) (release func(), err error) {
	b.mu.Lock()
	if b.slots == nil {
		b.slots = make(chan struct{}, defaultBrowserConcurrency)
	}
	slots := b.slots
	b.mu.Unlock()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Browser check bounds.
const (
	// viewportWidth and viewportHeight are the page's window.
	viewportWidth, viewportHeight = 1280, 800
	// screenshotReserve is kept from the check's time for the screenshot
	// and the timings of a failed run.
	screenshotReserve = 3 * time.Second
	// pollEvery spaces the polls of waits.
	pollEvery = 100 * time.Millisecond
	// maxBrowserSteps bounds the steps of a browser monitor.
	maxBrowserSteps = 20
	// maxBlockedReported bounds browserDetails.BlockedRequests.
	maxBlockedReported = 10
)

// browserStep is one step as reported in details. Index 0 is the page
// load with the waits for wait_for_selector and wait_for_text; the steps
// of browser_steps follow from 1.
type browserStep struct {
	Name       string  `json:"name"`
	Action     string  `json:"action"`
	DurationMs float64 `json:"duration_ms"`
	Passed     bool    `json:"passed"`
	Error      string  `json:"error,omitempty"`
}

// browserTimings are the page's own measurements (the Navigation Timing
// and Paint Timing entries, and the last largest-contentful-paint entry),
// in milliseconds from the start of its navigation.
type browserTimings struct {
	FirstByteMs        float64 `json:"first_byte_ms,omitempty"`
	DOMContentLoadedMs float64 `json:"dom_content_loaded_ms,omitempty"`
	LoadMs             float64 `json:"load_ms,omitempty"`
	FirstPaintMs       float64 `json:"first_contentful_paint_ms,omitempty"`
	LCPMs              float64 `json:"largest_contentful_paint_ms,omitempty"`
	DNSMs              float64 `json:"dns_ms,omitempty"`
	ConnectMs          float64 `json:"connect_ms,omitempty"`
	TLSMs              float64 `json:"tls_ms,omitempty"`
	Requests           int     `json:"requests,omitempty"`
}

// browserDetails is Result.Details of browser checks.
type browserDetails struct {
	// Browser is "local" or "remote".
	Browser string        `json:"browser"`
	Steps   []browserStep `json:"steps"`
	// FailedStep is the index in Steps of the step that failed (0: the
	// page load and its waits); absent when none did.
	FailedStep *int `json:"failed_step,omitempty"`
	// FinalURL is the page the check ended on, without its query.
	FinalURL string          `json:"final_url,omitempty"`
	Timings  *browserTimings `json:"timings,omitempty"`
	// BlockedRequests are requests of the page the address guard refused.
	BlockedRequests []string `json:"blocked_requests,omitempty"`
	// ScreenshotBytes is the size of the failure screenshot, if one was
	// taken.
	ScreenshotBytes int `json:"screenshot_bytes,omitempty"`
}

// errNoBrowser is the message of a region without a browser.
const errNoBrowser = "no browser in this region: install Chromium on the probe agent (chromium on PATH or --browser-path) or set spec.browser.endpoint on the ProbeRegion"

// checkBrowser loads a.URL in a headless Chromium, waits for
// wait_for_selector and wait_for_text, runs browser_steps in order, and
// measures what the browser reports. The first failing step makes the
// check down, with its index, its error and a screenshot of the page.
//
// Every request of the page passes the address guard. A check's browser
// context of the local Chromium sends all its traffic through a loopback
// proxy of its own that dials through the guard (chromium.GuardProxy): the
// address checked is the one connected to, so DNS rebinding cannot get past it, nor can requests the DevTools
// protocol does not see (workers, WebSockets). A remote browser dials
// itself, so there each request is paused (the Fetch domain), its host
// resolved here and checked, and refused requests are failed: that does not
// cover WebSockets or a name that resolves differently for the remote
// browser, and docs/checks.md says to keep remote browsers on a network
// without private reach. A failure when the guard refused a request of the
// page is blocked, not down: the region abstains.
func checkBrowser(ctx context.Context, a *probeapi.Assignment, env *Env) probeapi.Result {
	cfg := a.Config.Browser
	if cfg == nil {
		cfg = &monv1.BrowserConfig{}
	}
	if err := validBrowserConfig(a.URL, cfg); err != nil {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, err)
	}
	browsers := env.Browsers
	if browsers == nil {
		browsers = defaultBrowsers
	}
	endpoint, path := browsers.source()
	if endpoint == "" && path == "" {
		return failure(probeapi.StatusBlocked, probeapi.ErrorNoBrowser, errors.New(errNoBrowser))
	}
	if err := guardURL(ctx, env.Guard, a.URL); err != nil {
		return fromError(err)
	}
	start := time.Now()
	release, err := browsers.acquire(ctx)
	if err != nil {
		return failure(probeapi.StatusUnknown, probeapi.ErrorTimeout, errors.New("no browser slot of the region came free before the timeout"))
	}
	defer release()
	s, err := openSession(ctx, env.Guard, browsers, endpoint, path)
	if err != nil {
		res := failure(probeapi.StatusUnknown, probeapi.ErrorInternal, err)
		res.ResponseTimeMs = ms(time.Since(start))
		return res
	}
	defer s.close()

	run := &browserRun{s: s, env: env, a: a, cfg: cfg, origins: fillOrigins(a.URL, cfg)}
	run.d.Browser = "local"
	if endpoint != "" {
		run.d.Browser = "remote"
	}
	// The steps leave screenshotReserve of the check's time for the
	// screenshot and the timings of a failure.
	stepsCtx, cancel := context.WithCancel(s.tab)
	if dl, ok := ctx.Deadline(); ok {
		reserve := min(screenshotReserve, time.Until(dl)/5)
		stepsCtx, cancel = context.WithDeadline(s.tab, dl.Add(-reserve))
	}
	defer cancel()
	failed := run.steps(stepsCtx)
	res := probeapi.Result{Status: probeapi.StatusUp, StatusCode: run.statusCode}
	res.ResponseTimeMs = ms(time.Since(start))
	run.measure(s.tab)
	if run.d.Timings != nil {
		t := run.d.Timings
		res.Timings = &probeapi.Timings{DNSMs: t.DNSMs, ConnectMs: t.ConnectMs, TLSMs: t.TLSMs, FirstByteMs: t.FirstByteMs}
	}
	run.d.BlockedRequests = s.blocked()
	if failed != nil {
		res = run.failure(res, failed)
		if shot := screenshot(s.tab); len(shot) > 0 {
			res.Screenshot = shot
			run.d.ScreenshotBytes = len(shot)
		}
	} else {
		res = responseTimeVerdict(res, cfg.MaxResponseTimeMs, cfg.DegradedResponseTimeMs)
	}
	res.Details = details(run.d)
	return res
}

// responseTimeVerdict applies the response time thresholds to an up result.
func responseTimeVerdict(res probeapi.Result, maxMs, degradedMs *int32) probeapi.Result {
	switch {
	case maxMs != nil && res.ResponseTimeMs > int64(*maxMs):
		res.Status, res.ErrorType = probeapi.StatusDown, probeapi.ErrorResponseTime
		res.ErrorMessage = fmt.Sprintf("response time %d ms exceeds %d ms", res.ResponseTimeMs, *maxMs)
	case degradedMs != nil && res.ResponseTimeMs > int64(*degradedMs):
		res.Status, res.ErrorType = probeapi.StatusDegraded, probeapi.ErrorResponseTime
		res.ErrorMessage = fmt.Sprintf("response time %d ms exceeds %d ms", res.ResponseTimeMs, *degradedMs)
	}
	return res
}

// validBrowserConfig checks what admission checks too, for assignments
// that did not pass it (POST /monitors/test, agents of another version).
func validBrowserConfig(pageURL string, cfg *monv1.BrowserConfig) error {
	if pageURL == "" {
		return errors.New("url is required")
	}
	if len(cfg.Steps) > maxBrowserSteps {
		return fmt.Errorf("at most %d browser steps", maxBrowserSteps)
	}
	for i, st := range cfg.Steps {
		var missing string
		switch st.Action {
		case monv1.BrowserNavigate:
			if st.URL == "" {
				missing = "url"
			}
		case monv1.BrowserClick, monv1.BrowserExpectSelector:
			if st.Selector == "" {
				missing = "selector"
			}
		case monv1.BrowserFill:
			if _, ok := fillValue(cfg, st); st.Selector == "" || !ok {
				missing = "selector and value or a credential of credentials"
			}
		case monv1.BrowserWait:
			if st.Selector == "" && (st.DurationMs == nil || *st.DurationMs <= 0) {
				missing = "selector or durationMs"
			}
		case monv1.BrowserExpectText:
			if st.Text == "" {
				missing = "text"
			}
		case monv1.BrowserEvaluate:
			if st.Expression == "" {
				missing = "expression"
			}
		default:
			return fmt.Errorf("browser step %d: unknown action %q", i+1, truncateString(string(st.Action), 32))
		}
		if missing != "" {
			return fmt.Errorf("browser step %d (%s): %s required", i+1, st.Action, missing)
		}
	}
	return nil
}

// fillValue is the text a fill step types: its value, or the resolved
// value of the credential it names.
func fillValue(cfg *monv1.BrowserConfig, st monv1.BrowserStep) (string, bool) {
	if st.Value != nil {
		return *st.Value, true
	}
	for _, c := range cfg.Credentials {
		if c.Name == st.Credential && c.Value != nil {
			return *c.Value, true
		}
	}
	return "", false
}

// guardURL refuses a page URL whose host the guard blocks, before the
// browser starts: the verdict then says blocked at once and plainly. The
// proxy or the Fetch interception still vet the connection itself.
func guardURL(ctx context.Context, g netguard.Guard, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("%s is not an http or https URL", truncateString(raw, 256))
	}
	return g.CheckHost(ctx, u.Hostname())
}

// fillOrigins are the origins a fill step may type into: the monitor's
// URL and the URLs of its navigate steps, the pages its writer named. A
// page that redirected elsewhere (or a link that took the flow away)
// never receives a credential.
func fillOrigins(pageURL string, cfg *monv1.BrowserConfig) []string {
	out := []string{pageURL}
	for _, st := range cfg.Steps {
		if st.Action == monv1.BrowserNavigate {
			out = append(out, st.URL)
		}
	}
	return out
}

// browserSession is one check's tab, in a browser context of its own of
// the shared local browser (with its guard proxy) or of the remote
// browser.
type browserSession struct {
	tab     context.Context
	cancels []func()
	proxy   *chromium.GuardProxy

	mu      sync.Mutex
	refused []string
}

// openSession opens the check's tab: in a browser context of the shared
// local browser, whose traffic goes through a guard proxy of the check's
// own, or in a browser context of the remote browser.
func openSession(ctx context.Context, g netguard.Guard, browsers *Browsers, endpoint, path string) (*browserSession, error) {
	s := &browserSession{}
	var (
		parent context.Context
		opts   []chromedp.ContextOption
		broken bool
	)
	if endpoint != "" {
		var cancel func()
		parent, cancel = remote.NewAllocator(ctx, endpoint)
		s.cancels = append(s.cancels, cancel)
		opts = append(opts, chromedp.WithNewBrowserContext())
	} else {
		browserCtx, done, err := browsers.local(path)
		if err != nil {
			return nil, err
		}
		s.cancels = append(s.cancels, func() { done(broken) })
		if s.proxy, err = chromium.StartGuardProxy(g); err != nil {
			s.close()
			return nil, err
		}
		s.cancels = append(s.cancels, s.proxy.Close)
		parent = browserCtx
		proxyURL := s.proxy.URL()
		opts = append(opts, chromedp.WithNewBrowserContext(func(p *target.CreateBrowserContextParams) {
			p.ProxyServer, p.ProxyBypassList = proxyURL, "<-loopback>"
		}))
	}
	tab, cancelTab := chromedp.NewContext(parent, opts...)
	s.cancels = append(s.cancels, cancelTab)
	// The tab lives as long as the check: the shared browser does not.
	stopTab := context.AfterFunc(ctx, cancelTab)
	s.cancels = append(s.cancels, func() { stopTab() })
	s.tab = tab
	if dl, ok := ctx.Deadline(); ok {
		var cancel func()
		s.tab, cancel = context.WithDeadline(tab, dl)
		s.cancels = append(s.cancels, cancel)
	}
	if err := chromedp.Do(s.tab); err != nil {
		broken = ctx.Err() == nil
		s.close()
		if endpoint != "" {
			return nil, fmt.Errorf("connect to the remote browser: %w", err)
		}
		return nil, fmt.Errorf("open a browser tab: %w", err)
	}
	if endpoint != "" {
		if err := s.interceptRequests(g); err != nil {
			s.close()
			return nil, err
		}
	}
	setup := []chromedp.Action[chromedp.Void]{
		chromedp.EmulateViewport(viewportWidth, viewportHeight),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: lcpObserver})
			return err
		}),
	}
	if err := chromedp.Do(s.tab, setup...); err != nil {
		s.close()
		return nil, fmt.Errorf("set up the browser tab: %w", err)
	}
	return s, nil
}

// close ends the tab and the browser (or its browser context) and removes
// what the session made, in reverse order.
func (s *browserSession) close() {
	for i := len(s.cancels) - 1; i >= 0; i-- {
		s.cancels[i]()
	}
	s.cancels = nil
}

// interceptRequests pauses every request of the tab and lets it go on only
// when the guard allows the addresses its host resolves to (remote
// browsers: see checkBrowser).
func (s *browserSession) interceptRequests(g netguard.Guard) error {
	paused := chromedp.Events(s.tab, fetch.RequestPaused)
	if _, err := chromedp.Call(s.tab, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return fmt.Errorf("intercept the page's requests: %w", err)
	}
	var (
		mu      sync.Mutex
		verdict = map[string]error{}
	)
	check := func(host string) error {
		mu.Lock()
		err, ok := verdict[host]
		mu.Unlock()
		if ok {
			return err
		}
		ctx, cancel := context.WithTimeout(s.tab, 5*time.Second)
		defer cancel()
		err = g.CheckHost(ctx, host)
		if err != nil && !netguard.IsBlocked(err) {
			// Resolution failed: the browser's own attempt reports it.
			err = nil
		}
		mu.Lock()
		verdict[host] = err
		mu.Unlock()
		return err
	}
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			go func() {
				var blocked error
				if u, err := url.Parse(ev.Request.URL); err == nil && u.Hostname() != "" &&
					(u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "ws" || u.Scheme == "wss") {
					blocked = check(u.Hostname())
				}
				if blocked != nil {
					s.refuse(hostOf(ev.Request.URL) + ": " + blocked.Error())
					_, _ = chromedp.Call(s.tab, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
					return
				}
				_, _ = chromedp.Call(s.tab, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
			}()
		}
	}()
	return nil
}

// hostOf is the host:port of a URL, for messages (never its path or
// query, which may hold tokens).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "?"
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "ws": "80", "https": "443", "wss": "443"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func (s *browserSession) refuse(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.refused) < maxBlockedReported {
		s.refused = append(s.refused, msg)
	}
}

// blocked lists the requests the guard refused, by either mechanism.
func (s *browserSession) blocked() []string {
	s.mu.Lock()
	out := append([]string(nil), s.refused...)
	s.mu.Unlock()
	if s.proxy != nil {
		out = append(out, s.proxy.Blocked()...)
	}
	return out[:min(len(out), maxBlockedReported)]
}

// dialError is the proxy's error for a host:port it could not connect to
// (a local browser's failed navigation says only that the tunnel failed).
func (s *browserSession) dialError(hostport string) error {
	if s.proxy == nil {
		return nil
	}
	return s.proxy.DialError(hostport)
}

// browserRun is the state of one check's steps.
type browserRun struct {
	s          *browserSession
	env        *Env
	a          *probeapi.Assignment
	cfg        *monv1.BrowserConfig
	origins    []string
	d          browserDetails
	statusCode *int
}

// stepFailure is the first failure of a run.
type stepFailure struct {
	index int
	name  string
	err   error
}

// steps runs the page load, its waits and the steps; it returns the first
// failure, or nil.
func (r *browserRun) steps(ctx context.Context) *stepFailure {
	cfg := r.cfg
	load := func(ctx context.Context) error {
		if err := r.navigate(ctx, r.a.URL); err != nil {
			return err
		}
		if cfg.WaitForSelector != "" {
			if err := waitVisible(ctx, cfg.WaitForSelector); err != nil {
				return err
			}
		}
		if cfg.WaitForText != "" {
			if err := waitText(ctx, cfg.WaitForText); err != nil {
				return err
			}
		}
		return nil
	}
	if f := r.step(ctx, 0, "load", "load", load); f != nil {
		return f
	}
	for i, st := range cfg.Steps {
		name := st.Name
		if name == "" {
			name = fmt.Sprintf("step %d", i+1)
		}
		if f := r.step(ctx, i+1, name, string(st.Action), func(ctx context.Context) error { return r.do(ctx, st) }); f != nil {
			return f
		}
	}
	return nil
}

// step runs one step and records it.
func (r *browserRun) step(ctx context.Context, index int, name, action string, f func(context.Context) error) *stepFailure {
	start := time.Now()
	err := f(ctx)
	bs := browserStep{Name: truncateString(name, 100), Action: action, DurationMs: fms(time.Since(start)), Passed: err == nil}
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
		}
		bs.Error = truncateString(err.Error(), 300)
	}
	r.d.Steps = append(r.d.Steps, bs)
	if err != nil {
		return &stepFailure{index: index, name: name, err: err}
	}
	return nil
}

// do runs one step of browser_steps.
func (r *browserRun) do(ctx context.Context, st monv1.BrowserStep) error {
	switch st.Action {
	case monv1.BrowserNavigate:
		if err := guardURL(ctx, r.env.Guard, st.URL); err != nil {
			return err
		}
		return r.navigate(ctx, st.URL)
	case monv1.BrowserClick:
		if err := waitVisible(ctx, st.Selector); err != nil {
			return err
		}
		return chromedp.Do(ctx, chromedp.Click(chromedp.CSS(st.Selector)))
	case monv1.BrowserFill:
		return r.fill(ctx, st)
	case monv1.BrowserWait:
		if st.Selector != "" {
			return waitVisible(ctx, st.Selector)
		}
		return chromedp.Do(ctx, chromedp.Sleep(time.Duration(*st.DurationMs)*time.Millisecond))
	case monv1.BrowserExpectText:
		return waitText(ctx, st.Text)
	case monv1.BrowserExpectSelector:
		return waitVisible(ctx, st.Selector)
	case monv1.BrowserEvaluate:
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](st.Expression, chromedp.EvalAwaitPromise))
		if err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
		if strings.TrimSpace(string(raw)) != "true" {
			return fmt.Errorf("expression is %s, not true", truncateString(string(raw), 100))
		}
		return nil
	}
	return fmt.Errorf("unknown action %q", truncateString(string(st.Action), 32))
}

// fill types a value into a field, replacing its content, only on a page
// of one of the monitor's own origins (fillOrigins).
func (r *browserRun) fill(ctx context.Context, st monv1.BrowserStep) error {
	if err := waitVisible(ctx, st.Selector); err != nil {
		return err
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return fmt.Errorf("read the page's location: %w", err)
	}
	allowed := false
	for _, o := range r.origins {
		if credentials.SameOrigin(loc, o) {
			allowed = true
			break
		}
	}
	if !allowed {
		return fmt.Errorf("the page is on %s, not an origin of the monitor's URL or navigate steps: the value is not typed", hostOf(loc))
	}
	sel, _ := json.Marshal(st.Selector)
	clear := `(() => { const e = document.querySelector(` + string(sel) + `); e.focus();
  if ('value' in e) { e.value = ''; } else if (e.isContentEditable) { e.textContent = ''; } return true; })()`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](clear)); err != nil {
		return fmt.Errorf("focus %s: %w", truncateString(st.Selector, 100), err)
	}
	// Inserted text fires the input events a typing user fires, which
	// the page's framework listens to.
	value, _ := fillValue(r.cfg, st)
	if _, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: value}); err != nil {
		return fmt.Errorf("type into %s: %w", truncateString(st.Selector, 100), err)
	}
	return nil
}

// navigate loads a page and waits for its load event. An answer of 400 or
// more fails it.
func (r *browserRun) navigate(ctx context.Context, u string) error {
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
	if err != nil {
		if derr := r.s.dialError(hostOf(u)); derr != nil {
			return fmt.Errorf("load %s: %w", hostOf(u), derr)
		}
		return fmt.Errorf("load the page: %w", err)
	}
	if resp == nil {
		return nil
	}
	code := int(resp.Status)
	if derr := r.s.dialError(hostOf(u)); derr != nil && code == 502 {
		// The guard proxy's own answer to a plain-http request it could
		// not forward.
		return fmt.Errorf("load %s: %w", hostOf(u), derr)
	}
	r.statusCode = &code
	if code >= 400 {
		return &httpStatusError{code: code}
	}
	return nil
}

// httpStatusError is a page answered with an error status.
type httpStatusError struct{ code int }

func (e *httpStatusError) Error() string { return fmt.Sprintf("the page answered HTTP %d", e.code) }

// waitVisible polls until selector matches a visible element. A selector
// the page cannot parse fails at once.
func waitVisible(ctx context.Context, selector string) error {
	sel, _ := json.Marshal(selector)
	expr := `(() => { const e = document.querySelector(` + string(sel) + `); if (!e) return false;
  const r = e.getBoundingClientRect(), s = getComputedStyle(e);
  return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; })()`
	if err := poll(ctx, expr); err != nil {
		return fmt.Errorf("wait for %s: %w", truncateString(selector, 100), err)
	}
	return nil
}

// waitText polls until the page's rendered text contains text.
func waitText(ctx context.Context, text string) error {
	t, _ := json.Marshal(text)
	expr := `!!(document.body && document.body.innerText.includes(` + string(t) + `))`
	if err := poll(ctx, expr); err != nil {
		return fmt.Errorf("wait for the text %q: %w", truncateString(text, 100), err)
	}
	return nil
}

// poll evaluates expr every pollEvery until it is true or ctx ends. An
// evaluation that fails while a page is being replaced is tried again; a
// syntax error (a bad selector) fails at once.
func poll(ctx context.Context, expr string) error {
	var last error
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		switch {
		case err == nil && ok:
			return nil
		case err != nil && strings.Contains(err.Error(), "SyntaxError"):
			return err
		case err != nil:
			last = err
		}
		t := time.NewTimer(pollEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			if last != nil {
				return fmt.Errorf("%w (last error: %w)", context.DeadlineExceeded, last)
			}
			return fmt.Errorf("not found before the timeout: %w", context.DeadlineExceeded)
		case <-t.C:
		}
	}
}

// lcpObserver runs in every document before its scripts: it keeps the
// latest largest-contentful-paint time where measure reads it.
const lcpObserver = `(() => { try {
  new PerformanceObserver((l) => { const e = l.getEntries(); if (e.length) self.__uptimeLCP = e[e.length - 1].startTime; })
    .observe({type: 'largest-contentful-paint', buffered: true});
} catch (e) {} })();`

// measureScript reads the page's timings and location.
const measureScript = `(() => {
  const n = performance.getEntriesByType('navigation')[0], fcp = performance.getEntriesByName('first-contentful-paint')[0];
  const d = (a, b) => (n && a > 0 && b > 0 && b >= a) ? b - a : 0;
  return {
    first_byte_ms: n ? Math.max(n.responseStart - n.startTime, 0) : 0,
    dom_content_loaded_ms: n ? Math.max(n.domContentLoadedEventEnd, 0) : 0,
    load_ms: n ? Math.max(n.loadEventEnd, 0) : 0,
    first_contentful_paint_ms: fcp ? fcp.startTime : 0,
    largest_contentful_paint_ms: self.__uptimeLCP || 0,
    dns_ms: n ? d(n.domainLookupStart, n.domainLookupEnd) : 0,
    connect_ms: n ? d(n.connectStart, n.connectEnd) : 0,
    tls_ms: n ? d(n.secureConnectionStart, n.connectEnd) : 0,
    requests: performance.getEntriesByType('resource').length + (n ? 1 : 0),
    url: location.origin + location.pathname,
  };
})()`

// measure reads the timings the page reports and where it ended.
func (r *browserRun) measure(tab context.Context) {
	ctx, cancel := context.WithTimeout(tab, 2*time.Second)
	defer cancel()
	var m struct {
		browserTimings
		URL string `json:"url"`
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](measureScript))
	if err != nil || json.Unmarshal(raw, &m) != nil {
		return
	}
	round := func(v *float64) { *v = float64(int64(*v*10)) / 10 }
	t := m.browserTimings
	for _, v := range []*float64{&t.FirstByteMs, &t.DOMContentLoadedMs, &t.LoadMs, &t.FirstPaintMs, &t.LCPMs, &t.DNSMs, &t.ConnectMs, &t.TLSMs} {
		round(v)
	}
	r.d.Timings = &t
	if strings.HasPrefix(m.URL, "http") {
		r.d.FinalURL = truncateString(m.URL, 256)
	}
}

// failure turns the run's first failure into the result.
func (r *browserRun) failure(res probeapi.Result, f *stepFailure) probeapi.Result {
	status, typ := classify(f.err)
	var hs *httpStatusError
	switch {
	case errors.As(f.err, &hs):
		status, typ = probeapi.StatusDown, probeapi.ErrorHTTPStatus
	case status == probeapi.StatusDown && typ == probeapi.ErrorConnection:
		status, typ = classifyBrowserError(f.err)
	}
	if status == probeapi.StatusDown && typ != probeapi.ErrorHTTPStatus && f.index > 0 && typ != probeapi.ErrorTimeout {
		typ = probeapi.ErrorStep
	}
	if len(r.s.blocked()) > 0 && status != probeapi.StatusUp {
		// The page failed after the guard refused some of its requests:
		// the probe cannot tell the target's fault from the guard's.
		status, typ = probeapi.StatusBlocked, probeapi.ErrorBlocked
	}
	res.Status, res.ErrorType = status, typ
	where := "load"
	if f.index > 0 {
		where = fmt.Sprintf("step %d (%s)", f.index, truncateString(f.name, 64))
	}
	res.ErrorMessage = where + ": " + f.err.Error()
	if status == probeapi.StatusBlocked && typ == probeapi.ErrorBlocked && !netguard.IsBlocked(f.err) {
		res.ErrorMessage += "; the address guard refused " + strings.Join(r.s.blocked(), ", ")
	}
	idx := f.index
	r.d.FailedStep = &idx
	return res
}

// classifyBrowserError reads the net::ERR_ code of a page load error.
func classifyBrowserError(err error) (probeapi.Status, string) {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "ERR_NAME_NOT_RESOLVED"):
		return probeapi.StatusDown, probeapi.ErrorDNS
	case strings.Contains(msg, "ERR_CONNECTION_REFUSED"):
		return probeapi.StatusDown, probeapi.ErrorRefused
	case strings.Contains(msg, "ERR_TIMED_OUT"), strings.Contains(msg, "ERR_CONNECTION_TIMED_OUT"):
		return probeapi.StatusDown, probeapi.ErrorTimeout
	case strings.Contains(msg, "ERR_CERT_"), strings.Contains(msg, "ERR_SSL_"):
		return probeapi.StatusDown, probeapi.ErrorTLS
	case strings.Contains(msg, "ERR_BLOCKED_BY_CLIENT"):
		return probeapi.StatusBlocked, probeapi.ErrorBlocked
	}
	return probeapi.StatusDown, probeapi.ErrorConnection
}

// screenshot captures the viewport as a JPEG of at most
// probeapi.MaxScreenshotBytes: at quality 60, else at half the size and
// quality 30; nil when even that is larger or the page cannot be captured.
func screenshot(tab context.Context) []byte {
	ctx, cancel := context.WithTimeout(tab, screenshotReserve)
	defer cancel()
	for _, try := range []struct {
		quality int64
		scale   float64
	}{{60, 1}, {30, 0.5}} {
		p := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatJpeg, Quality: &try.quality}
		if try.scale != 1 {
			p.Clip = &page.Viewport{Width: viewportWidth, Height: viewportHeight, Scale: try.scale}
		}
		res, err := chromedp.Call(ctx, page.CaptureScreenshot, p)
		if err != nil {
			return nil
		}
		if len(res.Data) <= probeapi.MaxScreenshotBytes {
			return res.Data
		}
	}
	return nil
}
