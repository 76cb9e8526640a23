package sitehealth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Service defaults.
const (
	// DefaultInterval is how often the scheduler looks for due sites.
	DefaultInterval = 5 * time.Minute
	// DefaultRunTimeout bounds one run, crawl and audit together.
	DefaultRunTimeout = 20 * time.Minute
	// DefaultMaxRuns is how many runs one replica performs at once.
	DefaultMaxRuns = 2
	// KeepRuns is how many runs (reports) are kept per site.
	KeepRuns = 30
)

// Run triggers.
const (
	TriggerManual    = "manual"
	TriggerScheduled = "scheduled"
)

// ErrRunInProgress means the site already has a run in progress.
var ErrRunInProgress = errors.New("a crawl of this site is already in progress")

// Notifier builds notice events addressed to the channels that take them.
// It is declared here, where it is used, so this service does not depend
// on the alerting package; the manager wires *alerting.Router.
type Notifier interface {
	// NoticeEvent builds the outbox event of a notice of kind with payload
	// in namespace; affected monitors narrow the channels by routing.
	NoticeEvent(ctx context.Context, namespace, kind string, payload any, affected []*monv1.Monitor) (store.OutboxEvent, error)
	// Link is the dashboard URL of path, "" without a public URL.
	Link(path string) string
}

// Service runs website health crawls and keeps their reports. It is a
// manager Runnable that needs leader election (the schedules); Trigger and
// the read methods may be used on every replica.
type Service struct {
	// Store keeps sites, runs and the outbox.
	Store Store
	// Notifier builds site_health.issues events; nil sends none.
	Notifier Notifier
	// Kick wakes the delivery worker after an event is enqueued; may be nil.
	Kick func()
	// Auditor runs performance audits; nil reports audits unavailable.
	Auditor *Auditor
	// AllowPrivateTargets lets crawls reach private addresses (the
	// cluster's monitor target setting).
	AllowPrivateTargets bool
	// Crawl overrides crawl settings other than the site's (timeouts, slow
	// threshold); its URL and limits are ignored.
	Crawl CrawlConfig
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Interval, RunTimeout and MaxRuns default to the Default* constants.
	Interval   time.Duration
	RunTimeout time.Duration
	MaxRuns    int
	// Log receives the service's logs.
	Log logr.Logger

	once    sync.Once
	slots   chan struct{}
	mu      sync.Mutex
	running map[string]bool
	wg      sync.WaitGroup
}

// Summary is the report document stored with a run.
type Summary struct {
	CrawlResult
	Counts Counts `json:"counts"`
	// Audit is nil when the site has no audit enabled.
	Audit *AuditReport `json:"audit,omitempty"`
}

func (s *Service) init() {
	s.once.Do(func() {
		n := s.MaxRuns
		if n <= 0 {
			n = DefaultMaxRuns
		}
		s.slots = make(chan struct{}, n)
		s.running = map[string]bool{}
	})
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) log() logr.Logger {
	if s.Log.GetSink() == nil {
		return logr.Discard()
	}
	return s.Log
}

// NeedLeaderElection makes the scheduler run on the leader only.
func (s *Service) NeedLeaderElection() bool { return true }

// Start runs due sites every Interval until ctx ends, then waits for the
// runs it started.
func (s *Service) Start(ctx context.Context) error {
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log().Error(err, "website health sweep failed")
		}
		select {
		case <-ctx.Done():
			s.Wait()
			return nil
		case <-t.C:
		}
	}
}

// Wait waits for the runs in progress.
func (s *Service) Wait() { s.wg.Wait() }

// Due reports whether a site on schedule is due at now, given its latest
// run (nil when it never ran): daily sites 24 hours and weekly sites 7 days
// after the latest run started; a site that never ran is due at once.
func Due(site store.HealthSite, latest *store.HealthRun, now time.Time) bool {
	if !site.IsActive {
		return false
	}
	var every time.Duration
	switch site.Schedule {
	case store.HealthScheduleDaily:
		every = 24 * time.Hour
	case store.HealthScheduleWeekly:
		every = 7 * 24 * time.Hour
	default:
		return false
	}
	if latest == nil {
		return true
	}
	return latest.Status != store.HealthRunRunning && !now.Before(latest.StartedAt.Add(every))
}

