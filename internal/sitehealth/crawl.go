package sitehealth

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/html"

	"github.com/uptime-operator/uptime-operator/internal/hostname"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// Issue kinds of a crawl.
const (
	KindBrokenLink     = "broken_link"
	KindBrokenExternal = "broken_external_link"
	KindMixedContent   = "mixed_content"
	KindRedirectChain  = "redirect_chain"
	KindSlowPage       = "slow_page"
)

// Crawl defaults.
const (
	DefaultConcurrency = 4
	DefaultMaxBytes    = 2 << 20
	DefaultTimeout     = 15 * time.Second
	DefaultSlowAfter   = 3 * time.Second
	// DefaultMaxExternal bounds the external links checked per run.
	DefaultMaxExternal = 500
	// maxHops is the most redirects followed for one URL.
	maxHops = 10
	// UserAgent is sent with every crawl request.
	UserAgent = "Mozilla/5.0 (compatible; uptime-operator-sitehealth/1.0)"
)

// CrawlConfig is what one crawl does.
type CrawlConfig struct {
	// URL is the start page.
	URL string
	// MaxPages bounds the requests to the site (robots.txt not counted).
	MaxPages int
	// MaxDepth is how many links away from the start page pages are parsed
	// for further links; the links of the deepest pages are still checked.
	MaxDepth int
	// CheckExternal also checks links that leave the site.
	CheckExternal bool
	// Guard vets every address dialled.
	Guard netguard.Guard
	// Concurrency, MaxBytes, Timeout (per request, redirects included),
	// SlowAfter and MaxExternal default to the Default* constants when 0.
	Concurrency int
	MaxBytes    int64
	Timeout     time.Duration
	SlowAfter   time.Duration
	MaxExternal int
	// TLSConfig is the client TLS configuration (tests); nil verifies
	// against the system roots plus the trusted CA bundle (package trust).
	TLSConfig *tls.Config
}

// CrawlResult is what a crawl found.
type CrawlResult struct {
	// Pages is the number of site URLs requested.
	Pages int `json:"pages_crawled"`
	// ExternalChecked is the number of external links checked.
	ExternalChecked int `json:"external_links_checked"`
	// RobotsSkipped counts site URLs that robots.txt disallowed.
	RobotsSkipped int `json:"robots_skipped"`
	// Issues found, sorted by kind, URL and source page.
	Issues []store.HealthIssue `json:"-"`
}

// StartError means the start page could not be crawled, so the run failed.
type StartError struct{ Err error }

