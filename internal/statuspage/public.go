package statuspage

import (
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
)

// Error codes of the specification used by the public endpoints.
const (
	CodeNotFound     = "NOT_FOUND"
	CodeUnauthorized = "UNAUTHORIZED"
	CodeValidation   = "VALIDATION_ERROR"
	CodeBadRequest   = "BAD_REQUEST"
	CodeRateLimited  = "RATE_LIMITED"
	CodeInternal     = "INTERNAL_ERROR"
)

// WriteVersions numbers the writes answered in each workspace.
type WriteVersions interface {
	Version(namespace string) uint64
}

// DefaultCacheTTL is how long the data of a page is reused between requests.
const DefaultCacheTTL = 5 * time.Second

// Public serves published status pages. The zero value is not usable: set at
// least Reader. A Public is safe for concurrent use and must not be copied
// after first use.
type Public struct {
	// Reader reads StatusPages, Monitors and MaintenanceWindows; the
	// manager's cached client. With the indexes of RegisterIndexes the slug
	// and custom-domain lookups use them.
	Reader client.Reader
	// Secrets reads the password Secrets of private pages; an uncached reader
	// (the manager caches only API keys). Reader is used when nil.
	Secrets client.Reader
	// Store holds check history and incidents. When nil, pages show live
	// state only (no uptime, bars, incidents or feed entries).
	Store PublicStore
	// Clock is the time source; the real clock when nil.
	Clock clock.PassiveClock
	// BaseURL is the externally visible base URL (https://status.example.com);
	// it makes feed links absolute and marks session cookies Secure.
	BaseURL string
	// SessionKey signs the session cookies of private pages. When empty a
	// random key is made at first use: sessions then end with the process and
	// are valid on this replica only. HA deployments set the same key on
	// every replica (from a shared Secret).
	SessionKey []byte
	// CacheTTL is how long a page's data is reused; DefaultCacheTTL when 0.
	CacheTTL time.Duration
	// Writes numbers the writes the API answered per workspace (the
	// manager's writethrough.Overlay); a page's data is rebuilt after
	// each. When nil, a write shows within CacheTTL.
	Writes WriteVersions
	// ThirdParty supplies the third-party services pages show; none are
	// shown when nil.
	ThirdParty ThirdPartySource
	// Notifier keeps the pages' subscribers and sends their confirmations;
	// the subscribe, confirm and unsubscribe endpoints answer 404 when nil.
	Notifier *Notifier
	// OIDC is the install's OpenID Connect provider that sso pages sign in
	// with; without one (SSOUnavailable) they answer 503 and are never shown.
	OIDC OIDC

	once    sync.Once
	keyOnce sync.Once
	key     []byte
	cache   *ttlCache
	// generations caches each private page's password generation.
	genMu       sync.Mutex
	generations map[string]generationEntry
	// sso is the discovered provider; usedStates the finished sign-ins.
	sso        ssoProvider
	usedStates usedStates
	// loginFailures count failed sign-ins per address and per page.
	loginFailures struct {
		once           sync.Once
		byAddr, byPage *ratelimit.Limiter
	}
}

func (p *Public) init() {
	p.once.Do(func() {
		p.cache = &ttlCache{ttl: p.cacheTTL(), entries: map[string]*cacheEntry{}}
	})
}

func (p *Public) cacheTTL() time.Duration {
	if p.CacheTTL <= 0 {
		return DefaultCacheTTL
	}
	return p.CacheTTL
}

func (p *Public) now() time.Time {
	if p.Clock == nil {
		return time.Now()
	}
	return p.Clock.Now()
}

func (p *Public) secrets() client.Reader {
	if p.Secrets != nil {
		return p.Secrets
	}
	return p.Reader
}

// readPage starts a read-only page endpoint: GET or HEAD.
func (p *Public) readPage(w http.ResponseWriter, r *http.Request, slug string) (*monv1.StatusPage, bool) {
	return p.pageFor(w, r, slug, http.MethodGet, http.MethodHead)
}

// pageFor starts a page endpoint that answers methods (405 with Allow
// otherwise), then finds the page of slug (see lookup); ok is false when
// an answer was written.
func (p *Public) pageFor(w http.ResponseWriter, r *http.Request, slug string, methods ...string) (*monv1.StatusPage, bool) {
	p.init()
	if !slices.Contains(methods, r.Method) {
		w.Header().Set("Allow", strings.Join(methods, ", "))
		writeError(w, http.StatusMethodNotAllowed, "", "Method not allowed")
		return nil, false
	}
	return p.lookup(w, r, slug)
}

// ServeStatus serves the public JSON endpoints of a page: rest is "" for
// GET /status/:slug, "history", "badge.svg" or "feed.xml".
func (p *Public) ServeStatus(w http.ResponseWriter, r *http.Request, slug, rest string) {
	page, ok := p.readPage(w, r, slug)
	if !ok {
		return
	}
	private := accessMode(page) != monv1.AccessPublic
	if rest == "feed.xml" && private {
		// Feed readers cannot sign in: private pages have no feed.
		writeError(w, http.StatusNotFound, CodeNotFound, "Status page not found")
		return
	}
	if !p.authorized(r, page) {
		writeError(w, http.StatusUnauthorized, CodeUnauthorized,
			"This status page is private: sign in at /s/"+Slug(page))
		return
	}
	if private {
		w.Header().Set("Cache-Control", "private, no-cache")
		w.Header().Add("Vary", "Cookie")
	} else {
		w.Header().Set("Access-Control-Allow-Origin", "*")
	}
	switch rest {
	case "":
		p.serveDocument(w, r, page)
	case "history":
		p.serveHistory(w, r, page)
	case "badge.svg":
		p.serveBadge(w, r, page, private)
	case "feed.xml":
		p.serveFeed(w, r, page)
	default:
		writeError(w, http.StatusNotFound, CodeNotFound, "Not found")
	}
}

