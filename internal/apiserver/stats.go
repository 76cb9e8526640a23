package apiserver

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Stats endpoints: all take a monitor id and read the store's rollups.

// historyDays is how far back the workspace's plan lets history reach.
func (s *Server) historyDays(r *http.Request) int {
	plan, err := s.opts.Plans.ForNamespace(r.Context(), CallerFrom(r.Context()).Namespace)
	if err != nil || plan.Spec.Limits.HistoryDays == 0 {
		return 365
	}
	return int(plan.Spec.Limits.HistoryDays)
}

// location reads tzOffsetMinutes or timeZone; UTC without either.
func location(r *http.Request) (*time.Location, *FieldError) {
	q := r.URL.Query()
	if tz := q.Get("timeZone"); tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			fe := fieldErr("timeZone", "must be an IANA time zone such as Europe/Berlin")
			return nil, &fe
		}
		return loc, nil
	}
	if v := q.Get("tzOffsetMinutes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < -840 || n > 840 {
			fe := fieldErr("tzOffsetMinutes", "must be an integer between -840 and 840")
			return nil, &fe
		}
		// The browser convention (Date.getTimezoneOffset) is minutes behind
		// UTC; a positive offset east of UTC is the ISO convention used here.
		return time.FixedZone("UTC"+strconv.Itoa(n/60), n*60), nil
	}
	return time.UTC, nil
}

func statsObject(st store.Stats, days int) restapi.Stats {
	return restapi.Stats{UptimePercentage: st.UptimePercent(), TotalChecks: st.Total(), SuccessfulChecks: st.Successful(),
		FailedChecks: st.Failed(), DegradedChecks: st.Degraded, AvgResponseTimeMs: st.AvgResponseMs(),
		MinResponseTimeMs: st.ResponseMinMs, MaxResponseTimeMs: st.ResponseMaxMs, Days: days}
}

func (s *Server) statsSummary(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	days, fe := intParam(r, "days", 30, 1, s.historyDays(r))
	if fe != nil {
		writeValidation(w, *fe)
		return
	}
	now := s.clock.Now()
	st, err := s.opts.Store.Stats(r.Context(), store.StatsQuery{MonitorID: string(m.UID), From: now.AddDate(0, 0, -days), To: now})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, statsObject(st, days))
}

func (s *Server) statsChecks(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	limit, fe := intParam(r, "limit", 100, 1, 5000)
	if fe != nil {
		writeValidation(w, *fe)
		return
	}
	items, _, err := s.opts.Store.ListChecks(r.Context(), store.ChecksQuery{MonitorID: string(m.UID), Region: r.URL.Query().Get("region"), Limit: limit})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if len(items) > limit {
		items = items[:limit]
	}
	httpjson.Write(w, http.StatusOK, restapi.CheckList{Items: checkRecords(items)})
}

func (s *Server) statsIncidents(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	limit, fe := intParam(r, "limit", 50, 1, 500)
	if fe != nil {
		writeValidation(w, *fe)
		return
	}
	items := []restapi.Incident{}
	regions := s.regionNames(r.Context())
	for page := 1; len(items) < limit; page++ {
		list, err := s.opts.Store.ListIncidents(r.Context(), store.IncidentQuery{Namespace: m.Namespace, MonitorID: string(m.UID), Page: page, PageSize: 100})
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		for _, inc := range list.Items {
			if len(items) < limit {
				items = append(items, s.incidentObject(inc, regions))
			}
		}
		if len(list.Items) < 100 {
			break
		}
	}
	httpjson.Write(w, http.StatusOK, restapi.IncidentList{Items: items})
}

func seriesJSON(points []store.SeriesPoint) []restapi.SeriesPoint {
	out := make([]restapi.SeriesPoint, 0, len(points))
	for _, p := range points {
		pj := restapi.SeriesPoint{At: isoTime(p.At), MinResponseTimeMs: p.Stats.ResponseMinMs, MaxResponseTimeMs: p.Stats.ResponseMaxMs,
			Checks: p.Stats.Total(), UptimePercentage: p.Stats.UptimePercent()}
		if p.Stats.Successful() > 0 {
			avg := p.Stats.AvgResponseMs()
			pj.AvgResponseTimeMs = &avg
		}
		out = append(out, pj)
	}
	return out
}

func (s *Server) responseTimeChart(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	days, fe := intParam(r, "days", 7, 1, s.historyDays(r))
	loc, lfe := location(r)
	if fe != nil || lfe != nil {
		writeValidation(w, firstNonNil(fe, lfe)...)
		return
	}
	now := s.clock.Now()
	step := time.Hour
	switch {
	case days <= 1:
		step = 5 * time.Minute
	case days > 14:
		step = 24 * time.Hour
	}
	from := now.Add(-time.Duration(days) * 24 * time.Hour)
	if step == 24*time.Hour {
		l := from.In(loc)
		from = time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc)
	}
	points, err := s.opts.Store.ResponseSeries(r.Context(), store.SeriesQuery{MonitorID: string(m.UID), Region: r.URL.Query().Get("region"), From: from, To: now, Step: step})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.ResponseTimeChart{Days: days, StepSeconds: int(step.Seconds()), Points: seriesJSON(points)})
}

// seriesRanges are the ranges of response-series and their bucket widths.
var seriesRanges = map[string][2]time.Duration{
	"1h": {time.Hour, time.Minute}, "6h": {6 * time.Hour, 5 * time.Minute}, "24h": {24 * time.Hour, 15 * time.Minute},
	"7d": {7 * 24 * time.Hour, time.Hour}, "30d": {30 * 24 * time.Hour, 6 * time.Hour},
}