func (e *StartError) Error() string { return "start page: " + e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

type crawler struct {
	cfg    CrawlConfig
	client *http.Client
	site   string

	mu       sync.Mutex
	robots   map[string]*Robots
	issues   map[string]store.HealthIssue
	visited  map[string]bool
	external map[string]string
}

// Crawl crawls the site of cfg.URL. It fails with a *StartError when the
// start page cannot be fetched or answers an error status, and with the
// context's error when ctx ends; issues found until then are returned too.
func Crawl(ctx context.Context, cfg CrawlConfig) (CrawlResult, error) {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.SlowAfter <= 0 {
		cfg.SlowAfter = DefaultSlowAfter
	}
	if cfg.MaxExternal <= 0 {
		cfg.MaxExternal = DefaultMaxExternal
	}
	cfg.MaxPages = max(cfg.MaxPages, 1)
	cfg.MaxDepth = max(cfg.MaxDepth, 0)
	start, err := normalize(nil, cfg.URL)
	if err != nil {
		return CrawlResult{}, &StartError{Err: err}
	}
	c := &crawler{cfg: cfg, client: guardedClient(cfg.Guard, cfg.TLSConfig), site: siteKey(start),
		robots: map[string]*Robots{}, issues: map[string]store.HealthIssue{}, visited: map[string]bool{}, external: map[string]string{}}
	defer c.client.CloseIdleConnections()
	var res CrawlResult

	type node struct {
		u      *url.URL
		depth  int
		source string
	}
	frontier := []node{{u: start}}
	c.visited[start.String()] = true
	for len(frontier) > 0 && res.Pages < cfg.MaxPages && ctx.Err() == nil {
		var level []node
		for _, n := range frontier {
			if !c.allowed(ctx, n.u) {
				res.RobotsSkipped++
				if n.depth == 0 {
					return res, &StartError{Err: errors.New("robots.txt disallows the start page")}
				}
				continue
			}
			if res.Pages+len(level) >= cfg.MaxPages {
				break
			}
			level = append(level, n)
		}
		res.Pages += len(level)
		frontier = nil
		var next []node
		var nextMu sync.Mutex
		var startErr error
		c.each(ctx, len(level), func(i int) {
			n := level[i]
			// Pages down to MaxDepth are parsed; the links of the deepest
			// ones are fetched one level further to be checked, not parsed.
			links, err := c.page(ctx, n.u, n.source, n.depth <= cfg.MaxDepth)
			if n.depth == 0 && err != nil {
				startErr = err
				return
			}
			nextMu.Lock()
			defer nextMu.Unlock()
			for _, l := range links {
				next = append(next, node{u: l, depth: n.depth + 1, source: n.u.String()})
			}
		})
		if startErr != nil {
			return res, &StartError{Err: startErr}
		}
		// Keep the order stable: by source page, then link order.
		for _, n := range next {
			key := n.u.String()
			if c.visited[key] {
				continue
			}
			c.visited[key] = true
			frontier = append(frontier, n)
		}
	}
	if cfg.CheckExternal && ctx.Err() == nil {
		res.ExternalChecked = c.checkExternal(ctx)
	}
	res.Issues = c.sortedIssues()
	return res, ctx.Err()
}

// each runs fn(0..n-1) on at most Concurrency goroutines.
func (c *crawler) each(ctx context.Context, n int, fn func(i int)) {
	sem := make(chan struct{}, c.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// guardedClient is the crawler's client; without a tlsConfig of its own it
// verifies sites against the system roots plus the trusted CA bundle.
func guardedClient(g netguard.Guard, tlsConfig *tls.Config) *http.Client {
	if tlsConfig == nil {
		tlsConfig = trust.ClientConfig()
	}
	tr := &http.Transport{
		// No proxy from the environment: every dial must pass the guard.
		Proxy:                 nil,
		DialContext:           g.Dialer(10 * time.Second).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		TLSClientConfig:       tlsConfig,
		MaxIdleConnsPerHost:   DefaultConcurrency,
		IdleConnTimeout:       30 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		// Redirects are followed by fetch, hop by hop.
		return http.ErrUseLastResponse
	}}
}

// fetched is the outcome of one URL, redirects followed.
type fetched struct {
	final    *url.URL
	status   int
	hops     []string
	body     []byte
	html     bool
	duration time.Duration
}

// fetch requests u with method, following up to maxHops redirects (each
// hop dialled through the guard), and reads at most MaxBytes of an HTML
// body when read is set.
func (c *crawler) fetch(ctx context.Context, method string, u *url.URL, read bool) (fetched, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	began := time.Now()
	f := fetched{final: u}
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(ctx, method, f.final.String(), nil)
		if err != nil {
			return f, err
		}
		req.Header.Set("User-Agent", UserAgent)
		req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
		resp, err := c.client.Do(req)
		if err != nil {
			f.duration = time.Since(began)
			return f, cleanErr(err)
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
			if hop >= maxHops {
				f.duration = time.Since(began)
				return f, fmt.Errorf("more than %d redirects", maxHops)
			}
			next, err := normalize(f.final, loc)
			if err != nil {
				return f, fmt.Errorf("redirect to %q: %w", loc, err)
			}
			f.hops = append(f.hops, next.String())
			f.final = next
			continue
		}
		f.status = resp.StatusCode
		ct := strings.ToLower(resp.Header.Get("Content-Type"))
		f.html = strings.Contains(ct, "text/html") || strings.Contains(ct, "application/xhtml")
		if read && f.html && resp.StatusCode < 400 {
			f.body, err = io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBytes))
		} else {
			_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, c.cfg.MaxBytes))
		}
		_ = resp.Body.Close()
		f.duration = time.Since(began)
		if err != nil && !read {
			err = nil
		}
		return f, cleanErr(err)
	}
}

