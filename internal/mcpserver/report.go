package mcpserver

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/reliability"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// reportHealth scores every row with the one health score of package
// reliability (docs/reliability.md), over the report window: the window's
// uptime, incident count and MTTR, the cap while an incident is open, and
// the error budget of the monitor's enabled, evaluated SLO (zero while the
// report sees it burn fast). byMonitor holds each row's incident figures.
func reportHealth(rep *uptimeReport, byMonitor map[string]reliability.IncidentStats) {
	budgets := map[string]*sloReport{}
	for i := range rep.SLOs {
		s := &rep.SLOs[i]
		if s.MonitorID != nil && s.IsEnabled && s.ErrorBudgetRemainingPercent != nil {
			budgets[*s.MonitorID] = s
		}
	}
	for i := range rep.Monitors {
		r := &rep.Monitors[i]
		uptime := r.UptimePercent
		if r.Checks == 0 {
			uptime = nil
		}
		in := byMonitor[r.MonitorID].Health(uptime)
		in.Window = time.Duration(rep.Days) * 24 * time.Hour
		if s := budgets[r.MonitorID]; s != nil {
			in.BudgetRemaining, in.BurningFast = s.ErrorBudgetRemainingPercent, s.FastBurn
		}
		r.HealthScore, _ = reliability.HealthScore(in)
	}
}

// incidentStats are the figures of incs (incidents that started in
// [from, to), as the REST API lists them) for the report.
func incidentStats(from, to time.Time, incs []restapi.Incident) reliability.IncidentStats {
	list := make([]reliability.Incident, 0, len(incs))
	for _, i := range incs {
		start, err := time.Parse(time.RFC3339, i.StartedAt)
		if err != nil {
			continue
		}
		inc := reliability.Incident{StartedAt: start, Flapping: i.IsFlapping}
		if i.ResolvedAt != nil {
			end := start.Add(time.Duration(i.DurationSeconds) * time.Second)
			if t, err := time.Parse(time.RFC3339, *i.ResolvedAt); err == nil {
				end = t
			}
			inc.ResolvedAt = &end
		}
		list = append(list, inc)
	}
	return reliability.Incidents(from, to, list)
}

// monitorReport is one monitor's line of the uptime report.
type monitorReport struct {
	MonitorID         string   `json:"monitor_id"`
	Name              string   `json:"name"`
	Status            string   `json:"current_status"`
	UptimePercent     *float64 `json:"uptime_percent"`
	Checks            int      `json:"checks"`
	FailedChecks      int      `json:"failed_checks"`
	AvgResponseTimeMs *float64 `json:"avg_response_time_ms"`
	Incidents         int      `json:"incidents"`
	MTTRSeconds       *float64 `json:"mttr_seconds"`
	HealthScore       *int     `json:"health_score"`
}

// sloReport is one SLO with its error budget and burn rates.
type sloReport struct {
	restapi.SLOTarget
	BurnRate24h    *float64 `json:"burn_rate_24h"`
	BurnRateReport *float64 `json:"burn_rate_report"`
	FastBurn       bool     `json:"fast_burn"`
	SlowBurn       bool     `json:"slow_burn"`
}

// uptimeReport is the result of service_uptime_report.
type uptimeReport struct {
	Days            int             `json:"days"`
	From            string          `json:"from"`
	To              string          `json:"to"`
	Monitors        []monitorReport `json:"monitors"`
	UptimePercent   *float64        `json:"workspace_uptime_percent"`
	IncidentsTotal  int             `json:"incidents_total"`
	IncidentsCapped bool            `json:"incidents_capped,omitempty"`
	SLOs            []sloReport     `json:"slos"`
	SLONote         string          `json:"slo_note,omitempty"`
}

type reportIn struct {
	Days      *int   `json:"days,omitempty" jsonschema:"report window in days: 7, 14, 30 (default) or 90"`
	MonitorID string `json:"monitor_id,omitempty" jsonschema:"report on this monitor only (default: every monitor)"`
	Format
}

// burnRate is how fast the error budget burns at uptime u against target t:
// (100 − u) / (100 − t); 1 spends exactly the budget over the window.
func burnRate(u *float64, target float64) *float64 {
	if u == nil || target >= 100 {
		return nil
	}
	v := math.Max(0, 100-*u) / (100 - target)
	return &v
}