// lookup finds the published page with the slug, answering 404 when there is
// none (unpublished pages included). The page is the cache's own object (not
// a copy: a 500-monitor page is costly to copy on every request) and must
// not be modified.
func (p *Public) lookup(w http.ResponseWriter, r *http.Request, slug string) (*monv1.StatusPage, bool) {
	pages, err := ListBy(r.Context(), p.Reader, IndexSlug, slug, client.UnsafeDisableDeepCopy)
	if err != nil {
		p.internalError(w, r, err)
		return nil, false
	}
	page := Owner(pages)
	if page == nil || !page.Spec.IsPublic {
		writeError(w, http.StatusNotFound, CodeNotFound, "Status page not found")
		return nil, false
	}
	return page, true
}

// ServeCustomDomain serves a page on its spec.customDomain: when r.Host names
// a published page's domain it serves "/" (the HTML page) and the page's own
// paths (/s/:slug, /s/:slug/login, /s/:slug/logout, /s/:slug/sso, /s/:slug/subscribe, /s/:slug/confirm,
// /s/:slug/unsubscribe, /status/:slug[/…]) and returns true. It
// returns false, writing nothing, when the host is no page's domain or the
// path is not one of those. Like the other Serve methods it counts no rate
// limit: serve it behind the REST core's public limit.
func (p *Public) ServeCustomDomain(w http.ResponseWriter, r *http.Request) bool {
	host := hostOnly(r.Host)
	if host == "" {
		return false
	}
	pages, err := ListBy(r.Context(), p.Reader, IndexCustomDomain, host)
	if err != nil {
		ctrl.LoggerFrom(r.Context()).Error(err, "unable to look up custom domain", "host", host)
		return false
	}
	page := Owner(pages)
	if page == nil || !page.Spec.IsPublic {
		return false
	}
	slug := Slug(page)
	path := r.URL.Path
	switch {
	case path == "/" || path == "" || path == "/s/"+slug:
		p.ServeHTML(w, r, slug)
	case path == "/s/"+slug+"/login":
		p.ServeLogin(w, r, slug)
	case path == "/s/"+slug+"/logout":
		p.ServeLogout(w, r, slug)
	case path == "/s/"+slug+"/sso":
		p.ServeSSOStart(w, r, slug)
	case path == "/s/"+slug+"/subscribe":
		p.ServeSubscribe(w, r, slug)
	case path == "/s/"+slug+"/confirm":
		p.ServeConfirm(w, r, slug)
	case path == "/s/"+slug+"/unsubscribe":
		p.ServeUnsubscribe(w, r, slug)
	case path == "/status/"+slug:
		p.ServeStatus(w, r, slug, "")
	case strings.HasPrefix(path, "/status/"+slug+"/"):
		p.ServeStatus(w, r, slug, strings.TrimPrefix(path, "/status/"+slug+"/"))
	default:
		return false
	}
	return true
}

// hostOnly lower-cases a Host header and drops the port and a trailing dot.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// errorBody is the specification's JSON error shape.
type errorBody struct {
	Error  string       `json:"error"`
	Code   string       `json:"code,omitempty"`
	Errors []fieldError `json:"errors,omitempty"`
}

type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	httpjson.Write(w, status, errorBody{Error: msg, Code: code})
}

func (p *Public) internalError(w http.ResponseWriter, r *http.Request, err error) {
	ctrl.LoggerFrom(r.Context()).Error(err, "unable to serve status page", "path", r.URL.Path)
	writeError(w, http.StatusInternalServerError, CodeInternal, "Internal error")
}

// serveDocument writes GET /status/:slug.
func (p *Public) serveDocument(w http.ResponseWriter, r *http.Request, page *monv1.StatusPage) {
	snap, err := p.snapshot(r.Context(), page)
	if err != nil {
		p.internalError(w, r, err)
		return
	}
	enc, err := snap.documentJSON(page, pickLanguage(r, page))
	if err != nil {
		p.internalError(w, r, err)
		return
	}
	h := w.Header()
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "public, max-age=10")
	}
	h.Add("Vary", "Accept-Language, Accept-Encoding")
	h.Set("ETag", enc.etag)
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatch(match, enc.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	body := enc.plain
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = enc.gz
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// MaxHistoryDays is the largest days value of /history.
const MaxHistoryDays = 90

// serveHistory writes GET /status/:slug/history?days=N.
func (p *Public) serveHistory(w http.ResponseWriter, r *http.Request, page *monv1.StatusPage) {
	days := MaxHistoryDays
	if v := r.URL.Query().Get("days"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxHistoryDays {
			httpjson.Write(w, http.StatusBadRequest, errorBody{
				Error: "Validation failed", Code: CodeValidation,
				Errors: []fieldError{{Field: "days", Message: "must be an integer from 1 to 90"}},
			})
			return
		}
		days = n
	}
	snap, err := p.snapshot(r.Context(), page)
	if err != nil {
		p.internalError(w, r, err)
		return
	}
	if w.Header().Get("Cache-Control") == "" {
		w.Header().Set("Cache-Control", "public, max-age=60")
	}
	httpjson.Write(w, http.StatusOK, snap.history(days))
}
