package apiserver

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
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

// registerSiteHealthRoutes registers the website health endpoints. Every
// one needs the website-health plan feature; crawls count 20 per hour per
// workspace. h may be nil: sites and reports can then still be managed and
// read, and crawl requests answer 503.
func (s *Server) registerSiteHealthRoutes(h *sitehealth.Service) {
	feature := core.WithFeature(monv1.FeatureWebsiteHealth)
	runs := core.WithLimit(core.NewLimiter("website-health-run", 20, time.Hour, core.PerWorkspace, ratelimit.JSON))
	get, post, patch, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	s.rt.Handle(get, "/website-health", s.listHealthSites(h), feature)
	s.rt.Handle(post, "/website-health/sites", s.createHealthSite, feature)
	s.rt.Handle(get, "/website-health/sites/{id}", s.getHealthSite, feature)
	s.rt.Handle(patch, "/website-health/sites/{id}", s.updateHealthSite, feature)
	s.rt.Handle(del, "/website-health/sites/{id}", s.deleteHealthSite, feature)
	s.rt.Handle(post, "/website-health/sites/{id}/run", s.runHealthSite(h), feature, runs)
	s.rt.Handle(get, "/website-health/reports/{runId}", s.healthReport, feature)
	s.rt.Handle(get, "/website-health/reports/{runId}/issues.csv", s.healthIssuesCSV, feature)
}

// healthSiteView is a site with its latest report summary.
type healthSiteView struct {
	store.HealthSite
	LatestReport *healthRunView `json:"latest_report"`
}

// healthRunView is a run without its issues.
type healthRunView struct {
	store.HealthRun
	Summary *sitehealth.Summary `json:"summary"`
}

func runView(r store.HealthRun) *healthRunView {
	v := &healthRunView{HealthRun: r, Summary: sitehealth.DecodeSummary(r)}
	v.HealthRun.Summary = nil
	return v
}

func (s *Server) siteView(r *http.Request, site store.HealthSite) (healthSiteView, error) {
	v := healthSiteView{HealthSite: site}
	runs, err := s.opts.Store.ListHealthRuns(r.Context(), site.ID, 1)
	if err != nil {
		return v, err
	}
	if len(runs) > 0 {
		v.LatestReport = runView(runs[0])
	}
	return v, nil
}

func (s *Server) listHealthSites(h *sitehealth.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sites, err := s.opts.Store.ListHealthSites(r.Context(), core.CallerFrom(r.Context()).Namespace)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		out := make([]healthSiteView, 0, len(sites))
		for _, site := range sites {
			v, err := s.siteView(r, site)
			if err != nil {
				core.WriteErr(w, r, err)
				return
			}
			out = append(out, v)
		}
		httpjson.Write(w, http.StatusOK, map[string]any{
			"sites":           out,
			"audit_available": h != nil && h.Auditor.Available(),
		})
	}
}