// cleanErr drops the URL from a client error: the issue names it already.
func cleanErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if errors.Is(ue.Err, context.DeadlineExceeded) {
			return errors.New("timed out")
		}
		return ue.Err
	}
	return err
}

// page fetches a site URL and records its issues; when parse is set it
// also checks the page for mixed content, records its external links and
// returns its site links.
func (c *crawler) page(ctx context.Context, u *url.URL, source string, parse bool) ([]*url.URL, error) {
	f, err := c.fetch(ctx, http.MethodGet, u, true)
	target := u.String()
	switch {
	case err != nil:
		c.addIssue(KindBrokenLink, target, source, err.Error())
		return nil, err
	case f.status >= 400:
		c.addIssue(KindBrokenLink, target, source, fmt.Sprintf("HTTP %d", f.status))
		return nil, fmt.Errorf("HTTP %d", f.status)
	}
	if len(f.hops) > 1 {
		c.addIssue(KindRedirectChain, target, source, fmt.Sprintf("%d redirects: %s → %s", len(f.hops), target, strings.Join(f.hops, " → ")))
	}
	if f.duration > c.cfg.SlowAfter {
		c.addIssue(KindSlowPage, target, source, fmt.Sprintf("loaded in %.1f s", f.duration.Seconds()))
	}
	if !parse || !f.html || len(f.body) == 0 || siteKey(f.final) != c.site {
		return nil, nil
	}
	links, resources := extract(f.final, f.body)
	if f.final.Scheme == "https" {
		for _, r := range resources {
			if r.u.Scheme == "http" {
				c.addIssue(KindMixedContent, r.u.String(), f.final.String(), "<"+r.tag+"> loads "+r.u.String()+" over http")
			}
		}
	}
	var out []*url.URL
	for _, l := range links {
		if siteKey(l) == c.site {
			out = append(out, l)
			continue
		}
		if c.cfg.CheckExternal {
			c.mu.Lock()
			if _, ok := c.external[l.String()]; !ok {
				c.external[l.String()] = f.final.String()
			}
			c.mu.Unlock()
		}
	}
	return out, nil
}

// checkExternal checks the external links found (HEAD, then GET when HEAD
// fails) and returns how many were checked.
func (c *crawler) checkExternal(ctx context.Context) int {
	links := make([]string, 0, len(c.external))
	for l := range c.external {
		links = append(links, l)
	}
	slices.Sort(links)
	if len(links) > c.cfg.MaxExternal {
		links = links[:c.cfg.MaxExternal]
	}
	c.each(ctx, len(links), func(i int) {
		u, _ := url.Parse(links[i])
		f, err := c.fetch(ctx, http.MethodHead, u, false)
		if err != nil || f.status >= 400 {
			f, err = c.fetch(ctx, http.MethodGet, u, false)
		}
		switch {
		case err != nil:
			c.addIssue(KindBrokenExternal, links[i], c.external[links[i]], err.Error())
		case f.status >= 400:
			c.addIssue(KindBrokenExternal, links[i], c.external[links[i]], fmt.Sprintf("HTTP %d", f.status))
		}
	})
	return len(links)
}

// allowed checks u against the robots.txt of its origin, fetched once per
// origin through the guard. A robots.txt that cannot be fetched or answers
// an error status allows everything.
func (c *crawler) allowed(ctx context.Context, u *url.URL) bool {
	origin := u.Scheme + "://" + u.Host
	c.mu.Lock()
	rb, ok := c.robots[origin]
	c.mu.Unlock()
	if !ok {
		ru, _ := url.Parse(origin + "/robots.txt")
		f, err := c.fetchRobots(ctx, ru)
		if err == nil {
			rb = f
		}
		c.mu.Lock()
		c.robots[origin] = rb
		c.mu.Unlock()
	}
	return rb.Allowed(u.EscapedPath() + queryOf(u))
}

func queryOf(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	return "?" + u.RawQuery
}

