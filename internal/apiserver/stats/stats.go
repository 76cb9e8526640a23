package stats

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Stats endpoints: all take a monitor id and read the store's rollups.

// historyDays is how far back the workspace's plan lets history reach.
func (h *Handlers) historyDays(r *http.Request) int {
	plan, err := h.d.Plans.ForNamespace(r.Context(), core.CallerFrom(r.Context()).Namespace)
	if err != nil || plan.Spec.Limits.HistoryDays == 0 {
		return 365
	}
	return int(plan.Spec.Limits.HistoryDays)
}

// location reads tzOffsetMinutes or timeZone; UTC without either.
func location(r *http.Request) (*time.Location, *core.FieldError) {
	q := r.URL.Query()
	if tz := q.Get("timeZone"); tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			fe := core.FieldErr("timeZone", "must be an IANA time zone such as Europe/Berlin")
			return nil, &fe
		}
		return loc, nil
	}
	if v := q.Get("tzOffsetMinutes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < -840 || n > 840 {
			fe := core.FieldErr("tzOffsetMinutes", "must be an integer between -840 and 840")
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

func (h *Handlers) statsSummary(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	days, fe := core.IntParam(r, "days", 30, 1, h.historyDays(r))
	if fe != nil {
		core.WriteValidation(w, *fe)
		return
	}
	now := h.d.Clock.Now()
	st, err := h.st.Stats(r.Context(), store.StatsQuery{MonitorID: string(m.UID), From: now.AddDate(0, 0, -days), To: now})
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, statsObject(st, days))
}

func (h *Handlers) statsChecks(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	limit, fe := core.IntParam(r, "limit", 100, 1, 5000)
	if fe != nil {
		core.WriteValidation(w, *fe)
		return
	}
	items, _, err := h.st.ListChecks(r.Context(), store.ChecksQuery{MonitorID: string(m.UID), Region: r.URL.Query().Get("region"), Limit: limit})
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if len(items) > limit {
		items = items[:limit]
	}
	httpjson.Write(w, http.StatusOK, restapi.CheckList{Items: core.CheckRecords(items)})
}

func (h *Handlers) statsIncidents(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	limit, fe := core.IntParam(r, "limit", 50, 1, 500)
	if fe != nil {
		core.WriteValidation(w, *fe)
		return
	}
	items := []restapi.Incident{}
	regions := h.d.RegionNames(r.Context())
	for page := 1; len(items) < limit; page++ {
		list, err := h.st.ListIncidents(r.Context(), store.IncidentQuery{Namespace: m.Namespace, MonitorID: string(m.UID), Page: page, PageSize: 100})
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		for _, inc := range list.Items {
			if len(items) < limit {
				items = append(items, core.IncidentObject(inc, regions, h.d.Clock.Now()))
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
		pj := restapi.SeriesPoint{At: core.ISOTime(p.At), MinResponseTimeMs: p.Stats.ResponseMinMs, MaxResponseTimeMs: p.Stats.ResponseMaxMs,
			Checks: p.Stats.Total(), UptimePercentage: p.Stats.UptimePercent()}
		if p.Stats.Successful() > 0 {
			avg := p.Stats.AvgResponseMs()
			pj.AvgResponseTimeMs = &avg
		}
		out = append(out, pj)
	}
	return out
}

func (h *Handlers) responseTimeChart(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	days, fe := core.IntParam(r, "days", 7, 1, h.historyDays(r))
	loc, lfe := location(r)
	if fe != nil || lfe != nil {
		core.WriteValidation(w, firstNonNil(fe, lfe)...)
		return
	}
	now := h.d.Clock.Now()
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
	points, err := h.st.ResponseSeries(r.Context(), store.SeriesQuery{MonitorID: string(m.UID), Region: r.URL.Query().Get("region"), From: from, To: now, Step: step})
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.ResponseTimeChart{Days: days, StepSeconds: int(step.Seconds()), Points: seriesJSON(points)})
}

// seriesRanges are the ranges of response-series and their bucket widths.
var seriesRanges = map[string][2]time.Duration{
	"1h": {time.Hour, time.Minute}, "6h": {6 * time.Hour, 5 * time.Minute}, "24h": {24 * time.Hour, 15 * time.Minute},
	"7d": {7 * 24 * time.Hour, time.Hour}, "30d": {30 * 24 * time.Hour, 6 * time.Hour},
}

func (h *Handlers) responseSeries(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	rng := r.URL.Query().Get("range")
	if rng == "" {
		rng = "24h"
	}
	spec, ok := seriesRanges[rng]
	if !ok {
		core.WriteValidation(w, core.FieldErr("range", "must be one of 1h, 6h, 24h, 7d, 30d"))
		return
	}
	now := h.d.Clock.Now()
	points, err := h.st.ResponseSeries(r.Context(), store.SeriesQuery{MonitorID: string(m.UID), Region: r.URL.Query().Get("region"),
		From: now.Add(-spec[0]), To: now, Step: spec[1]})
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.ResponseSeries{Range: rng, StepSeconds: int(spec[1].Seconds()), Points: seriesJSON(points)})
}