func (s *Server) responseSeries(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	rng := r.URL.Query().Get("range")
	if rng == "" {
		rng = "24h"
	}
	spec, ok := seriesRanges[rng]
	if !ok {
		writeValidation(w, fieldErr("range", "must be one of 1h, 6h, 24h, 7d, 30d"))
		return
	}
	now := s.clock.Now()
	points, err := s.opts.Store.ResponseSeries(r.Context(), store.SeriesQuery{MonitorID: string(m.UID), Region: r.URL.Query().Get("region"),
		From: now.Add(-spec[0]), To: now, Step: spec[1]})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.ResponseSeries{Range: rng, StepSeconds: int(spec[1].Seconds()), Points: seriesJSON(points)})
}

func (s *Server) uptimeDays(r *http.Request, id string, days int, loc *time.Location) ([]restapi.Day, error) {
	daily, err := s.opts.Store.UptimeDaily(r.Context(), id, days, loc)
	if err != nil {
		return nil, err
	}
	out := make([]restapi.Day, 0, len(daily))
	for _, d := range daily {
		out = append(out, restapi.Day{Date: d.Date, UptimePercentage: d.UptimePercent, TotalChecks: d.Stats.Total(), FailedChecks: d.Stats.Failed()})
	}
	return out, nil
}

func (s *Server) uptimeHistory(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	days, fe := intParam(r, "days", 90, 1, s.historyDays(r))
	loc, lfe := location(r)
	if fe != nil || lfe != nil {
		writeValidation(w, firstNonNil(fe, lfe)...)
		return
	}
	out, err := s.uptimeDays(r, string(m.UID), days, loc)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.Days{Days: out})
}

// dayStatus classifies a day for the status bars.
func dayStatus(d restapi.Day) string {
	switch {
	case d.UptimePercentage == nil:
		return "no_data"
	case *d.UptimePercentage >= 99.9:
		return "up"
	case *d.UptimePercentage >= 95:
		return "degraded"
	}
	return "down"
}

func (s *Server) dailyBars(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	maxDays := s.historyDays(r)
	days, fe := intParam(r, "days", 90, 1, maxDays)
	loc, lfe := location(r)
	if fe != nil || lfe != nil {
		writeValidation(w, firstNonNil(fe, lfe)...)
		return
	}
	today := s.clock.Now().In(loc)
	end := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, loc)
	if v := r.URL.Query().Get("endDate"); v != "" {
		t, err := time.ParseInLocation("2006-01-02", v, loc)
		if err != nil || t.After(end) {
			writeValidation(w, fieldErr("endDate", "must be a date YYYY-MM-DD not in the future"))
			return
		}
		end = t
	}
	back := int(time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, loc).Sub(end).Hours()/24 + 0.5)
	all, err := s.uptimeDays(r, string(m.UID), min(days+back, maxDays+back), loc)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	endDate := end.Format("2006-01-02")
	out := []restapi.Day{}
	for _, d := range all {
		if d.Date <= endDate {
			d.Status = dayStatus(d)
			out = append(out, d)
		}
	}
	if len(out) > days {
		out = out[len(out)-days:]
	}
	httpjson.Write(w, http.StatusOK, restapi.Days{Days: out})
}

// checkedFrom are the regions m is checked from: its effective regions (as
// the Monitor controller writes them, or computed from the plan until it
// has), or the heartbeat "region" of a cron monitor.
func (s *Server) checkedFrom(ctx context.Context, m *monv1.Monitor) ([]string, error) {
	if m.Spec.Type == monv1.MonitorCron {
		return []string{engine.HeartbeatRegion}, nil
	}
	if rs := monitor.Regions(m); len(rs) > 0 {
		return rs, nil
	}
	x := s.refs(m.Namespace)
	if err := x.loadPlan(ctx); err != nil {
		return nil, err
	}
	return monitor.EffectiveRegions(&m.Spec, x.plan, x.regions), nil
}

func (s *Server) regionStatuses(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	latest, err := s.opts.Store.LatestChecks(r.Context(), string(m.UID))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	regions, err := s.checkedFrom(r.Context(), m)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	// Only the regions the monitor is checked from: not a region it left,
	// nor the manager's own checks of earlier versions.
	latest = slices.DeleteFunc(latest, func(c store.Check) bool { return !slices.Contains(regions, c.Region) })
	names := s.regionNames(r.Context())
	out := []restapi.RegionStatus{}
	for _, c := range latest {
		out = append(out, restapi.RegionStatus{Region: c.Region, RegionName: names.name(c.Region), Status: string(c.Status), CheckedAt: isoTime(c.CheckedAt),
			ResponseTimeMs: c.ResponseTimeMs, StatusCode: c.StatusCode, ErrorMessage: strPtr(c.ErrorMessage)})
	}
	httpjson.Write(w, http.StatusOK, restapi.RegionStatuses{Regions: out})
}

func (s *Server) pauseWindows(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	hours, fe := intParam(r, "hours", 720, 1, 8760)
	if fe != nil {
		writeValidation(w, *fe)
		return
	}
	windows, err := s.opts.Store.ListPauseWindows(r.Context(), string(m.UID), s.clock.Now().Add(-time.Duration(hours)*time.Hour))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := []restapi.PauseWindow{}
	for _, pw := range windows {
		out = append(out, restapi.PauseWindow{PausedAt: isoTime(pw.PausedAt), ResumedAt: isoTimePtr(pw.ResumedAt)})
	}
	httpjson.Write(w, http.StatusOK, restapi.PauseWindows{Windows: out})
}

func firstNonNil(fes ...*FieldError) []FieldError {
	var out []FieldError
	for _, fe := range fes {
		if fe != nil {
			out = append(out, *fe)
		}
	}
	return out
}
