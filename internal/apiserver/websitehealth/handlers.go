package websitehealth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"k8s.io/utils/clock"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/sitehealth"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// CodeSiteHealthUnavailable answers a crawl request on a server built
// without a website health service (not a code of the specification).
const CodeSiteHealthUnavailable = "SITE_HEALTH_UNAVAILABLE"

// Website health site defaults and bounds of the specification.
const (
	defaultHealthMaxPages  = 100
	defaultHealthMaxDepth  = 3
	defaultHealthThresh    = 10
	maxHealthURLLength     = 2000
	maxHealthAuditURLs     = 3
	maxHealthRecentReports = 10
)

// Store is what the website health endpoints keep in the history store:
// sites, their runs and (through sitehealth.ReportStore) reports.
type Store interface {
	sitehealth.ReportStore
	CreateHealthSite(ctx context.Context, s store.HealthSite) (store.HealthSite, error)
	GetHealthSite(ctx context.Context, id string) (store.HealthSite, error)
	ListHealthSites(ctx context.Context, namespace string) ([]store.HealthSite, error)
	UpdateHealthSite(ctx context.Context, s store.HealthSite) (store.HealthSite, error)
	DeleteHealthSite(ctx context.Context, id string) error
	ListHealthRuns(ctx context.Context, siteID string, limit int) ([]store.HealthRun, error)
}

// Handlers serve /website-health: a workspace's sites, their crawls and
// reports.
type Handlers struct {
	st    Store
	clock clock.PassiveClock
	// svc crawls and audits; nil answers 503 to crawl requests.
	svc *sitehealth.Service
}

// New returns the handlers; svc may be nil: sites and reports can then
// still be managed and read, and crawl requests answer 503.
func New(st Store, clk clock.PassiveClock, svc *sitehealth.Service) *Handlers {
	return &Handlers{st: st, clock: clk, svc: svc}
}

// Routes registers the website health endpoints. Every one needs the
// website-health plan feature; crawls count 20 per hour per workspace.
func (h *Handlers) Routes(rt *core.Router) {
	feature := core.WithFeature(monv1.FeatureWebsiteHealth)
	runs := core.WithLimit(core.NewLimiter("website-health-run", 20, time.Hour, core.PerWorkspace, ratelimit.JSON))
	get, post, patch, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	rt.Handle(get, "/website-health", h.listSites, feature, core.Doc(apidoc.Op{
		Tag:     "Website health",
		Summary: "Sites with their latest reports",
		Resp:    SiteList{},
	}))
	rt.Handle(post, "/website-health/sites", h.createSite, feature, core.Doc(apidoc.Op{
		Tag:     "Website health",
		Summary: "Add a site",
		Body:    restapi.SiteBody{},
		Status:  201,
		Resp:    Site{},
	}))
	rt.Handle(get, "/website-health/sites/{id}", h.getSite, feature, core.Doc(apidoc.Op{Tag: "Website health", Summary: "Site details", Resp: SiteDetail{}}))
	rt.Handle(patch, "/website-health/sites/{id}", h.updateSite, feature, core.Doc(apidoc.Op{
		Tag:     "Website health",
		Summary: "Update a site",
		Body:    restapi.SiteBody{},
		Resp:    Site{},
	}))
	rt.Handle(del, "/website-health/sites/{id}", h.deleteSite, feature, core.Doc(apidoc.Op{Tag: "Website health", Summary: "Delete a site", Status: 204}))
	rt.Handle(post, "/website-health/sites/{id}/run", h.runSite, feature, runs, core.Doc(apidoc.Op{
		Tag:     "Website health",
		Summary: "Crawl now",
		Status:  202,
		Resp:    SiteRun{},
		Extra:   []int{409, 503},
	}))
	rt.Handle(get, "/website-health/reports/{runId}", h.report, feature, core.Doc(apidoc.Op{Tag: "Website health", Summary: "A crawl report", Resp: sitehealth.Report{}}))
	rt.Handle(get, "/website-health/reports/{runId}/issues.csv", h.issuesCSV, feature, core.Doc(apidoc.Op{
		Tag:      "Website health",
		Summary:  "A report's issues as CSV",
		Resp:     apidoc.Str("CSV"),
		RespType: "text/csv",
	}))
}

// The answers extend the stored records with a field, so they are declared
// here rather than in restapi (which may not import the store).

// Site is a site with its latest crawl.
type Site struct {
	store.HealthSite
	LatestReport *SiteRun `json:"latest_report"`
}

// SiteRun is a crawl without its issues.
type SiteRun struct {
	store.HealthRun
	Summary *sitehealth.Summary `json:"summary"`
}

// SiteDetail is a site with its latest crawls.
type SiteDetail struct {
	Site
	// Reports are the latest crawls (up to 10), newest first, without
	// summaries.
	Reports []SiteRun `json:"reports"`
}

