package alertevent

import (
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Fixed texts of the payloads.
const (
	resolutionRecovered        = "recovered"
	resolutionManual           = "manual"
	testMonitorName            = "Test Monitor"
	testMonitorURL             = "https://example.com"
	testReason                 = "This is a test alert: the connection works"
	escalationReasonFormat     = "Escalation step %d: still down"
	maintenanceStartedPrefix   = "Maintenance started: "
	maintenanceCompletedPrefix = "Maintenance completed: "
)

// IncidentPayload is the body of monitor.down, monitor.up, incident.resolved
// and test events. Pointer fields are JSON null when nil, as the
// specification's table requires.
type IncidentPayload struct {
	Event           string  `json:"event"`
	Title           string  `json:"title"`
	MonitorName     string  `json:"monitor_name"`
	MonitorURL      string  `json:"monitor_url"`
	IncidentID      string  `json:"incident_id"`
	Region          *string `json:"region"`
	StartedAt       *string `json:"started_at"`
	DurationSeconds *int64  `json:"duration_seconds"`
	Resolution      *string `json:"resolution"`
	Reason          *string `json:"reason"`
	IncidentURL     *string `json:"incident_url"`
	Explanation     *string `json:"explanation"`
}

// IncidentFacts are the inputs of an incident payload.
type IncidentFacts struct {
	MonitorName string
	MonitorURL  string
	IncidentID  string
	// StartedAt is the incident start; zero gives null.
	StartedAt time.Time
	// ResolvedAt ends the incident for monitor.up and incident.resolved.
	ResolvedAt time.Time
	// Region, Reason and Explanation describe a down event; empty gives null.
	Region      string
	Reason      string
	Explanation string
	// IncidentURL is the dashboard link; empty gives null.
	IncidentURL string
}

// NewIncidentPayload builds the payload of event (monitor.down, monitor.up or
// incident.resolved) from facts, with the fields each event leaves null.
func NewIncidentPayload(event string, f IncidentFacts) (IncidentPayload, error) {
	p := IncidentPayload{
		Event:       event,
		MonitorName: f.MonitorName,
		MonitorURL:  f.MonitorURL,
		IncidentID:  f.IncidentID,
		StartedAt:   isoTime(f.StartedAt),
		IncidentURL: nonEmpty(f.IncidentURL),
	}
	switch event {
	case MonitorDown:
		p.Title = f.MonitorName + " is DOWN"
		p.Region = nonEmpty(f.Region)
		p.Reason = nonEmpty(f.Reason)
		p.Explanation = nonEmpty(f.Explanation)
	case MonitorUp, IncidentResolved:
		p.Title = f.MonitorName + " has RECOVERED"
		res := resolutionRecovered
		if event == IncidentResolved {
			p.Title = f.MonitorName + ": incident resolved manually"
			res = resolutionManual
		}
		p.Resolution = &res
		if !f.StartedAt.IsZero() && !f.ResolvedAt.IsZero() {
			d := max(int64(f.ResolvedAt.Sub(f.StartedAt)/time.Second), 0)
			p.DurationSeconds = &d
		}
	default:
		return IncidentPayload{}, fmt.Errorf("build incident payload: %q is not an incident event", event)
	}
	return p, nil
}

// NewEscalationPayload is the extra monitor.down an escalation step sends:
// same incident id and start, reason "Escalation step <N>: still down".
func NewEscalationPayload(step int, f IncidentFacts) IncidentPayload {
	f.Reason = fmt.Sprintf(escalationReasonFormat, step)
	p, _ := NewIncidentPayload(MonitorDown, f)
	return p
}

// NewTestPayload is the test event: a fixed test monitor and reason, a title
// ending in "is DOWN", and null region, duration, resolution, incident_url
// and explanation.
func NewTestPayload(now time.Time) IncidentPayload {
	return IncidentPayload{
		Event:       Test,
		Title:       testMonitorName + " is DOWN",
		MonitorName: testMonitorName,
		MonitorURL:  testMonitorURL,
		IncidentID:  uuid.NewString(),
		StartedAt:   isoTime(now),
		Reason:      nonEmpty(testReason),
	}
}

// ExpiryPayload is the body of ssl.expiring and domain.expiring.
type ExpiryPayload struct {
	Event         string `json:"event"`
	Title         string `json:"title"`
	URL           string `json:"url"`
	MonitorID     string `json:"monitor_id"`
	MonitorName   string `json:"monitor_name"`
	MonitorURL    string `json:"monitor_url"`
	Kind          string `json:"kind"`
	ExpiresAt     string `json:"expires_at"`
	DaysRemaining int    `json:"days_remaining"`
	Stage         string `json:"stage"`
}

// ExpiryFacts are the inputs of an expiry notice.
type ExpiryFacts struct {
	// Kind is "ssl" or "domain".
	Kind        string
	MonitorID   string
	MonitorName string
	MonitorURL  string
	ExpiresAt   time.Time
	// Stage is pre_15d, pre_7d, pre_2d, pre_24h, post_1d, post_2d, post_3d or
	// pre_<N>d.
	Stage string
	// URL links to details.
	URL string
}

// NewExpiryPayload builds an ssl.expiring or domain.expiring notice; days
// remaining are whole days, negative once expired.
func NewExpiryPayload(f ExpiryFacts, now time.Time) ExpiryPayload {
	event, what := SSLExpiring, "SSL certificate"
	if f.Kind == "domain" {
		event, what = DomainExpiring, "Domain registration"
	}
	days := DaysRemaining(f.ExpiresAt, now)
	title := fmt.Sprintf("%s of %s expires in %d days", what, f.MonitorName, days)
	switch {
	case days < 0:
		title = fmt.Sprintf("%s of %s expired %d days ago", what, f.MonitorName, -days)
	case days == 0:
		title = fmt.Sprintf("%s of %s expires within 24 hours", what, f.MonitorName)
	}
	return ExpiryPayload{
		Event: event, Title: title, URL: f.URL,
		MonitorID: f.MonitorID, MonitorName: f.MonitorName, MonitorURL: f.MonitorURL,
		Kind: f.Kind, ExpiresAt: isoString(f.ExpiresAt), DaysRemaining: days, Stage: f.Stage,
	}
}

// DaysRemaining is the whole days from now until at: truncated toward zero
// before expiry and counted in started days after it (an hour past expiry is
// -1).
func DaysRemaining(at, now time.Time) int {
	d := at.Sub(now)
	if d >= 0 {
		return int(d / (24 * time.Hour))
	}
	return -int((-d + 24*time.Hour - 1) / (24 * time.Hour))
}

// MaintenancePayload is the body of maintenance.started and maintenance.ended.
type MaintenancePayload struct {
	Event            string   `json:"event"`
	Title            string   `json:"title"`
	URL              string   `json:"url"`
	MaintenanceID    string   `json:"maintenance_id"`
	MaintenanceTitle string   `json:"maintenance_title"`
	Description      string   `json:"description"`
	StartsAt         string   `json:"starts_at"`
	EndsAt           string   `json:"ends_at"`
	Impact           string   `json:"impact"`
	Scope            string   `json:"scope"`
	MonitorIDs       []string `json:"monitor_ids"`
	GroupIDs         []string `json:"group_ids"`
}

// MaintenanceFacts are the inputs of a maintenance notice.
type MaintenanceFacts struct {
	ID, Title, Description string
	StartsAt, EndsAt       time.Time
	// Impact is low, medium or high (medium when empty).
	Impact string
	// Scope is the MaintenanceWindow scope: all, monitors or groups.
	Scope      string
	MonitorIDs []string
	GroupIDs   []string
	URL        string
}

// NewMaintenancePayload builds maintenance.started (started true) or
// maintenance.ended.
func NewMaintenancePayload(started bool, f MaintenanceFacts) MaintenancePayload {
	event, title := MaintenanceStarted, maintenanceStartedPrefix+f.Title
	if !started {
		event, title = MaintenanceEnded, maintenanceCompletedPrefix+f.Title
	}
	scope := "global"
	switch f.Scope {
	case "monitors":
		scope = "monitor"
	case "groups":
		scope = "group"
	}
	impact := f.Impact
	if impact == "" {
		impact = "medium"
	}
	return MaintenancePayload{
		Event: event, Title: title, URL: f.URL,
		MaintenanceID: f.ID, MaintenanceTitle: f.Title, Description: f.Description,
		StartsAt: isoString(f.StartsAt), EndsAt: isoString(f.EndsAt),
		Impact: impact, Scope: scope,
		MonitorIDs: orEmpty(f.MonitorIDs), GroupIDs: orEmpty(f.GroupIDs),
	}
}

// LastMileAffected is one ISP network in a last-mile notice.
type LastMileAffected struct {
	ISP           string   `json:"isp"`
	Name          string   `json:"name"`
	VantagePoints int      `json:"vantage_points"`
	Failures      int      `json:"failures"`
	FailingSince  string   `json:"failing_since"`
	ErrorClasses  []string `json:"error_classes"`
}

// LastMilePayload is the body of last_mile.unreachable and
// last_mile.recovered.
type LastMilePayload struct {
	Event       string             `json:"event"`
	Title       string             `json:"title"`
	URL         string             `json:"url"`
	MonitorID   string             `json:"monitor_id"`
	MonitorName string             `json:"monitor_name"`
	NoticeID    string             `json:"notice_id"`
	ISPs        []string           `json:"isps"`
	Affected    []LastMileAffected `json:"affected"`
}

// NewLastMilePayload builds last_mile.unreachable (unreachable true) or
// last_mile.recovered; noticeID is the same for both events of one outage.
func NewLastMilePayload(unreachable bool, monitorID, monitorName, noticeID, url string, affected []LastMileAffected) LastMilePayload {
	isps := make([]string, 0, len(affected))
	for i := range affected {
		isps = append(isps, affected[i].Name)
		if affected[i].ErrorClasses == nil {
			affected[i].ErrorClasses = []string{}
		}
	}
	names := joinNames(isps)
	event, title := LastMileUnreachable, "Unreachable for "+names+" users: "+monitorName
	if !unreachable {
		event, title = LastMileRecovered, "Reachable again for "+names+" users: "+monitorName
	}
	if affected == nil {
		affected = []LastMileAffected{}
	}
	return LastMilePayload{
		Event: event, Title: title, URL: url, MonitorID: monitorID, MonitorName: monitorName,
		NoticeID: noticeID, ISPs: isps, Affected: affected,
	}
}

// SiteHealthError is one new problem of a website health crawl.
type SiteHealthError struct {
	Kind      string `json:"kind"`
	TargetURL string `json:"target_url"`
}

// ScoreDrop is one audit score that dropped.
type ScoreDrop struct {
	URL      string  `json:"url"`
	Category string  `json:"category"`
	From     float64 `json:"from"`
	To       float64 `json:"to"`
}

// SiteHealthPayload is the body of site_health.issues.
type SiteHealthPayload struct {
	Event        string            `json:"event"`
	Title        string            `json:"title"`
	URL          string            `json:"url"`
	SiteID       string            `json:"site_id"`
	RunID        string            `json:"run_id"`
	SiteURL      string            `json:"site_url"`
	Status       string            `json:"status"`
	BrokenLinks  int               `json:"broken_links"`
	MixedContent int               `json:"mixed_content"`
	NewErrors    []SiteHealthError `json:"new_errors"`
	ScoreDrops   []ScoreDrop       `json:"score_drops"`
}

// MaxSiteHealthErrors bounds new_errors.
const MaxSiteHealthErrors = 50

// NewSiteHealthPayload builds site_health.issues, keeping the first 50 errors.
func NewSiteHealthPayload(p SiteHealthPayload) SiteHealthPayload {
	p.Event = SiteHealthIssues
	if p.Title == "" {
		p.Title = "Website health issues: " + p.SiteURL
	}
	if len(p.NewErrors) > MaxSiteHealthErrors {
		p.NewErrors = p.NewErrors[:MaxSiteHealthErrors]
	}
	if p.NewErrors == nil {
		p.NewErrors = []SiteHealthError{}
	}
	if p.ScoreDrops == nil {
		p.ScoreDrops = []ScoreDrop{}
	}
	return p
}

// ThirdPartyPayload is the body of third_party.incident, .resolved and
// .maintenance.
type ThirdPartyPayload struct {
	Event         string   `json:"event"`
	Title         string   `json:"title"`
	URL           string   `json:"url"`
	ProviderID    string   `json:"provider_id"`
	ProviderName  string   `json:"provider_name"`
	Kind          string   `json:"kind"`
	Severity      string   `json:"severity"`
	Detail        string   `json:"detail"`
	Components    []string `json:"components"`
	StatusPageURL string   `json:"status_page_url"`
	IncidentURL   string   `json:"incident_url"`
}

// NewThirdPartyPayload builds a third-party notice; the event follows kind.
func NewThirdPartyPayload(p ThirdPartyPayload) ThirdPartyPayload {
	switch p.Kind {
	case "incident_resolved", "component_recovered":
		p.Event = ThirdPartyResolved
	case "maintenance_started", "maintenance_completed":
		p.Event = ThirdPartyMaintenance
	default:
		p.Event = ThirdPartyIncident
	}
	if p.Title == "" {
		p.Title = p.ProviderName + ": " + p.Detail
	}
	if p.Components == nil {
		p.Components = []string{}
	}
	return p
}

// SLOPayload is the body of the SLO notices.
type SLOPayload struct {
	Event                  string             `json:"event"`
	Title                  string             `json:"title"`
	URL                    string             `json:"url"`
	SLOID                  string             `json:"slo_id"`
	SLOName                string             `json:"slo_name"`
	MonitorID              string             `json:"monitor_id"`
	MonitorName            string             `json:"monitor_name"`
	TargetPercentage       float64            `json:"target_percentage"`
	CurrentSLI             *float64           `json:"current_sli"`
	BudgetRemainingPercent *float64           `json:"error_budget_remaining_percent"`
	BurnRates              map[string]float64 `json:"burn_rates"`
}

// isoTime formats t as ISO 8601 in UTC, nil when zero.
func isoTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// isoString formats t as ISO 8601 in UTC, "" when zero.
func isoString(t time.Time) string {
	if p := isoTime(t); p != nil {
		return *p
	}
	return ""
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return "some"
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	}
	out := ""
	for i, n := range names {
		switch {
		case i == 0:
			out = n
		case i == len(names)-1:
			out += ", and " + n
		default:
			out += ", " + n
		}
	}
	return out
}
