package sitehealth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/uptime-operator/uptime-operator/internal/chromium"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// ErrAuditUnavailable means no Chromium binary was found, so performance
// audits cannot run.
var ErrAuditUnavailable = errors.New("performance audits are unavailable: no Chromium binary was found")

// MobileUserAgent is the user agent of mobile audits.
const MobileUserAgent = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36 uptime-operator-sitehealth/1.0"

// Auditor runs performance audits in headless Chromium.
type Auditor struct {
	// ChromePath is the browser binary; looked up on PATH when empty.
	ChromePath string
	// Guard vets every address the browser connects to (through a loopback
	// proxy).
	Guard netguard.Guard
	// Timeout bounds the audit of one URL (60 s when 0).
	Timeout time.Duration
	// Settle is how long to wait after the load event for late paints and
	// layout shifts (1 s when 0).
	Settle time.Duration
}

// Path returns the browser binary to use, or "" when there is none.
func (a *Auditor) Path() string {
	if a == nil {
		return ""
	}
	return chromium.Find(a.ChromePath)
}

// Available reports whether audits can run.
func (a *Auditor) Available() bool { return a.Path() != "" }

// PageAudit is the audit of one URL.
type PageAudit struct {
	URL string `json:"url"`
	// Scores are performance, accessibility, best_practices and seo, 0-100;
	// empty when the page could not be audited.
	Scores  map[string]int `json:"scores"`
	Metrics Metrics        `json:"metrics"`
	// Checks are the accessibility, best-practice and SEO checks by
	// category.
	Checks map[string][]Check `json:"checks"`
	Error  string             `json:"error,omitempty"`
}

// Audit categories.
const (
	CategoryPerformance   = "performance"
	CategoryAccessibility = "accessibility"
	CategoryBestPractices = "best_practices"
	CategorySEO           = "seo"
)

// AuditReport is the audit of a run.
type AuditReport struct {
	// Available is false when no browser was found; Error then says so.
	Available  bool        `json:"available"`
	FormFactor string      `json:"form_factor"`
	Pages      []PageAudit `json:"pages"`
	// Notes documents what the checks leave out.
	Notes string `json:"notes"`
	Error string `json:"error,omitempty"`
}

// auditNotes is shown with every audit.
const auditNotes = "Accessibility checks are image alt text, the html lang attribute, the document title and labels of form fields; colour contrast is not checked."

// Audit audits urls one after the other in one fresh browser (its own
// profile directory, removed afterwards). A page that fails is reported
// with its error; the report fails as a whole only when the browser cannot
// run.
func (a *Auditor) Audit(ctx context.Context, urls []string, formFactor string) AuditReport {
	rep := AuditReport{FormFactor: formFactor, Pages: []PageAudit{}, Notes: auditNotes}
	path := a.Path()
	if path == "" {
		rep.Error = ErrAuditUnavailable.Error()
		return rep
	}
	rep.Available = true
	dir, err := os.MkdirTemp("", "sitehealth-chromium-")
	if err != nil {
		rep.Error = fmt.Sprintf("create browser profile: %v", err)
		return rep
	}
	defer func() { _ = os.RemoveAll(dir) }()
	proxy, err := chromium.StartGuardProxy(a.Guard)
	if err != nil {
		rep.Error = fmt.Sprintf("start browser proxy: %v", err)
		return rep
	}
	defer proxy.Close()
	w, h := 1350, 940
	if formFactor == store.HealthFormMobile {
		w, h = 390, 844
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromium.Options(path, dir, proxy.URL()), chromedp.WindowSize(w, h))...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(browserCtx); err != nil {
		rep.Error = fmt.Sprintf("start the browser: %v", err)
		return rep
	}
	for _, u := range urls {
		rep.Pages = append(rep.Pages, a.auditPage(browserCtx, u, formFactor, w, h))
	}
	return rep
}

// pageFacts is what the page script reports.
type pageFacts struct {
	TTFB          float64 `json:"ttfb"`
	FCP           float64 `json:"fcp"`
	LCP           float64 `json:"lcp"`
	Load          float64 `json:"load"`
	CLS           float64 `json:"cls"`
	Images        int     `json:"images"`
	ImagesWithAlt int     `json:"imagesWithAlt"`
	Lang          string  `json:"lang"`
	Title         string  `json:"title"`
	Inputs        int     `json:"inputs"`
	Labelled      int     `json:"labelled"`
	Description   *string `json:"description"`
	Viewport      *string `json:"viewport"`
	Robots        *string `json:"robots"`
	Protocol      string  `json:"protocol"`
	MixedRefs     int     `json:"mixedRefs"`
}