// Sweep starts the runs of the sites that are due and closes runs left
// running by a replica that stopped.
func (s *Service) Sweep(ctx context.Context) error {
	sites, err := s.Store.ListHealthSites(ctx, "")
	if err != nil {
		return err
	}
	now := s.now()
	var errs []error
	for _, site := range sites {
		runs, err := s.Store.ListHealthRuns(ctx, site.ID, 1)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var latest *store.HealthRun
		if len(runs) > 0 {
			latest = &runs[0]
		}
		if latest != nil && latest.Status == store.HealthRunRunning && !s.isRunning(site.ID) &&
			now.Sub(latest.StartedAt) > 2*s.runTimeout() {
			_, err := s.Store.FinishHealthRun(ctx, store.HealthRun{ID: latest.ID, Status: store.HealthRunFailed,
				Error: "the crawl was interrupted"}, nil)
			if err != nil && !errors.Is(err, store.ErrHealthRunFinished) {
				errs = append(errs, err)
			}
			continue
		}
		if !Due(site, latest, now) {
			continue
		}
		if _, err := s.Trigger(ctx, site, TriggerScheduled); err != nil && !errors.Is(err, ErrRunInProgress) {
			errs = append(errs, fmt.Errorf("site %s: %w", site.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (s *Service) runTimeout() time.Duration {
	if s.RunTimeout > 0 {
		return s.RunTimeout
	}
	return DefaultRunTimeout
}

func (s *Service) isRunning(siteID string) bool {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[siteID]
}

// Trigger stores a new running run of site and performs it in the
// background (at most MaxRuns at once on this replica), returning the run
// at once. It fails with ErrRunInProgress while the site has a run.
func (s *Service) Trigger(ctx context.Context, site store.HealthSite, trigger string) (store.HealthRun, error) {
	s.init()
	s.mu.Lock()
	if s.running[site.ID] {
		s.mu.Unlock()
		return store.HealthRun{}, ErrRunInProgress
	}
	s.running[site.ID] = true
	s.mu.Unlock()
	run, err := s.Store.StartHealthRun(ctx, store.HealthRun{SiteID: site.ID, Trigger: trigger, StartedAt: s.now()})
	if err != nil {
		s.release(site.ID)
		return run, err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.release(site.ID)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.runTimeout())
		defer cancel()
		s.slots <- struct{}{}
		defer func() { <-s.slots }()
		if _, err := s.perform(rctx, site, run); err != nil {
			s.log().Error(err, "website health run failed", "site", site.ID, "run", run.ID)
		}
	}()
	return run, nil
}

func (s *Service) release(siteID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, siteID)
}

// RunNow performs a run of site synchronously and returns it finished.
func (s *Service) RunNow(ctx context.Context, site store.HealthSite, trigger string) (store.HealthRun, error) {
	run, err := s.Store.StartHealthRun(ctx, store.HealthRun{SiteID: site.ID, Trigger: trigger, StartedAt: s.now()})
	if err != nil {
		return run, err
	}
	return s.perform(ctx, site, run)
}

// perform crawls and audits site, then stores the outcome of run with its
// issues and, when notifications are on and something is new, the
// site_health.issues event.
func (s *Service) perform(ctx context.Context, site store.HealthSite, run store.HealthRun) (store.HealthRun, error) {
	guard := netguard.Guard{AllowPrivate: s.AllowPrivateTargets}
	cfg := s.Crawl
	cfg.URL, cfg.MaxPages, cfg.MaxDepth, cfg.CheckExternal, cfg.Guard = site.URL, site.MaxPages, site.MaxDepth, site.CheckExternalLinks, guard
	res, crawlErr := Crawl(ctx, cfg)
	sum := Summary{CrawlResult: res, Counts: CountIssues(res.Issues)}
	if site.PerfAuditEnabled && crawlErr == nil {
		urls := site.PerfAuditURLs
		if len(urls) == 0 {
			urls = []string{site.URL}
		}
		a := s.Auditor
		if a == nil {
			a = &Auditor{ChromePath: "/nonexistent"}
		}
		aud := *a
		aud.Guard = guard
		rep := aud.Audit(ctx, urls, site.PerfAuditFormFactor)
		sum.Audit = &rep
	}
	out := store.HealthRun{ID: run.ID, Status: store.HealthRunCompleted}
	if crawlErr != nil {
		out.Status, out.Error = store.HealthRunFailed, crawlErr.Error()
	} else {
		score := CrawlScore(sum.Counts)
		out.Score = &score
	}
	raw, err := json.Marshal(sum)
	if err != nil {
		return run, fmt.Errorf("encode website health summary: %w", err)
	}
	out.Summary = raw
	finishedAt := s.now()
	out.FinishedAt = &finishedAt

	// The store call must not be lost to a run that hit its deadline.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var events []store.OutboxEvent
	if site.NotifyOnIssues {
		ev, ok, err := s.issuesEvent(sctx, site, out, sum, res.Issues)
		if err != nil {
			s.log().Error(err, "cannot build the website health event", "site", site.ID)
		} else if ok {
			events = append(events, ev)
		}
	}
	done, err := s.Store.FinishHealthRun(sctx, out, res.Issues, events...)
	if err != nil {
		return done, fmt.Errorf("record website health run: %w", err)
	}
	if len(events) > 0 {
		s.log().Info("website health event enqueued", "site", site.ID, "run", run.ID, "channels", len(events[0].Channels))
		if s.Kick != nil {
			s.Kick()
		}
	}
	if _, err := s.Store.PruneHealthRuns(sctx, site.ID, KeepRuns); err != nil {
		s.log().Error(err, "cannot prune website health runs", "site", site.ID)
	}
	return done, nil
}

// issuesEvent builds the site_health.issues event of a finished run: sent
// when the crawl failed, when it found errors the previous finished run did
// not have, or when an audit score fell by at least the site's threshold.
func (s *Service) issuesEvent(ctx context.Context, site store.HealthSite, run store.HealthRun, sum Summary, issues []store.HealthIssue) (store.OutboxEvent, bool, error) {
	if s.Notifier == nil {
		return store.OutboxEvent{}, false, nil
	}
	prev, prevIssues, err := s.previous(ctx, site.ID, run.ID)
	if err != nil {
		return store.OutboxEvent{}, false, err
	}
	newErrors := NewErrors(prevIssues, issues)
	var drops []alertevent.ScoreDrop
	if prev != nil {
		var ps Summary
		if json.Unmarshal(prev.Summary, &ps) == nil {
			drops = ScoreDrops(ps.Audit, sum.Audit, site.ScoreDropThresh)
		}
	}
	if run.Status != store.HealthRunFailed && len(newErrors) == 0 && len(drops) == 0 {
		return store.OutboxEvent{}, false, nil
	}
	p := alertevent.NewSiteHealthPayload(alertevent.SiteHealthPayload{
		URL: s.reportURL(run.ID), SiteID: site.ID, RunID: run.ID, SiteURL: site.URL, Status: run.Status,
		BrokenLinks: sum.Counts.BrokenLinks + sum.Counts.BrokenExternal, MixedContent: sum.Counts.MixedContent,
		NewErrors: newErrors, ScoreDrops: drops,
	})
	ev, err := s.Notifier.NoticeEvent(ctx, site.Namespace, p.Event, p, nil)
	if err != nil {
		return ev, false, fmt.Errorf("build %s event: %w", p.Event, err)
	}
	ev.CreatedAt = s.now()
	return ev, true, nil
}

// previous returns the latest completed run of the site before runID and
// its issues (nil when there is none).
func (s *Service) previous(ctx context.Context, siteID, runID string) (*store.HealthRun, []store.HealthIssue, error) {
	runs, err := s.Store.ListHealthRuns(ctx, siteID, 10)
	if err != nil {
		return nil, nil, err
	}
	for i := range runs {
		if runs[i].ID == runID || runs[i].Status != store.HealthRunCompleted {
			continue
		}
		issues, err := s.Store.ListHealthIssues(ctx, runs[i].ID)
		return &runs[i], issues, err
	}
	return nil, nil, nil
}

// NewErrors returns the errors of cur whose kind and URL prev does not
// have, at most alertevent.MaxSiteHealthErrors.
func NewErrors(prev, cur []store.HealthIssue) []alertevent.SiteHealthError {
	had := map[string]bool{}
	for _, is := range prev {
		had[is.Kind+"\x00"+is.URL] = true
	}
	out := []alertevent.SiteHealthError{}
	seen := map[string]bool{}
	for _, is := range cur {
		key := is.Kind + "\x00" + is.URL
		if !IsError(is.Kind) || had[key] || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, alertevent.SiteHealthError{Kind: is.Kind, TargetURL: is.URL})
		if len(out) == alertevent.MaxSiteHealthErrors {
			break
		}
	}
	return out
}

// ScoreDrops compares the audit scores of two runs page by page and returns
// those that fell by at least thresh points.
func ScoreDrops(prev, cur *AuditReport, thresh int) []alertevent.ScoreDrop {
	if prev == nil || cur == nil {
		return nil
	}
	thresh = max(thresh, 1)
	before := map[string]map[string]int{}
	for _, p := range prev.Pages {
		if p.Error == "" {
			before[p.URL] = p.Scores
		}
	}
	var out []alertevent.ScoreDrop
	for _, p := range cur.Pages {
		old, ok := before[p.URL]
		if !ok || p.Error != "" {
			continue
		}
		for _, cat := range []string{CategoryPerformance, CategoryAccessibility, CategoryBestPractices, CategorySEO} {
			from, ok1 := old[cat]
			to, ok2 := p.Scores[cat]
			if ok1 && ok2 && from-to >= thresh {
				out = append(out, alertevent.ScoreDrop{URL: p.URL, Category: cat, From: float64(from), To: float64(to)})
			}
		}
	}
	return out
}

func (s *Service) reportURL(runID string) string {
	if s.Notifier == nil {
		return ""
	}
	return s.Notifier.Link("/website-health/reports/" + runID)
}