func (c *crawler) fetchRobots(ctx context.Context, u *url.URL) (*Robots, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	cur := u
	for range maxHops {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cur.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("User-Agent", UserAgent)
		resp, err := c.client.Do(req)
		if err != nil {
			return nil, err
		}
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			_ = resp.Body.Close()
			if cur, err = normalize(cur, loc); err != nil {
				return nil, err
			}
			continue
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode >= 400 {
			return nil, fmt.Errorf("robots.txt: HTTP %d", resp.StatusCode)
		}
		return ParseRobots(resp.Body, RobotsAgent), nil
	}
	return nil, errors.New("robots.txt: too many redirects")
}

func (c *crawler) addIssue(kind, target, source, detail string) {
	key := kind + "\x00" + target
	if kind == KindMixedContent {
		key += "\x00" + source
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.issues[key]; !ok {
		c.issues[key] = store.HealthIssue{Kind: kind, URL: target, SourceURL: source, Detail: detail}
	}
}

func (c *crawler) sortedIssues() []store.HealthIssue {
	out := make([]store.HealthIssue, 0, len(c.issues))
	for _, is := range c.issues {
		out = append(out, is)
	}
	slices.SortFunc(out, func(a, b store.HealthIssue) int {
		return strings.Compare(a.Kind+"\x00"+a.URL+"\x00"+a.SourceURL, b.Kind+"\x00"+b.URL+"\x00"+b.SourceURL)
	})
	return out
}

// siteKey is what makes two URLs the same site: the registrable domain, or
// the host and port for IP literals and single-label hosts.
func siteKey(u *url.URL) string {
	if d := hostname.Registrable(u.Hostname()); d != "" {
		return d
	}
	return strings.ToLower(u.Host)
}

// normalize resolves ref against base (nil: ref must be absolute) and keeps
// only http and https URLs, without fragment.
func normalize(base *url.URL, ref string) (*url.URL, error) {
	ref = strings.TrimSpace(ref)
	u, err := url.Parse(ref)
	if err != nil {
		return nil, err
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("not an http or https URL: %q", ref)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("no host in %q", ref)
	}
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// resource is a subresource reference of a page.
type resource struct {
	tag string
	u   *url.URL
}

// linkRelsNotLoaded are <link> relations that do not load anything into
// the page, so an http:// target is not mixed content.
var linkRelsNotLoaded = []string{"canonical", "alternate", "next", "prev", "author", "help", "license", "search", "bookmark", "nofollow", "noopener", "noreferrer", "shortlink"}

// extract returns the <a href> links and the img, script, link, iframe
// subresources of an HTML document, resolved against its <base href> or
// pageURL.
func extract(pageURL *url.URL, body []byte) (links []*url.URL, resources []resource) {
	base := pageURL
	z := html.NewTokenizer(strings.NewReader(string(body)))
	seen := map[string]bool{}
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return links, resources
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		if !hasAttr {
			continue
		}
		attrs := map[string]string{}
		for {
			k, v, more := z.TagAttr()
			attrs[string(k)] = string(v)
			if !more {
				break
			}
		}
		tag := string(name)
		switch tag {
		case "base":
			if b, err := normalize(pageURL, attrs["href"]); err == nil {
				base = b
			}
		case "a", "area":
			href, ok := attrs["href"]
			if !ok || strings.HasPrefix(strings.TrimSpace(href), "#") {
				continue
			}
			if u, err := normalize(base, href); err == nil && !seen[u.String()] {
				seen[u.String()] = true
				links = append(links, u)
			}
		case "img", "script", "iframe":
			if u, err := normalize(base, attrs["src"]); err == nil {
				resources = append(resources, resource{tag: tag, u: u})
			}
		case "link":
			rels := strings.Fields(strings.ToLower(attrs["rel"]))
			if slices.ContainsFunc(rels, func(r string) bool { return slices.Contains(linkRelsNotLoaded, r) }) {
				continue
			}
			if u, err := normalize(base, attrs["href"]); err == nil {
				resources = append(resources, resource{tag: tag, u: u})
			}
		}
	}
}