// pageScript measures the loaded page: navigation timing, paint entries,
// LCP and layout shifts through buffered PerformanceObservers, and the
// facts of the simple accessibility, best-practice and SEO checks.
const pageScript = `(async () => {
  const nav = performance.getEntriesByType('navigation')[0];
  const fcpE = performance.getEntriesByName('first-contentful-paint')[0];
  const observe = (type) => new Promise((resolve) => {
    const out = [];
    try {
      const o = new PerformanceObserver((l) => out.push(...l.getEntries()));
      o.observe({type, buffered: true});
      setTimeout(() => { o.disconnect(); resolve(out); }, 300);
    } catch (e) { resolve(out); }
  });
  const [lcp, shifts] = await Promise.all([observe('largest-contentful-paint'), observe('layout-shift')]);
  let cls = 0;
  for (const s of shifts) { if (!s.hadRecentInput) cls += s.value; }
  const imgs = [...document.images];
  const skip = ['hidden', 'submit', 'button', 'reset', 'image'];
  const inputs = [...document.querySelectorAll('input, select, textarea')].filter((e) => !skip.includes((e.getAttribute('type') || '').toLowerCase()));
  const labelled = inputs.filter((e) => e.getAttribute('aria-label') || e.getAttribute('aria-labelledby') || e.getAttribute('title') ||
    e.closest('label') || (e.id && document.querySelector('label[for="' + CSS.escape(e.id) + '"]'))).length;
  const meta = (n) => { const m = document.querySelector('meta[name="' + n + '" i]'); return m ? (m.getAttribute('content') || '') : null; };
  let mixedRefs = 0;
  if (location.protocol === 'https:') {
    for (const e of document.querySelectorAll('img[src], script[src], iframe[src], link[href]')) {
      const rel = (e.getAttribute('rel') || '').toLowerCase();
      if (e.tagName === 'LINK' && /canonical|alternate|next|prev/.test(rel)) continue;
      const u = e.tagName === 'LINK' ? e.href : e.src;
      if (typeof u === 'string' && u.startsWith('http:')) mixedRefs++;
    }
  }
  const fcp = fcpE ? fcpE.startTime : 0;
  return {
    ttfb: nav ? Math.max(nav.responseStart - nav.startTime, 0) : 0,
    fcp: fcp,
    lcp: lcp.length ? lcp[lcp.length - 1].startTime : fcp,
    load: nav ? nav.loadEventEnd : 0,
    cls: cls,
    images: imgs.length,
    imagesWithAlt: imgs.filter((i) => i.hasAttribute('alt')).length,
    lang: document.documentElement.getAttribute('lang') || '',
    title: document.title || '',
    inputs: inputs.length,
    labelled: labelled,
    description: meta('description'),
    viewport: meta('viewport'),
    robots: meta('robots'),
    protocol: location.protocol,
    mixedRefs: mixedRefs,
  };
})()`

// pageNet is what the network and console events told about a page.
type pageNet struct {
	mu            sync.Mutex
	requests      int
	bytes         float64
	status        int64
	robotsHeader  string
	insecure      int
	consoleErrors []string
}

func (n *pageNet) listen(ev any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if e.Request != nil && !strings.HasPrefix(e.Request.URL, "data:") && e.RedirectResponse == nil {
			n.requests++
			if strings.HasPrefix(e.Request.URL, "http:") {
				n.insecure++
			}
		}
	case *network.EventLoadingFinished:
		n.bytes += e.EncodedDataLength
	case *network.EventResponseReceived:
		if e.Type == network.ResourceTypeDocument && n.status == 0 && e.Response != nil {
			n.status = e.Response.Status
			for k, v := range e.Response.Headers {
				if strings.EqualFold(k, "X-Robots-Tag") {
					n.robotsHeader = fmt.Sprint(v)
				}
			}
		}
	case *runtime.EventExceptionThrown:
		if e.ExceptionDetails != nil {
			n.consoleError(e.ExceptionDetails.Text)
		}
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			n.consoleError("console.error")
		}
	case *cdplog.EventEntryAdded:
		if e.Entry != nil && e.Entry.Level == cdplog.EntryLevelError {
			n.consoleError(e.Entry.Text)
		}
	}
}

func (n *pageNet) consoleError(msg string) {
	// The first five are kept; more only fail the check.
	if len(n.consoleErrors) < 5 {
		n.consoleErrors = append(n.consoleErrors, msg)
	}
}

func call[P any](cmd cdp.Command[P, cdp.Empty], p P) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cmd, p)
		return err
	})
}