// pathHealthSite finds the site of the {id} path value in the caller's
// workspace.
func (s *Server) pathHealthSite(w http.ResponseWriter, r *http.Request) (store.HealthSite, bool) {
	site, err := s.opts.Store.GetHealthSite(r.Context(), chi.URLParam(r, "id"))
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
func (s *Server) pathHealthRun(w http.ResponseWriter, r *http.Request) (sitehealth.Report, bool) {
	rep, err := sitehealth.LoadReport(r.Context(), s.opts.Store, chi.URLParam(r, "runId"))
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

// siteBody is the create and update body of a site; absent fields keep
// their value (or default on create).
type siteBody struct {
	Name                *string   `json:"name"`
	URL                 *string   `json:"url"`
	MaxPages            *int      `json:"max_pages"`
	MaxDepth            *int      `json:"max_depth"`
	CheckExternalLinks  *bool     `json:"check_external_links"`
	PerfAuditEnabled    *bool     `json:"perf_audit_enabled"`
	PerfAuditURLs       *[]string `json:"perf_audit_urls"`
	PerfAuditFormFactor *string   `json:"perf_audit_form_factor"`
	Schedule            *string   `json:"schedule"`
	NotifyOnIssues      *bool     `json:"notify_on_issues"`
	ScoreDropThresh     *int      `json:"score_drop_thresh"`
	IsActive            *bool     `json:"is_active"`
}

// apply copies the sent fields onto site.
func (b *siteBody) apply(site *store.HealthSite) {
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

func (s *Server) createHealthSite(w http.ResponseWriter, r *http.Request) {
	var b siteBody
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	site := store.HealthSite{Namespace: core.CallerFrom(r.Context()).Namespace, MaxPages: defaultHealthMaxPages, MaxDepth: defaultHealthMaxDepth,
		PerfAuditURLs: []string{}, PerfAuditFormFactor: store.HealthFormMobile, Schedule: store.HealthScheduleWeekly,
		NotifyOnIssues: true, ScoreDropThresh: defaultHealthThresh, IsActive: true, CreatedAt: s.clock.Now()}
	b.apply(&site)
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
	site, err := s.opts.Store.CreateHealthSite(r.Context(), site)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusCreated, healthSiteView{HealthSite: site})
}

func (s *Server) getHealthSite(w http.ResponseWriter, r *http.Request) {
	site, ok := s.pathHealthSite(w, r)
	if !ok {
		return
	}
	runs, err := s.opts.Store.ListHealthRuns(r.Context(), site.ID, maxHealthRecentReports)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	recent := make([]*healthRunView, 0, len(runs))
	for _, run := range runs {
		v := runView(run)
		v.Summary = nil
		recent = append(recent, v)
	}
	out := struct {
		healthSiteView
		Reports []*healthRunView `json:"reports"`
	}{healthSiteView: healthSiteView{HealthSite: site}, Reports: recent}
	if len(runs) > 0 {
		out.LatestReport = runView(runs[0])
	}
	httpjson.Write(w, http.StatusOK, out)
}

func (s *Server) updateHealthSite(w http.ResponseWriter, r *http.Request) {
	site, ok := s.pathHealthSite(w, r)
	if !ok {
		return
	}
	var b siteBody
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	b.apply(&site)
	if errs := validateHealthSite(site); len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	site, err := s.opts.Store.UpdateHealthSite(r.Context(), site)
	if errors.Is(err, store.ErrNotFound) {
		core.WriteNotFound(w, "Site")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	v, err := s.siteView(r, site)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, v)
}

func (s *Server) deleteHealthSite(w http.ResponseWriter, r *http.Request) {
	site, ok := s.pathHealthSite(w, r)
	if !ok {
		return
	}
	err := s.opts.Store.DeleteHealthSite(r.Context(), site.ID)
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

// runHealthSite starts a crawl and answers 202 with the running report;
// its progress is read from the report.
func (s *Server) runHealthSite(h *sitehealth.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		site, ok := s.pathHealthSite(w, r)
		if !ok {
			return
		}
		if h == nil {
			core.WriteError(w, http.StatusServiceUnavailable, CodeSiteHealthUnavailable, "website health crawls are not running on this server")
			return
		}
		run, err := h.Trigger(r.Context(), site, sitehealth.TriggerManual)
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
}

func (s *Server) healthReport(w http.ResponseWriter, r *http.Request) {
	rep, ok := s.pathHealthRun(w, r)
	if !ok {
		return
	}
	httpjson.Write(w, http.StatusOK, rep)
}

func (s *Server) healthIssuesCSV(w http.ResponseWriter, r *http.Request) {
	rep, ok := s.pathHealthRun(w, r)
	if !ok {
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="website-health-`+rep.ID+`-issues.csv"`)
	w.WriteHeader(http.StatusOK)
	cw := newCSVExport(w)
	cw.Row("kind", "url", "source_url", "detail")
	for _, is := range rep.Issues {
		cw.Row(is.Kind, is.URL, is.SourceURL, is.Detail)
	}
	cw.Flush()
}
