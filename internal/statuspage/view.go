package statuspage

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Document is the JSON of GET /status/:slug. It carries display names, states,
// uptime and (when the page shows them) response times; never a monitor's
// target, host, regions or errors.
type Document struct {
	Slug              string   `json:"slug"`
	Title             string   `json:"title"`
	Description       string   `json:"description"`
	Language          string   `json:"language"`
	Languages         []string `json:"languages"`
	LogoURL           *string  `json:"logo_url"`
	FaviconURL        *string  `json:"favicon_url"`
	AccentColor       *string  `json:"accent_color"`
	HidePoweredBy     bool     `json:"hide_powered_by"`
	ShowResponseTimes bool     `json:"show_response_times"`
	// Status is the overall status (see OverallStatus).
	Status          Overall             `json:"status"`
	UpdatedAt       time.Time           `json:"updated_at"`
	Sections        []Section           `json:"sections"`
	ActiveIncidents []PublicIncident    `json:"active_incidents"`
	Maintenance     []PublicMaintenance `json:"maintenance"`
	// ThirdPartyServices are the providers the page shows (PUT
	// /third-party-status/status-pages/:statusPageId). They do not count
	// toward Status: the page reports its own monitors.
	ThirdPartyServices []PublicService `json:"third_party_services"`
}

// PublicService and its parts are a third-party service as a page shows
// it, defined in package restapi: the thirdparty package fills them, and
// neither of the two services imports the other.
type (
	PublicService          = restapi.PublicService
	PublicServiceComponent = restapi.PublicServiceComponent
	PublicServiceIncident  = restapi.PublicServiceIncident
)

// ThirdPartySource supplies the third-party services of a page; the
// thirdparty package implements it from the poller's stored state.
type ThirdPartySource interface {
	PageServices(ctx context.Context, pageUID string) ([]PublicService, error)
}

// Section is a heading of a page and its monitors; Name is empty for monitors
// listed without a section.
type Section struct {
	Name     string          `json:"name"`
	Status   Overall         `json:"status"`
	Monitors []PublicMonitor `json:"monitors"`
}

// PublicMonitor is one monitor as a page shows it.
type PublicMonitor struct {
	// ID is an opaque, stable key of the monitor on this page (not its UID).
	ID   string `json:"id"`
	Name string `json:"name"`
	// Status is up, down, degraded, maintenance, paused or unknown.
	Status    string   `json:"status"`
	Uptime24h *float64 `json:"uptime_24h"`
	Uptime30d *float64 `json:"uptime_30d"`
	Uptime90d *float64 `json:"uptime_90d"`
	// The response-time fields are present when the page shows response times.
	ResponseTimeMs       *int64          `json:"response_time_ms,omitempty"`
	AvgResponseTimeMs24h *float64        `json:"avg_response_time_ms_24h,omitempty"`
	ResponseTimes        []ResponsePoint `json:"response_times,omitempty"`
}

// ResponsePoint is the mean response time of one hour.
type ResponsePoint struct {
	At    time.Time `json:"at"`
	AvgMs float64   `json:"avg_ms"`
}

// PublicIncident is an incident as a page shows it.
type PublicIncident struct {
	ID         string         `json:"id"`
	Title      string         `json:"title"`
	Status     string         `json:"status"`
	StartedAt  time.Time      `json:"started_at"`
	ResolvedAt *time.Time     `json:"resolved_at"`
	Monitors   []string       `json:"monitors"`
	Updates    []PublicUpdate `json:"updates"`
}

// PublicUpdate is a public note of an incident.
type PublicUpdate struct {
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
}

// PublicMaintenance is a scheduled or ongoing maintenance window that covers
// monitors of the page.
type PublicMaintenance struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	State       string    `json:"state"`
	Impact      string    `json:"impact"`
	StartsAt    time.Time `json:"starts_at"`
	EndsAt      time.Time `json:"ends_at"`
	Monitors    []string  `json:"monitors"`
}

// History is the JSON of GET /status/:slug/history.
type History struct {
	Days     int              `json:"days"`
	Monitors []HistoryMonitor `json:"monitors"`
}