func (h *Handlers) uptimeDays(r *http.Request, id string, days int, loc *time.Location) ([]restapi.Day, error) {
	daily, err := h.st.UptimeDaily(r.Context(), id, days, loc)
	if err != nil {
		return nil, err
	}
	out := make([]restapi.Day, 0, len(daily))
	for _, d := range daily {
		out = append(out, restapi.Day{Date: d.Date, UptimePercentage: d.UptimePercent, TotalChecks: d.Stats.Total(), FailedChecks: d.Stats.Failed()})
	}
	return out, nil
}

func (h *Handlers) uptimeHistory(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	days, fe := core.IntParam(r, "days", 90, 1, h.historyDays(r))
	loc, lfe := location(r)
	if fe != nil || lfe != nil {
		core.WriteValidation(w, firstNonNil(fe, lfe)...)
		return
	}
	out, err := h.uptimeDays(r, string(m.UID), days, loc)
	if err != nil {
		core.WriteErr(w, r, err)
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

func (h *Handlers) dailyBars(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	maxDays := h.historyDays(r)
	days, fe := core.IntParam(r, "days", 90, 1, maxDays)
	loc, lfe := location(r)
	if fe != nil || lfe != nil {
		core.WriteValidation(w, firstNonNil(fe, lfe)...)
		return
	}
	today := h.d.Clock.Now().In(loc)
	end := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, loc)
	if v := r.URL.Query().Get("endDate"); v != "" {
		t, err := time.ParseInLocation("2006-01-02", v, loc)
		if err != nil || t.After(end) {
			core.WriteValidation(w, core.FieldErr("endDate", "must be a date YYYY-MM-DD not in the future"))
			return
		}
		end = t
	}
	back := int(time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, loc).Sub(end).Hours()/24 + 0.5)
	all, err := h.uptimeDays(r, string(m.UID), min(days+back, maxDays+back), loc)
	if err != nil {
		core.WriteErr(w, r, err)
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
func (h *Handlers) checkedFrom(ctx context.Context, m *monv1.Monitor) ([]string, error) {
	if m.Spec.Type == monv1.MonitorCron {
		return []string{engine.HeartbeatRegion}, nil
	}
	if rs := monitor.Regions(m); len(rs) > 0 {
		return rs, nil
	}
	plan, err := h.d.Plans.ForNamespace(ctx, m.Namespace)
	if err != nil {
		return nil, err
	}
	regions, err := monitor.RegionCodes(ctx, h.d.Client)
	if err != nil {
		return nil, err
	}
	return monitor.EffectiveRegions(&m.Spec, plan, regions), nil
}

func (h *Handlers) regionStatuses(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	latest, err := h.st.LatestChecks(r.Context(), string(m.UID))
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	regions, err := h.checkedFrom(r.Context(), m)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	// Only the regions the monitor is checked from: not a region it left,
	// nor the manager's own checks of earlier versions.
	latest = slices.DeleteFunc(latest, func(c store.Check) bool { return !slices.Contains(regions, c.Region) })
	names := h.d.RegionNames(r.Context())
	out := []restapi.RegionStatus{}
	for _, c := range latest {
		out = append(out, restapi.RegionStatus{Region: c.Region, RegionName: names.Name(c.Region), Status: string(c.Status), CheckedAt: core.ISOTime(c.CheckedAt),
			ResponseTimeMs: c.ResponseTimeMs, StatusCode: c.StatusCode, ErrorMessage: core.StrPtr(c.ErrorMessage)})
	}
	httpjson.Write(w, http.StatusOK, restapi.RegionStatuses{Regions: out})
}

func (h *Handlers) pauseWindows(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	hours, fe := core.IntParam(r, "hours", 720, 1, 8760)
	if fe != nil {
		core.WriteValidation(w, *fe)
		return
	}
	windows, err := h.st.ListPauseWindows(r.Context(), string(m.UID), h.d.Clock.Now().Add(-time.Duration(hours)*time.Hour))
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out := []restapi.PauseWindow{}
	for _, pw := range windows {
		out = append(out, restapi.PauseWindow{PausedAt: core.ISOTime(pw.PausedAt), ResumedAt: core.ISOTimePtr(pw.ResumedAt)})
	}
	httpjson.Write(w, http.StatusOK, restapi.PauseWindows{Windows: out})
}

func firstNonNil(fes ...*core.FieldError) []core.FieldError {
	var out []core.FieldError
	for _, fe := range fes {
		if fe != nil {
			out = append(out, *fe)
		}
	}
	return out
}