// SiteList is the answer of GET /website-health/sites.
type SiteList struct {
	Sites []Site `json:"sites"`
	// AuditAvailable is whether this server can run the browser audit.
	AuditAvailable bool `json:"audit_available"`
}

func runView(r store.HealthRun) *SiteRun {
	v := &SiteRun{HealthRun: r, Summary: sitehealth.DecodeSummary(r)}
	v.HealthRun.Summary = nil
	return v
}

func (h *Handlers) siteView(r *http.Request, site store.HealthSite) (Site, error) {
	v := Site{HealthSite: site}
	runs, err := h.st.ListHealthRuns(r.Context(), site.ID, 1)
	if err != nil {
		return v, err
	}
	if len(runs) > 0 {
		v.LatestReport = runView(runs[0])
	}
	return v, nil
}

func (h *Handlers) listSites(w http.ResponseWriter, r *http.Request) {
	sites, err := h.st.ListHealthSites(r.Context(), core.CallerFrom(r.Context()).Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out := make([]Site, 0, len(sites))
	for _, site := range sites {
		v, err := h.siteView(r, site)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		out = append(out, v)
	}
	httpjson.Write(w, http.StatusOK, SiteList{Sites: out, AuditAvailable: h.svc != nil && h.svc.Auditor.Available()})
}

// pathHealthSite finds the site of the {id} path value in the caller's
// workspace.
func (h *Handlers) pathHealthSite(w http.ResponseWriter, r *http.Request) (store.HealthSite, bool) {
	site, err := h.st.GetHealthSite(r.Context(), chi.URLParam(r, "id"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && site.Namespace != core.CallerFrom(r.Context()).Namespace) {
		core.WriteNotFound(w, "Site")
		return site, false
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return site, false
	}
	return site, true
}

// pathHealthRun finds the run of the {runId} path value in the caller's
// workspace.
func (h *Handlers) pathHealthRun(w http.ResponseWriter, r *http.Request) (sitehealth.Report, bool) {
	rep, err := sitehealth.LoadReport(r.Context(), h.st, chi.URLParam(r, "runId"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && rep.Namespace != core.CallerFrom(r.Context()).Namespace) {
		core.WriteNotFound(w, "Report")
		return rep, false
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return rep, false
	}
	return rep, true
}

// apply copies the sent fields of b onto site.
func apply(b *restapi.SiteBody, site *store.HealthSite) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	set(&site.Name, b.Name)
	set(&site.URL, b.URL)
	set(&site.PerfAuditFormFactor, b.PerfAuditFormFactor)
	set(&site.Schedule, b.Schedule)
	for dst, v := range map[*int]*int{&site.MaxPages: b.MaxPages, &site.MaxDepth: b.MaxDepth, &site.ScoreDropThresh: b.ScoreDropThresh} {
		if v != nil {
			*dst = *v
		}
	}
	for dst, v := range map[*bool]*bool{&site.CheckExternalLinks: b.CheckExternalLinks, &site.PerfAuditEnabled: b.PerfAuditEnabled,
		&site.NotifyOnIssues: b.NotifyOnIssues, &site.IsActive: b.IsActive} {
		if v != nil {
			*dst = *v
		}
	}
	if b.PerfAuditURLs != nil {
		site.PerfAuditURLs = make([]string, 0, len(*b.PerfAuditURLs))
		for _, u := range *b.PerfAuditURLs {
			site.PerfAuditURLs = append(site.PerfAuditURLs, strings.TrimSpace(u))
		}
	}
}

// validHealthURL reports whether v is an http or https URL with a host,
// at most 2000 characters long.
func validHealthURL(v string) bool {
	if v == "" || len(v) > maxHealthURLLength {
		return false
	}
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// validateHealthSite checks a site against the specification's rules.
func validateHealthSite(site store.HealthSite) []core.FieldError {
	var errs []core.FieldError
	if n := utf8.RuneCountInString(site.Name); n < 1 || n > 255 {
		errs = append(errs, core.FieldErr("name", "must be 1-255 characters"))
	}
	if !validHealthURL(site.URL) {
		errs = append(errs, core.FieldErr("url", "must be a valid http:// or https:// URL of at most %d characters", maxHealthURLLength))
	}
	if site.MaxPages < 1 || site.MaxPages > 500 {
		errs = append(errs, core.FieldErr("max_pages", "must be between 1 and 500"))
	}
	if site.MaxDepth < 0 || site.MaxDepth > 10 {
		errs = append(errs, core.FieldErr("max_depth", "must be between 0 and 10"))
	}
	if len(site.PerfAuditURLs) > maxHealthAuditURLs {
		errs = append(errs, core.FieldErr("perf_audit_urls", "at most %d URLs", maxHealthAuditURLs))
	}
	for _, u := range site.PerfAuditURLs {
		if !validHealthURL(u) {
			errs = append(errs, core.FieldErr("perf_audit_urls", "%q is not a valid http:// or https:// URL of at most %d characters", u, maxHealthURLLength))
			break
		}
	}
	if !slices.Contains([]string{store.HealthFormMobile, store.HealthFormDesktop}, site.PerfAuditFormFactor) {
		errs = append(errs, core.FieldErr("perf_audit_form_factor", "must be mobile or desktop"))
	}
	if !slices.Contains([]string{store.HealthScheduleDaily, store.HealthScheduleWeekly, store.HealthScheduleManual}, site.Schedule) {
		errs = append(errs, core.FieldErr("schedule", "must be daily, weekly or manual"))
	}
	if site.ScoreDropThresh < 1 || site.ScoreDropThresh > 100 {
		errs = append(errs, core.FieldErr("score_drop_thresh", "must be between 1 and 100"))
	}
	return errs
}

func (h *Handlers) createSite(w http.ResponseWriter, r *http.Request) {
	var b restapi.SiteBody
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	site := store.HealthSite{Namespace: core.CallerFrom(r.Context()).Namespace, MaxPages: defaultHealthMaxPages, MaxDepth: defaultHealthMaxDepth,
		PerfAuditURLs: []string{}, PerfAuditFormFactor: store.HealthFormMobile, Schedule: store.HealthScheduleWeekly,
		NotifyOnIssues: true, ScoreDropThresh: defaultHealthThresh, IsActive: true, CreatedAt: h.clock.Now()}
	apply(&b, &site)
	var errs []core.FieldError
	if b.Name == nil {
		errs = append(errs, core.FieldErr("name", "is required"))
	}
	if b.URL == nil {
		errs = append(errs, core.FieldErr("url", "is required"))
	}
	if errs = append(errs, validateHealthSite(site)...); len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	site, err := h.st.CreateHealthSite(r.Context(), site)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusCreated, Site{HealthSite: site})
}

func (h *Handlers) getSite(w http.ResponseWriter, r *http.Request) {
	site, ok := h.pathHealthSite(w, r)
	if !ok {
		return
	}
	runs, err := h.st.ListHealthRuns(r.Context(), site.ID, maxHealthRecentReports)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	recent := make([]SiteRun, 0, len(runs))
	for _, run := range runs {
		v := runView(run)
		v.Summary = nil
		recent = append(recent, *v)
	}
	out := SiteDetail{Site: Site{HealthSite: site}, Reports: recent}
	if len(runs) > 0 {
		out.LatestReport = runView(runs[0])
	}
	httpjson.Write(w, http.StatusOK, out)
}

func (h *Handlers) updateSite(w http.ResponseWriter, r *http.Request) {
	site, ok := h.pathHealthSite(w, r)
	if !ok {
		return
	}
	var b restapi.SiteBody
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	apply(&b, &site)
	if errs := validateHealthSite(site); len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	site, err := h.st.UpdateHealthSite(r.Context(), site)
	if errors.Is(err, store.ErrNotFound) {
		core.WriteNotFound(w, "Site")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	v, err := h.siteView(r, site)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, v)
}

func (h *Handlers) deleteSite(w http.ResponseWriter, r *http.Request) {
	site, ok := h.pathHealthSite(w, r)
	if !ok {
		return
	}
	err := h.st.DeleteHealthSite(r.Context(), site.ID)
	if errors.Is(err, store.ErrNotFound) {
		core.WriteNotFound(w, "Site")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// runSite starts a crawl and answers 202 with the running report;
// its progress is read from the report.
func (h *Handlers) runSite(w http.ResponseWriter, r *http.Request) {
	site, ok := h.pathHealthSite(w, r)
	if !ok {
		return
	}
	if h.svc == nil {
		core.WriteError(w, http.StatusServiceUnavailable, CodeSiteHealthUnavailable, "website health crawls are not running on this server")
		return
	}
	run, err := h.svc.Trigger(r.Context(), site, sitehealth.TriggerManual)
	if errors.Is(err, sitehealth.ErrRunInProgress) {
		core.WriteError(w, http.StatusConflict, core.CodeConflict, err.Error())
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusAccepted, runView(run))
}

func (h *Handlers) report(w http.ResponseWriter, r *http.Request) {
	rep, ok := h.pathHealthRun(w, r)
	if !ok {
		return
	}
	httpjson.Write(w, http.StatusOK, rep)
}

func (h *Handlers) issuesCSV(w http.ResponseWriter, r *http.Request) {
	rep, ok := h.pathHealthRun(w, r)
	if !ok {
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/csv; charset=utf-8")
	hdr.Set("Content-Disposition", `attachment; filename="website-health-`+rep.ID+`-issues.csv"`)
	w.WriteHeader(http.StatusOK)
	cw := core.NewCSVExport(w)
	cw.Row("kind", "url", "source_url", "detail")
	for _, is := range rep.Issues {
		cw.Row(is.Kind, is.URL, is.SourceURL, is.Detail)
	}
	cw.Flush()
}