// HistoryMonitor is the daily uptime of one monitor, oldest day first.
type HistoryMonitor struct {
	ID      string      `json:"id"`
	Name    string      `json:"name"`
	Section string      `json:"section"`
	Days    []DayUptime `json:"days"`
}

// DayUptime is the uptime of one UTC day; nil without countable checks.
type DayUptime struct {
	Date             string   `json:"date"`
	UptimePercentage *float64 `json:"uptime_percentage"`
}

// snapshot is everything built for one page version, reused for CacheTTL.
type snapshot struct {
	doc     Document
	builtAt time.Time
	// daily holds MaxHistoryDays days per monitor id.
	daily map[string][]DayUptime
	// monitors maps a store monitor id (UID) to its display name; feed.go
	// uses it.
	monitors map[string]string
	// shown holds the metadata.name of each monitor the page shows.
	shown map[string]bool
	// badge and badgeETag are the page's SVG badge.
	badge     []byte
	badgeETag string
	// encoded holds the JSON document per language, encoded at first use:
	// requests served from the cache only copy bytes.
	encoded sync.Map
}

// encodedDoc is the document in one language, as JSON and gzipped JSON.
type encodedDoc struct {
	plain, gz []byte
	etag      string
}

// documentJSON returns the document in language lang, encoded (once per
// snapshot and language).
func (s *snapshot) documentJSON(page *monv1.StatusPage, lang string) (*encodedDoc, error) {
	if v, ok := s.encoded.Load(lang); ok {
		return v.(*encodedDoc), nil
	}
	b, err := json.Marshal(s.doc.localized(page, lang))
	if err != nil {
		return nil, fmt.Errorf("encode status page: %w", err)
	}
	e := &encodedDoc{plain: append(b, '\n')}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(e.plain)
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress status page: %w", err)
	}
	e.gz = buf.Bytes()
	sum := sha256.Sum256(e.plain)
	e.etag = `"` + hex.EncodeToString(sum[:12]) + `"`
	v, _ := s.encoded.LoadOrStore(lang, e)
	return v.(*encodedDoc), nil
}

// history cuts the last days days out of the snapshot.
func (s *snapshot) history(days int) History {
	h := History{Days: days, Monitors: []HistoryMonitor{}}
	for _, sec := range s.doc.Sections {
		for _, m := range sec.Monitors {
			d := s.daily[m.ID]
			if len(d) > days {
				d = d[len(d)-days:]
			}
			h.Monitors = append(h.Monitors, HistoryMonitor{ID: m.ID, Name: m.Name, Section: sec.Name, Days: d})
		}
	}
	return h
}

// snapshot returns the cached data of a page, building it when stale. A new
// generation (any spec change) or a write of the API in the page's
// workspace (Writes) builds at once; status writes do not.
func (p *Public) snapshot(ctx context.Context, page *monv1.StatusPage) (*snapshot, error) {
	key := "doc/" + string(page.UID) + "/" + strconv.FormatInt(page.Generation, 10)
	if p.Writes != nil {
		// A write the API answered in the page's workspace (a monitor
		// renamed, a maintenance window added, an incident resolved) must
		// show at the next request, not after CacheTTL.
		key += "/" + strconv.FormatUint(p.Writes.Version(page.Namespace), 10)
	}
	v, err := p.cache.get(key, p.now(), func() (any, error) {
		// The build is shared by concurrent requests: it must not end with
		// the first caller's request.
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return p.build(bctx, page)
	})
	if err != nil {
		return nil, err
	}
	return v.(*snapshot), nil
}

// pageMonitor is a listed monitor that exists.
type pageMonitor struct {
	ref monv1.StatusPageMonitor
	mon *monv1.Monitor
	pub PublicMonitor
}