func uptimeReportTool() toolSpec {
	return newTool("service_uptime_report", "Uptime report",
		"Uptime report over 7, 14, 30 or 90 days: per monitor uptime % (degraded checks count as up), incident count, MTTR, number of checks and a health score 0-100, plus each SLO target with its error budget and burn rates (empty without SLO targets).",
		KindRead, func(ctx context.Context, c *call, in reportIn) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			days := 30
			if in.Days != nil {
				days = *in.Days
			}
			if days != 7 && days != 14 && days != 30 && days != 90 {
				return "", invalid("days must be 7, 14, 30 or 90, got %d", days)
			}
			rep, err := c.uptimeReport(ctx, days, strings.TrimSpace(in.MonitorID))
			if err != nil {
				return "", err
			}
			return render(f, rep, func() string { return reportMarkdown(rep) })
		}, formatOpt, enum("days", 7, 14, 30, 90))
}

func (c *call) uptimeReport(ctx context.Context, days int, monitorID string) (*uptimeReport, error) {
	now := time.Now().UTC()
	from := now.Add(-time.Duration(days) * 24 * time.Hour)
	rep := &uptimeReport{Days: days, From: from.Format(time.RFC3339), To: now.Format(time.RFC3339), Monitors: []monitorReport{}, SLOs: []sloReport{}}
	var monitors []restapi.Monitor
	if monitorID != "" {
		m, err := c.getMonitor(ctx, monitorID)
		if err != nil {
			return nil, err
		}
		monitors = []restapi.Monitor{*m}
	} else {
		all, err := c.listMonitors(ctx, "")
		if err != nil {
			return nil, err
		}
		monitors = all
	}
	// Incidents that started in the window, grouped by monitor.
	byMonitor := map[string][]restapi.Incident{}
	q := url.Values{"from": {from.Format(time.RFC3339)}, "page_size": {"100"}}
	if monitorID != "" {
		q.Set("monitor_id", monitorID)
	}
	for page := 1; page <= 20; page++ {
		q.Set("page", strconv.Itoa(page))
		p, err := c.incidents(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, i := range p.Items {
			byMonitor[i.MonitorID] = append(byMonitor[i.MonitorID], i)
		}
		if page*100 >= p.Total || len(p.Items) == 0 {
			break
		}
		if page == 20 {
			rep.IncidentsCapped = true
		}
	}
	// Stats per monitor, four at a time.
	figures := map[string]reliability.IncidentStats{}
	for i := range monitors {
		figures[monitors[i].ID] = incidentStats(from, now, byMonitor[monitors[i].ID])
	}
	rows := make([]monitorReport, len(monitors))
	errs := make([]error, len(monitors))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := range monitors {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			m := &monitors[i]
			var st restapi.Stats
			if err := c.api.Get(ctx, "/stats/"+pathEscape(m.ID)+"/stats", url.Values{"days": {strconv.Itoa(days)}}, &st); err != nil {
				errs[i] = err
				return
			}
			fig := figures[m.ID]
			rows[i] = monitorReport{MonitorID: m.ID, Name: m.Name, Status: m.CurrentStatus, UptimePercent: st.UptimePercentage,
				Checks: int(st.TotalChecks), FailedChecks: int(st.FailedChecks), AvgResponseTimeMs: &st.AvgResponseTimeMs,
				Incidents: fig.Count, MTTRSeconds: fig.MTTR()}
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rep.Monitors = rows
	var weighted float64
	var checks int
	for _, r := range rows {
		rep.IncidentsTotal += r.Incidents
		if r.UptimePercent != nil && r.Checks > 0 {
			weighted += *r.UptimePercent * float64(r.Checks)
			checks += r.Checks
		}
	}
	if checks > 0 {
		v := weighted / float64(checks)
		rep.UptimePercent = &v
	}
	if err := c.reportSLOs(ctx, rep, monitorID); err != nil {
		return nil, err
	}
	reportHealth(rep, figures)
	return rep, nil
}

// reportSLOs adds the SLO targets with budgets and burn rates. Without the
// feature, or without targets, the SLO part stays empty.
func (c *call) reportSLOs(ctx context.Context, rep *uptimeReport, monitorID string) error {
	var slos []restapi.SLOTarget
	if err := c.api.Get(ctx, "/reliability/slo-targets", nil, &slos); err != nil {
		if IsStatus(err, http.StatusForbidden) || IsStatus(err, http.StatusNotFound) {
			rep.SLONote = "no SLO targets available: " + err.Error()
			return nil
		}
		return err
	}
	uptime := map[string]*float64{}
	for _, r := range rep.Monitors {
		uptime[r.MonitorID] = r.UptimePercent
	}
	for _, s := range slos {
		if s.MonitorID == nil || (monitorID != "" && *s.MonitorID != monitorID) {
			continue
		}
		sr := sloReport{SLOTarget: s, BurnRateReport: burnRate(uptime[*s.MonitorID], s.TargetPercentage)}
		var day restapi.Stats
		if err := c.api.Get(ctx, "/stats/"+pathEscape(*s.MonitorID)+"/stats", url.Values{"days": {"1"}}, &day); err == nil {
			sr.BurnRate24h = burnRate(day.UptimePercentage, s.TargetPercentage)
		} else if !IsStatus(err, http.StatusNotFound) {
			return err
		}
		sr.FastBurn = sr.BurnRate24h != nil && s.BurnRateFastThreshold > 0 && *sr.BurnRate24h >= s.BurnRateFastThreshold
		sr.SlowBurn = sr.BurnRateReport != nil && s.BurnRateSlowThreshold > 0 && *sr.BurnRateReport >= s.BurnRateSlowThreshold
		rep.SLOs = append(rep.SLOs, sr)
	}
	if len(rep.SLOs) == 0 && rep.SLONote == "" {
		rep.SLONote = "no SLO targets are set (they are set in the dashboard)"
	}
	return nil
}

func num(p *float64, format string) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf(format, *p)
}

func reportMarkdown(r *uptimeReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Uptime report, last %d days\n\n%s → %s. Workspace uptime %s, %d incident(s).\n\n", r.Days, r.From, r.To, pct(r.UptimePercent), r.IncidentsTotal)
	if r.IncidentsCapped {
		b.WriteString("(Incident counts are capped at the first 2000 incidents.)\n\n")
	}
	b.WriteString("| monitor | status | uptime | checks | incidents | MTTR | health |\n|---|---|---|---|---|---|---|\n")
	for _, m := range r.Monitors {
		mttr := "-"
		if m.MTTRSeconds != nil {
			mttr = duration(*m.MTTRSeconds)
		}
		score := "n/a"
		if m.HealthScore != nil {
			score = strconv.Itoa(*m.HealthScore)
		}
		fmt.Fprintf(&b, "| %s (`%s`) | %s | %s | %d | %d | %s | %s |\n", clean(m.Name), m.MonitorID, m.Status, pct(m.UptimePercent), m.Checks, m.Incidents, mttr, score)
	}
	b.WriteString("\nHealth score (0-100, as in the REST reliability reports): availability 45, incidents 20, recovery (MTTR) 15 and, with an SLO, error budget 20 points; at most 50 while an incident is open.\n")
	b.WriteString("\n### SLOs\n\n")
	if len(r.SLOs) == 0 {
		b.WriteString(clean(r.SLONote) + "\n")
	}
	for _, s := range r.SLOs {
		fmt.Fprintf(&b, "- %s (%s) target %.3f%% over %d min: current SLI %s, error budget left %s (%s min), burn rate 24h %s, report window %s",
			clean(s.MonitorName), s.SLIType, s.TargetPercentage, s.WindowMinutes, num(s.CurrentSLI, "%.3f%%"),
			num(s.ErrorBudgetRemainingPercent, "%.1f%%"), num(s.ErrorBudgetRemainingMinutes, "%.0f"), num(s.BurnRate24h, "%.2f"), num(s.BurnRateReport, "%.2f"))
		if s.FastBurn {
			b.WriteString(", **fast burn**")
		}
		if s.SlowBurn {
			b.WriteString(", **slow burn**")
		}
		if !s.IsEnabled {
			b.WriteString(" (disabled)")
		}
		b.WriteString("\n")
	}
	return b.String()
}