// auditPage audits one URL in a new tab of the browser.
func (a *Auditor) auditPage(browserCtx context.Context, u, formFactor string, w, h int) PageAudit {
	pa := PageAudit{URL: u, Scores: map[string]int{}, Checks: map[string][]Check{}}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	settle := a.Settle
	if settle <= 0 {
		settle = time.Second
	}
	tabCtx, cancelTab := chromedp.NewContext(browserCtx)
	defer cancelTab()
	net := &pageNet{}
	if err := chromedp.Listen(tabCtx, net.listen); err != nil {
		pa.Error = fmt.Sprintf("open a tab: %v", err)
		return pa
	}
	ctx, cancel := context.WithTimeout(tabCtx, timeout)
	defer cancel()
	mobile := formFactor == store.HealthFormMobile
	scale := 1.0
	setup := []chromedp.Action[chromedp.Void]{
		call(network.Enable, network.EnableParams{}),
		call(cdplog.Enable, cdp.Empty{}),
	}
	if mobile {
		scale = 3
		setup = append(setup, call(emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: MobileUserAgent}),
			call(emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true}))
	}
	setup = append(setup, call(emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(w), Height: int64(h), DeviceScaleFactor: scale, Mobile: mobile}))
	if err := chromedp.Do(ctx, setup...); err != nil {
		pa.Error = fmt.Sprintf("set up the tab: %v", err)
		return pa
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
		pa.Error = fmt.Sprintf("load the page: %v", err)
		return pa
	}
	select {
	case <-ctx.Done():
	case <-time.After(settle):
	}
	facts, err := chromedp.Run(ctx, chromedp.Evaluate[pageFacts](pageScript, chromedp.EvalAwaitPromise))
	if err != nil {
		pa.Error = fmt.Sprintf("measure the page: %v", err)
		return pa
	}
	net.mu.Lock()
	defer net.mu.Unlock()
	return scorePage(pa, facts, net)
}

// scorePage computes the scores of a measured page.
func scorePage(pa PageAudit, f pageFacts, n *pageNet) PageAudit {
	fcp := f.FCP
	if fcp == 0 {
		// No contentful paint (an empty page): count the load time.
		fcp = f.Load
	}
	lcp := f.LCP
	if lcp == 0 {
		lcp = fcp
	}
	pa.Metrics = Metrics{TTFBMs: round1(f.TTFB), FCPMs: round1(fcp), LCPMs: round1(lcp), CLS: float64(int(f.CLS*1000)) / 1000,
		TotalBytes: int64(n.bytes), Requests: n.requests}
	pa.Scores[CategoryPerformance] = PerformanceScore(pa.Metrics)

	a11y := []Check{
		{ID: "image-alt", Passed: fraction(f.ImagesWithAlt, f.Images), Detail: fmt.Sprintf("%d of %d images have alt text", f.ImagesWithAlt, f.Images)},
		{ID: "html-lang", Passed: pass(f.Lang != ""), Detail: f.Lang},
		{ID: "document-title", Passed: pass(strings.TrimSpace(f.Title) != "")},
		{ID: "form-labels", Passed: fraction(f.Labelled, f.Inputs), Detail: fmt.Sprintf("%d of %d form fields are labelled", f.Labelled, f.Inputs)},
	}
	mixed := max(f.MixedRefs, 0)
	if f.Protocol == "https:" {
		mixed = max(mixed, n.insecure)
	}
	best := []Check{
		{ID: "https", Passed: pass(f.Protocol == "https:")},
		{ID: "no-mixed-content", Passed: pass(mixed == 0), Detail: fmt.Sprintf("%d insecure resources", mixed)},
		{ID: "no-console-errors", Passed: pass(len(n.consoleErrors) == 0), Detail: strings.Join(n.consoleErrors, "; ")},
	}
	robots := strings.ToLower(deref(f.Robots) + " " + n.robotsHeader)
	seo := []Check{
		{ID: "document-title", Passed: pass(strings.TrimSpace(f.Title) != "")},
		{ID: "meta-description", Passed: pass(strings.TrimSpace(deref(f.Description)) != "")},
		{ID: "viewport", Passed: pass(f.Viewport != nil && *f.Viewport != "")},
		{ID: "indexable", Passed: pass(!strings.Contains(robots, "noindex"))},
		{ID: "http-status", Passed: pass(n.status == 200), Detail: fmt.Sprintf("HTTP %d", n.status)},
	}
	pa.Checks[CategoryAccessibility], pa.Checks[CategoryBestPractices], pa.Checks[CategorySEO] = a11y, best, seo
	pa.Scores[CategoryAccessibility] = CategoryScore(a11y)
	pa.Scores[CategoryBestPractices] = CategoryScore(best)
	pa.Scores[CategorySEO] = CategoryScore(seo)
	return pa
}

func round1(v float64) float64 { return float64(int(v*10+0.5)) / 10 }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