// build reads the page's monitors, history, incidents and maintenance.
func (p *Public) build(ctx context.Context, page *monv1.StatusPage) (*snapshot, error) {
	now := p.now().UTC()
	res, err := ResolveMonitors(ctx, p.Reader, page)
	if err != nil {
		return nil, err
	}
	var entries []*pageMonitor
	for _, pe := range res.Entries {
		m, ref := pe.Monitor, pe.Ref
		if m == nil {
			continue // missing monitors are not shown; the controller reports them
		}
		e := &pageMonitor{ref: ref, mon: m}
		e.pub = PublicMonitor{
			ID:     publicID(m),
			Name:   displayName(ref, m),
			Status: PublicState(m.Status.CurrentStatus),
		}
		if page.Spec.ShowResponseTimes {
			e.pub.ResponseTimeMs = m.Status.LastResponseTimeMs
		}
		entries = append(entries, e)
	}

	snap := &snapshot{builtAt: now, daily: map[string][]DayUptime{}, monitors: map[string]string{}, shown: map[string]bool{}}
	daily, err := p.history(ctx, page, entries, now)
	if err != nil {
		return nil, err
	}

	doc := Document{
		Slug:               Slug(page),
		Title:              page.Spec.Title,
		Description:        page.Spec.Description,
		Languages:          pageLanguages(page),
		LogoURL:            optional(page.Spec.LogoURL),
		FaviconURL:         optional(page.Spec.FaviconURL),
		AccentColor:        optional(page.Spec.AccentColor),
		HidePoweredBy:      page.Spec.HidePoweredBy,
		ShowResponseTimes:  page.Spec.ShowResponseTimes,
		UpdatedAt:          now,
		Sections:           []Section{},
		ActiveIncidents:    []PublicIncident{},
		Maintenance:        []PublicMaintenance{},
		ThirdPartyServices: []PublicService{},
	}
	doc.Language = doc.Languages[0]
	var all []string
	sectionIdx := map[string]int{}
	for i, e := range entries {
		snap.daily[e.pub.ID] = daily[i]
		snap.monitors[string(e.mon.UID)] = e.pub.Name
		snap.shown[e.mon.Name] = true
		idx, ok := sectionIdx[e.ref.Section]
		if !ok {
			idx = len(doc.Sections)
			sectionIdx[e.ref.Section] = idx
			doc.Sections = append(doc.Sections, Section{Name: e.ref.Section, Monitors: []PublicMonitor{}})
		}
		doc.Sections[idx].Monitors = append(doc.Sections[idx].Monitors, e.pub)
		all = append(all, string(e.mon.Status.CurrentStatus))
	}
	for i := range doc.Sections {
		var states []string
		for _, m := range doc.Sections[i].Monitors {
			states = append(states, m.Status)
		}
		doc.Sections[i].Status = OverallStatus(states)
	}
	doc.Status = OverallStatus(all)

	if doc.ActiveIncidents, err = p.activeIncidents(ctx, entries); err != nil {
		return nil, err
	}
	if doc.Maintenance, err = p.maintenance(ctx, page, entries, now); err != nil {
		return nil, err
	}
	if p.ThirdParty != nil {
		if doc.ThirdPartyServices, err = p.ThirdParty.PageServices(ctx, string(page.UID)); err != nil {
			return nil, fmt.Errorf("third-party services: %w", err)
		}
	}
	snap.doc = doc
	snap.badge = Badge("status", doc.Status, meanUptime30d(&doc))
	sum := sha256.Sum256(snap.badge)
	snap.badgeETag = `"` + hex.EncodeToString(sum[:12]) + `"`
	return snap, nil
}

// history fills the uptime and response times of the page's monitors and
// returns their daily uptime for MaxHistoryDays days, in entries' order. Uptime
// and daily uptime are read for all monitors at once; response times (when
// shown) per monitor, a few at a time.
func (p *Public) history(ctx context.Context, page *monv1.StatusPage, entries []*pageMonitor, now time.Time) ([][]DayUptime, error) {
	out := make([][]DayUptime, len(entries))
	if p.Store == nil {
		for i, e := range entries {
			e.pub.Uptime24h = monitor.ParsePercent(e.mon.Status.Uptime24h)
			e.pub.Uptime30d = monitor.ParsePercent(e.mon.Status.Uptime30d)
			days := make([]DayUptime, 0, MaxHistoryDays)
			for _, d := range store.DailyRanges(now, MaxHistoryDays, time.UTC) {
				days = append(days, DayUptime{Date: d.Date})
			}
			out[i] = days
		}
		return out, nil
	}
	if len(entries) == 0 {
		return out, nil
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = string(e.mon.UID)
	}
	for _, u := range []struct {
		dst func(*pageMonitor) **float64
		d   time.Duration
	}{
		{func(e *pageMonitor) **float64 { return &e.pub.Uptime24h }, 24 * time.Hour},
		{func(e *pageMonitor) **float64 { return &e.pub.Uptime30d }, 30 * 24 * time.Hour},
		{func(e *pageMonitor) **float64 { return &e.pub.Uptime90d }, 90 * 24 * time.Hour},
	} {
		stats, err := p.Store.StatsMany(ctx, ids, now.Add(-u.d), now)
		if err != nil {
			return nil, fmt.Errorf("read uptime of %d monitors: %w", len(ids), err)
		}
		for _, e := range entries {
			st := stats[string(e.mon.UID)]
			*u.dst(e) = round(st.UptimePercent(), 3)
		}
	}
	daily, err := p.Store.UptimeDailyMany(ctx, ids, MaxHistoryDays, time.UTC)
	if err != nil {
		return nil, fmt.Errorf("read daily uptime of %d monitors: %w", len(ids), err)
	}
	for i, e := range entries {
		rows := daily[string(e.mon.UID)]
		days := make([]DayUptime, 0, len(rows))
		for _, r := range rows {
			days = append(days, DayUptime{Date: r.Date, UptimePercentage: round(r.UptimePercent, 3)})
		}
		out[i] = days
	}
	if !page.Spec.ShowResponseTimes {
		return out, nil
	}
	// Two at a time: a rebuild runs while the page is served, and must
	// leave CPU to the requests.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(2)
	for _, e := range entries {
		g.Go(func() error { return p.responseTimes(gctx, e, now) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// responseTimes fills a monitor's hourly response times of the last 24 hours
// and their mean.
func (p *Public) responseTimes(ctx context.Context, e *pageMonitor, now time.Time) error {
	from := now.Add(-24 * time.Hour).Truncate(time.Hour).Add(time.Hour)
	pts, err := p.Store.ResponseSeries(ctx, store.SeriesQuery{MonitorID: string(e.mon.UID), From: from, To: now, Step: time.Hour})
	if err != nil {
		return fmt.Errorf("read response times of monitor %s: %w", e.mon.Name, err)
	}
	var total store.Stats
	e.pub.ResponseTimes = []ResponsePoint{}
	for _, pt := range pts {
		if pt.Stats.Successful() == 0 {
			continue
		}
		total.Add(pt.Stats)
		e.pub.ResponseTimes = append(e.pub.ResponseTimes, ResponsePoint{At: pt.At.UTC(), AvgMs: math.Round(pt.Stats.AvgResponseMs())})
	}
	if total.Successful() > 0 {
		avg := math.Round(total.AvgResponseMs())
		e.pub.AvgResponseTimeMs24h = &avg
	}
	return nil
}

// activeIncidents returns the open incidents of the page's monitors with their
// public notes, newest first.
func (p *Public) activeIncidents(ctx context.Context, entries []*pageMonitor) ([]PublicIncident, error) {
	out := []PublicIncident{}
	for _, e := range entries {
		ref := e.mon.Status.OpenIncident
		if ref == nil {
			continue
		}
		inc := PublicIncident{
			ID: ref.ID, Status: "ongoing", StartedAt: ref.StartedAt.UTC(),
			Monitors: []string{e.pub.Name}, Updates: []PublicUpdate{},
		}
		if p.Store != nil {
			stored, err := p.Store.GetIncident(ctx, ref.ID)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return nil, fmt.Errorf("get incident %s: %w", ref.ID, err)
			default:
				if stored.ResolvedAt != nil {
					continue // resolved since the monitor's status was written
				}
				inc.StartedAt = stored.StartedAt.UTC()
			}
			if inc.Updates, err = p.publicUpdates(ctx, ref.ID); err != nil {
				return nil, err
			}
		}
		inc.Title = incidentTitle(e.pub.Name, nil)
		out = append(out, inc)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.After(out[j].StartedAt) })
	return out, nil
}

// publicUpdates returns an incident's public notes, oldest first. Authors are
// left out: they may be e-mail addresses.
func (p *Public) publicUpdates(ctx context.Context, incidentID string) ([]PublicUpdate, error) {
	notes, err := p.Store.ListNotes(ctx, incidentID)
	if err != nil {
		return nil, fmt.Errorf("list notes of incident %s: %w", incidentID, err)
	}
	out := []PublicUpdate{}
	for _, n := range notes {
		if n.Public {
			out = append(out, PublicUpdate{Body: n.Body, CreatedAt: n.CreatedAt.UTC()})
		}
	}
	return out, nil
}

func incidentTitle(monitor string, resolvedAt *time.Time) string {
	if resolvedAt != nil {
		return "Resolved: " + monitor + " outage"
	}
	return monitor + " is down"
}

// maintenance returns the scheduled and ongoing windows that cover monitors of
// the page, soonest first.
func (p *Public) maintenance(ctx context.Context, page *monv1.StatusPage, entries []*pageMonitor, now time.Time) ([]PublicMaintenance, error) {
	var list monv1.MaintenanceWindowList
	if err := p.Reader.List(ctx, &list, client.InNamespace(page.Namespace)); err != nil {
		return nil, fmt.Errorf("list maintenance windows: %w", err)
	}
	out := []PublicMaintenance{}
	for i := range list.Items {
		w := &list.Items[i]
		state := WindowState(w, now)
		if state != monv1.MaintenanceScheduled && state != monv1.MaintenanceOngoing {
			continue
		}
		affected := affectedMonitors(w, entries)
		if len(affected) == 0 {
			continue
		}
		start, end := w.Spec.StartsAt.Time, w.Spec.EndsAt.Time
		if w.Status.CurrentStart != nil && w.Status.CurrentEnd != nil {
			start, end = w.Status.CurrentStart.Time, w.Status.CurrentEnd.Time
		}
		impact := w.Spec.Impact
		if impact == "" {
			impact = "medium"
		}
		out = append(out, PublicMaintenance{
			ID: string(w.UID), Title: w.Spec.Title, Description: w.Spec.Description,
			State: string(state), Impact: impact, StartsAt: start.UTC(), EndsAt: end.UTC(), Monitors: affected,
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartsAt.Before(out[j].StartsAt) })
	return out, nil
}

// WindowState is a window's live state: status.state when the maintenance
// controller has written it, else derived from the spec's first occurrence.
func WindowState(w *monv1.MaintenanceWindow, now time.Time) monv1.MaintenanceState {
	switch {
	case w.Spec.Cancelled:
		return monv1.MaintenanceCancelled
	case w.Status.State != "":
		return w.Status.State
	case now.Before(w.Spec.StartsAt.Time):
		return monv1.MaintenanceScheduled
	case now.Before(w.Spec.EndsAt.Time):
		return monv1.MaintenanceOngoing
	}
	return monv1.MaintenanceCompleted
}

func affectedMonitors(w *monv1.MaintenanceWindow, entries []*pageMonitor) []string {
	names := map[string]bool{}
	for _, r := range w.Spec.Monitors {
		names[r.Name] = true
	}
	groups := map[string]bool{}
	for _, r := range w.Spec.Groups {
		groups[r.Name] = true
	}
	var out []string
	for _, e := range entries {
		covered := false
		switch w.Spec.Scope {
		case "all":
			covered = true
		case "monitors":
			covered = names[e.mon.Name]
		case "groups":
			covered = e.mon.Spec.GroupRef != nil && groups[e.mon.Spec.GroupRef.Name]
		}
		if covered {
			out = append(out, e.pub.Name)
		}
	}
	return out
}

// publicID is an opaque key of a monitor: it does not reveal the UID used by
// the authenticated API.
func publicID(m *monv1.Monitor) string {
	sum := sha256.Sum256([]byte("statuspage-monitor\x00" + string(m.UID)))
	return hex.EncodeToString(sum[:8])
}

func displayName(ref monv1.StatusPageMonitor, m *monv1.Monitor) string {
	switch {
	case ref.DisplayName != "":
		return ref.DisplayName
	case m.Spec.Name != "":
		return m.Spec.Name
	}
	return m.Name
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func round(v *float64, places int) *float64 {
	if v == nil {
		return nil
	}
	f := math.Pow(10, float64(places))
	r := math.Round(*v*f) / f
	return &r
}
