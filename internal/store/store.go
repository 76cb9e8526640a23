package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Sentinel errors returned by every backend. Callers test them with errors.Is.
var (
	// ErrNotFound means the addressed record does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrIncidentOpen means the monitor already has an open incident.
	ErrIncidentOpen = errors.New("store: monitor already has an open incident")
	// ErrIncidentResolved means the incident is already resolved.
	ErrIncidentResolved = errors.New("store: incident already resolved")
	// ErrIncidentAcknowledged means the incident was already acknowledged; the
	// method still returns the incident as stored.
	ErrIncidentAcknowledged = errors.New("store: incident already acknowledged")
	// ErrLeaseLost means the delivery is no longer leased by the caller (the
	// lease expired and another owner took it, or it was never leased).
	ErrLeaseLost = errors.New("store: delivery lease lost")
	// ErrInvalid means the arguments were rejected before touching the database.
	ErrInvalid = errors.New("store: invalid argument")
	// ErrSubscriberExists means the status page already has a subscriber with
	// the same channel and address; the method returns that subscriber.
	ErrSubscriberExists = errors.New("store: subscriber already exists")
)

// CheckStatus is the verdict of one check.
type CheckStatus string

// Check statuses. Up and degraded count as up for uptime; blocked and unknown
// are excluded from uptime altogether.
const (
	StatusUp       CheckStatus = "up"
	StatusDown     CheckStatus = "down"
	StatusDegraded CheckStatus = "degraded"
	StatusBlocked  CheckStatus = "blocked"
	StatusUnknown  CheckStatus = "unknown"
)

// StatusProblem is the ChecksQuery.Status filter value that selects every check
// whose status is not up.
const StatusProblem CheckStatus = "problem"

// Valid reports whether s is one of the five check statuses.
func (s CheckStatus) Valid() bool {
	switch s {
	case StatusUp, StatusDown, StatusDegraded, StatusBlocked, StatusUnknown:
		return true
	}
	return false
}

// Check is one check result from one probe region. ID is made by the probe agent,
// so a retried batch is applied once.
type Check struct {
	ID             string          `json:"id"`
	MonitorID      string          `json:"monitor_id"`
	Namespace      string          `json:"namespace"`
	Region         string          `json:"region"`
	CheckedAt      time.Time       `json:"checked_at"`
	Status         CheckStatus     `json:"status"`
	StatusCode     *int            `json:"status_code"`
	ResponseTimeMs int64           `json:"response_time_ms"`
	ErrorType      string          `json:"error_type,omitempty"`
	ErrorMessage   string          `json:"error_message,omitempty"`
	Details        json.RawMessage `json:"details,omitempty"`
	// Screenshot is the JPEG a failed browser check took of its page, at
	// most MaxScreenshotBytes. It is stored apart from the check
	// (CheckScreenshot reads it), pruned with it and deleted with the
	// monitor's history; reads of checks leave it empty.
	Screenshot []byte `json:"-"`
}

// MaxScreenshotBytes bounds Check.Screenshot: a larger one is not stored.
const MaxScreenshotBytes = 256 << 10

// ChecksQuery selects check history, newest first.
type ChecksQuery struct {
	MonitorID string
	// Before returns only checks strictly older than it (the cursor).
	Before *time.Time
	// From and To bound checked_at to [From, To) when set.
	From, To *time.Time
	// Region filters on the region code when not empty.
	Region string
	// Status filters on one status, or StatusProblem for anything not up.
	Status CheckStatus
	// Limit is the page size; 0 means 50.
	Limit int
}

// Stats aggregates the checks of a range. Response-time fields cover up and
// degraded checks only.
type Stats struct {
	Up, Down, Degraded, Blocked, Unknown int64
	// ResponseSumMs is the sum of the response times of up and degraded checks.
	ResponseSumMs int64
	// ResponseMinMs and ResponseMaxMs are nil when there is no up or degraded check.
	ResponseMinMs, ResponseMaxMs *int64
}

// StatsQuery selects the checks that Stats aggregates: one monitor over
// [From, To), optionally one region.
type StatsQuery struct {
	MonitorID string
	Region    string
	From, To  time.Time
}

// Total is the number of checks of every status.
func (s Stats) Total() int64 { return s.Up + s.Down + s.Degraded + s.Blocked + s.Unknown }

// Successful is the number of up and degraded checks.
func (s Stats) Successful() int64 { return s.Up + s.Degraded }

// Failed is the number of down checks.
func (s Stats) Failed() int64 { return s.Down }

// UptimePercent is successful / (successful + failed) × 100, or nil when there
// is no countable check (blocked and unknown checks do not count).
func (s Stats) UptimePercent() *float64 {
	den := s.Successful() + s.Failed()
	if den == 0 {
		return nil
	}
	p := float64(s.Successful()) * 100 / float64(den)
	return &p
}

// AvgResponseMs is the mean response time of up and degraded checks, 0 when none.
func (s Stats) AvgResponseMs() float64 {
	if s.Successful() == 0 {
		return 0
	}
	return float64(s.ResponseSumMs) / float64(s.Successful())
}

// Add accumulates o into s.
func (s *Stats) Add(o Stats) {
	s.Up += o.Up
	s.Down += o.Down
	s.Degraded += o.Degraded
	s.Blocked += o.Blocked
	s.Unknown += o.Unknown
	s.ResponseSumMs += o.ResponseSumMs
	s.ResponseMinMs = minPtr(s.ResponseMinMs, o.ResponseMinMs)
	s.ResponseMaxMs = maxPtr(s.ResponseMaxMs, o.ResponseMaxMs)
}

// AddCheck accumulates one check into s.
func (s *Stats) AddCheck(status CheckStatus, responseMs int64) {
	switch status {
	case StatusUp:
		s.Up++
	case StatusDown:
		s.Down++
	case StatusDegraded:
		s.Degraded++
	case StatusBlocked:
		s.Blocked++
	default:
		s.Unknown++
	}
	if status == StatusUp || status == StatusDegraded {
		s.ResponseSumMs += responseMs
		s.ResponseMinMs = minPtr(s.ResponseMinMs, &responseMs)
		s.ResponseMaxMs = maxPtr(s.ResponseMaxMs, &responseMs)
	}
}

func minPtr(a, b *int64) *int64 {
	switch {
	case a == nil:
		return b
	case b == nil || *a <= *b:
		return a
	}
	return b
}

func maxPtr(a, b *int64) *int64 {
	switch {
	case a == nil:
		return b
	case b == nil || *a >= *b:
		return a
	}
	return b
}

// DailyUptime is the uptime of one calendar day in the requested time zone.
type DailyUptime struct {
	// Date is the local day, YYYY-MM-DD.
	Date  string    `json:"date"`
	Start time.Time `json:"start"`
	Stats Stats     `json:"-"`
	// UptimePercent is nil when the day has no countable check.
	UptimePercent *float64 `json:"uptime_percentage"`
}

// SeriesQuery selects a response-time series: buckets of Step from From (both
// truncated to whole minutes) up to To, optionally one region.
type SeriesQuery struct {
	MonitorID string
	Region    string
	From, To  time.Time
	// Step is the bucket width, a positive multiple of one minute.
	Step time.Duration
}

// SeriesPoint is one bucket of a response-time series; buckets without checks
// are omitted.
type SeriesPoint struct {
	At    time.Time `json:"at"`
	Stats Stats     `json:"-"`
}

// IncidentStatus is the incident list filter.
type IncidentStatus string

// Incident list filters.
const (
	IncidentOngoing      IncidentStatus = "ongoing"
	IncidentResolved     IncidentStatus = "resolved"
	IncidentSuppressed   IncidentStatus = "suppressed"
	IncidentAcknowledged IncidentStatus = "acknowledged"
)

// CauseManual is the cause of an incident opened by hand (POST /incidents).
// Such an incident stays open until resolved by hand: a person declared
// it, often for what no check sees, so a passing check does not end it.
const CauseManual = "manual"

// Incident is an outage of one monitor, from the quorum confirming failure to
// recovery or a manual resolve.
type Incident struct {
	ID                string     `json:"id"`
	Namespace         string     `json:"namespace"`
	MonitorID         string     `json:"monitor_id"`
	MonitorName       string     `json:"monitor_name"`
	MonitorURL        string     `json:"monitor_url"`
	MonitorType       string     `json:"monitor_type"`
	StartedAt         time.Time  `json:"started_at"`
	ResolvedAt        *time.Time `json:"resolved_at"`
	AlertSuppressed   bool       `json:"alert_suppressed"`
	SuppressionReason string     `json:"suppression_reason,omitempty"`
	IsFlapping        bool       `json:"is_flapping"`
	Confirmations     int        `json:"confirmations"`
	ConfirmingRegions []string   `json:"confirming_regions"`
	RegionsTotal      int        `json:"regions_total"`
	AcknowledgedAt    *time.Time `json:"acknowledged_at"`
	AcknowledgedBy    string     `json:"acknowledged_by,omitempty"`
	SnoozedUntil      *time.Time `json:"snoozed_until"`
	ResolvedManually  bool       `json:"resolved_manually"`
	// Cause is a short machine-readable failure reason (error type) at
	// opening; CauseManual for an incident a person opened.
	Cause string `json:"cause,omitempty"`
	// IssueURL links an issue opened for the incident in a code host.
	IssueURL   string           `json:"issue_url,omitempty"`
	Postmortem string           `json:"postmortem,omitempty"`
	Runbook    *IncidentRunbook `json:"runbook,omitempty"`
}

// DurationSeconds is the length of a resolved incident, or of an ongoing one up
// to now.
func (i *Incident) DurationSeconds(now time.Time) int64 {
	end := now
	if i.ResolvedAt != nil {
		end = *i.ResolvedAt
	}
	d := end.Sub(i.StartedAt)
	if d < 0 {
		return 0
	}
	return int64(d / time.Second)
}

// IncidentRunbook is the runbook attached to an incident, with its step state.
type IncidentRunbook struct {
	RunbookID string        `json:"runbook_id"`
	Name      string        `json:"name,omitempty"`
	Steps     []RunbookStep `json:"steps"`
}

// RunbookStep is one step of an attached runbook.
type RunbookStep struct {
	ID          string     `json:"id"`
	Title       string     `json:"title"`
	Description string     `json:"description,omitempty"`
	Completed   bool       `json:"is_completed"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
}

// IncidentUpdate changes the engine-owned fields of an open or resolved incident;
// nil fields are left alone.
type IncidentUpdate struct {
	AlertSuppressed   *bool
	SuppressionReason *string
	IsFlapping        *bool
	Confirmations     *int
	ConfirmingRegions []string
	RegionsTotal      *int
	IssueURL          *string
}

// IncidentQuery selects incidents, newest start first. Without a MonitorID
// the incidents of deleted monitors (retired generations, see
// GenerationStore) are left out.
type IncidentQuery struct {
	// Namespace limits to one workspace; empty means all.
	Namespace string
	Status    IncidentStatus
	MonitorID string
	// From and To bound started_at to [From, To) when set.
	From, To *time.Time
	// Q searches monitor names and URLs, case-insensitively.
	Q string
	// Page starts at 1; PageSize defaults to 25.
	Page, PageSize int
}

// IncidentCounts counts the incidents matching a query's other filters,
// regardless of its status filter.
type IncidentCounts struct {
	All        int `json:"all"`
	Ongoing    int `json:"ongoing"`
	Resolved   int `json:"resolved"`
	Suppressed int `json:"suppressed"`
}

// IncidentList is one page of incidents.
type IncidentList struct {
	Items  []Incident     `json:"items"`
	Total  int            `json:"total"`
	Counts IncidentCounts `json:"counts"`
}

// Timeline event kinds written by the store itself. Callers may append others.
const (
	TimelineOpened       = "opened"
	TimelineResolved     = "resolved"
	TimelineAcknowledged = "acknowledged"
	TimelineSnoozed      = "snoozed"
	TimelineUnsnoozed    = "unsnoozed"
	TimelineNote         = "note"
	TimelinePostmortem   = "postmortem"
	TimelineRunbook      = "runbook"
)

// TimelineEvent is one entry of an incident's timeline.
type TimelineEvent struct {
	ID         int64           `json:"id"`
	IncidentID string          `json:"incident_id"`
	Kind       string          `json:"kind"`
	At         time.Time       `json:"at"`
	Data       json.RawMessage `json:"data,omitempty"`
}

// TimelineQuery pages through an incident's timeline in chronological order.
type TimelineQuery struct {
	IncidentID string
	// Cursor is the NextCursor of the previous page; empty starts at the beginning.
	Cursor string
	// Limit defaults to 200.
	Limit int
}

// Note is a note on an incident; public notes are updates shown on status pages.
type Note struct {
	ID         string    `json:"id"`
	IncidentID string    `json:"incident_id"`
	Body       string    `json:"body"`
	Public     bool      `json:"public"`
	Author     string    `json:"author,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// OutboxEvent is an alert to deliver to alert channels. The store creates one
// delivery per entry of Channels in the same transaction.
type OutboxEvent struct {
	ID        string          `json:"id"`
	Namespace string          `json:"namespace"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"created_at"`
	// Channels are the target alert-channel ids (write only).
	Channels []string `json:"channels,omitempty"`
}

// DeliveryStatus is the state of one delivery.
type DeliveryStatus string

// Delivery states.
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliveryDelivered DeliveryStatus = "delivered"
	DeliveryFailed    DeliveryStatus = "failed"
)

// Delivery is one event to one channel. Its ID is stable across retries (the
// X-Service-Delivery header).
type Delivery struct {
	ID            string          `json:"id"`
	EventID       string          `json:"event_id"`
	Namespace     string          `json:"namespace"`
	Kind          string          `json:"kind"`
	Payload       json.RawMessage `json:"payload"`
	ChannelID     string          `json:"channel_id"`
	Status        DeliveryStatus  `json:"status"`
	Attempts      int             `json:"attempts"`
	NextAttemptAt time.Time       `json:"next_attempt_at"`
	LeasedBy      string          `json:"leased_by,omitempty"`
	LeaseUntil    *time.Time      `json:"lease_until,omitempty"`
	LastError     string          `json:"last_error,omitempty"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
}

// DeliveryAttempt is the log entry of one delivery attempt.
type DeliveryAttempt struct {
	DeliveryID string    `json:"delivery_id"`
	Attempt    int       `json:"attempt"`
	At         time.Time `json:"at"`
	// StatusCode is 0 when no response was received.
	StatusCode int    `json:"status_code"`
	Excerpt    string `json:"excerpt,omitempty"`
	Error      string `json:"error,omitempty"`
	LatencyMs  int64  `json:"latency_ms"`
}

// DeliveryQuery lists deliveries, newest first.
type DeliveryQuery struct {
	ChannelID string
	EventID   string
	Status    DeliveryStatus
	Limit     int
}

// DeployEvent records a deployment, for correlation with incidents.
type DeployEvent struct {
	ID          string          `json:"id"`
	Namespace   string          `json:"namespace"`
	ServiceName string          `json:"service_name"`
	Environment string          `json:"environment,omitempty"`
	Version     string          `json:"version,omitempty"`
	Source      string          `json:"source,omitempty"`
	DeployedAt  time.Time       `json:"deployed_at"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
}

// DeployEventQuery lists deploy events, newest deployment first.
type DeployEventQuery struct {
	Namespace   string
	ServiceName string
	From, To    *time.Time
	// Limit defaults to 20.
	Limit int
}

// DNSRecord is one observed DNS answer of a DNS monitor.
type DNSRecord struct {
	MonitorID  string    `json:"monitor_id"`
	ObservedAt time.Time `json:"observed_at"`
	RecordType string    `json:"record_type"`
	Answers    []string  `json:"answers"`
	// Changed is true when the answer differs from the previous observation.
	Changed bool `json:"changed"`
}

// PauseWindow is a period a monitor was paused; ResumedAt is nil while paused.
type PauseWindow struct {
	MonitorID string     `json:"monitor_id"`
	PausedAt  time.Time  `json:"paused_at"`
	ResumedAt *time.Time `json:"resumed_at"`
}

// HeartbeatPing is one ping of a cron (heartbeat) monitor.
type HeartbeatPing struct {
	MonitorID  string    `json:"monitor_id"`
	At         time.Time `json:"at"`
	OK         bool      `json:"ok"`
	DurationMs *int64    `json:"duration_ms,omitempty"`
	StatusCode *int      `json:"status_code,omitempty"`
}

// SubscriberChannel is how a status page subscriber is notified.
type SubscriberChannel string

// Subscriber channels.
const (
	SubscriberEmail   SubscriberChannel = "email"
	SubscriberChat    SubscriberChannel = "chat"
	SubscriberWebhook SubscriberChannel = "webhook"
)

// Subscriber is a subscription to the public updates of one status page. It
// is pending until ConfirmedAt is set. Tokens are never stored: only the
// SHA-256 (hex) of the pending confirmation token is.
type Subscriber struct {
	ID string `json:"id"`
	// PageUID is the StatusPage's UID.
	PageUID   string            `json:"page_uid"`
	Namespace string            `json:"namespace"`
	Channel   SubscriberChannel `json:"channel"`
	// Address is the e-mail address (email) or the https URL (chat, webhook).
	Address string `json:"address"`
	// ConfirmTokenHash identifies the pending confirmation; empty once
	// confirmed.
	ConfirmTokenHash   string     `json:"-"`
	ConfirmationSentAt *time.Time `json:"confirmation_sent_at"`
	ConfirmedAt        *time.Time `json:"confirmed_at"`
	CreatedAt          time.Time  `json:"created_at"`
}

// Confirmed reports whether the subscriber confirmed the subscription.
func (s *Subscriber) Confirmed() bool { return s.ConfirmedAt != nil }

// MonitorView is the store's view of a monitor that a judgement decides
// from.
type MonitorView struct {
	// Checks holds the newest check of each region asked for that has one.
	Checks []Check
	// RunSince is when the monitor's current run of results began: its
	// first check after ViewQuery.Now-Gap when no check was stored in the
	// Gap before that one. Nil when the run began earlier, or when no check
	// was stored in the last Gap.
	RunSince *time.Time
	// Open is the monitor's open incident, nil when none is open.
	Open *Incident
	// State is what the engine kept of the monitor at its last judgement
	// (an opaque document), nil when nothing.
	State []byte
}

// ViewQuery selects a MonitorView.
type ViewQuery struct {
	// Regions whose newest checks are read.
	Regions []string
	// Now and Gap locate RunSince: a silence of more than Gap ends a run.
	Now time.Time
	Gap time.Duration
}

// JudgeTx is what a judgement (Store.Judge) reads and writes; every call runs
// in the judgement's transaction, under the monitor's lock.
type JudgeTx interface {
	// View is MonitorView of the judged monitor.
	View(ctx context.Context, q ViewQuery) (MonitorView, error)
	// OpenedSince counts the monitor's incidents that started after since.
	OpenedSince(ctx context.Context, since time.Time) (int, error)
	// Open is OpenIncident for the judged monitor.
	Open(ctx context.Context, inc Incident, events ...OutboxEvent) (Incident, error)
	// Resolve resolves the incident id (not manually) at at.
	Resolve(ctx context.Context, id string, at time.Time, events ...OutboxEvent) (Incident, error)
	// Enqueue stores outbox events.
	Enqueue(ctx context.Context, events ...OutboxEvent) error
	// SetState replaces the monitor's judgement document; empty deletes it.
	SetState(ctx context.Context, state []byte) error
}

// Store is the history store. Every method is safe for concurrent use, and for
// use by several processes sharing one database where the backend allows it
// (PostgreSQL).
type Store interface {
	// InsertChecks writes checks and their rollup increments in one
	// transaction: once it returns, every rollup read counts them (PostgreSQL
	// folds the increments into the rollup rows later, see its package). It
	// is idempotent on Check.ID: already stored ids (and duplicates within
	// the batch) are skipped and not counted again. It returns how many checks
	// were new.
	InsertChecks(ctx context.Context, checks []Check) (inserted int, err error)
	// ListChecks returns one page of check history, newest first, and the
	// cursor for the next (older) page, nil when there is none. The cursor is
	// the checked_at of the last item returned; pass it unchanged as Before.
	ListChecks(ctx context.Context, q ChecksQuery) (items []Check, nextBefore *time.Time, err error)
	// CheckScreenshot returns the screenshot stored with a check of a
	// monitor, or ErrNotFound.
	CheckScreenshot(ctx context.Context, monitorID, checkID string) ([]byte, error)
	// LatestChecks returns the most recent check of each region of a monitor.
	LatestChecks(ctx context.Context, monitorID string) ([]Check, error)
	// MonitorView returns the newest check of each of q.Regions that has
	// one, when the monitor's current run of results began, its open
	// incident and
	// judgement document: what a judgement of the monitor reads, here
	// without its lock (status, explanations).
	MonitorView(ctx context.Context, monitorID string, q ViewQuery) (MonitorView, error)
	// UnsettledMonitors returns those of monitorIDs that have an open
	// incident or a judgement document: the only monitors whose passing
	// results can change anything. One read for a whole batch of results,
	// where a MonitorView each was the ingest's largest cost at 100,000
	// monitors.
	UnsettledMonitors(ctx context.Context, monitorIDs []string) (map[string]bool, error)
	// AllUnsettledMonitors returns every monitor with an open incident or a
	// judgement document: the leader's sweep judges those and no other
	// (one read, however many monitors there are).
	AllUnsettledMonitors(ctx context.Context) (map[string]bool, error)
	// RecordAgentContact records that an agent of region called a manager at
	// at (kept when later), and forgets contacts older than a week.
	RecordAgentContact(ctx context.Context, region, agent string, at time.Time) error
	// AgentsOnline returns, per region, how many agents were last in
	// contact at since or later and the latest contact.
	AgentsOnline(ctx context.Context, since time.Time) (map[string]AgentPresence, error)
	// RecordAgentReport records what a push of an agent said about the
	// results it holds back: the push is a contact (as RecordAgentContact),
	// its backlog replaces the agent's when r.At is its latest report, and
	// r.Replayed is added to the region's replayed results.
	RecordAgentReport(ctx context.Context, r AgentReport) error
	// RegionReplays returns, per region that ever had results replayed,
	// how many in all and when last.
	RegionReplays(ctx context.Context) (map[string]RegionReplays, error)
	// Judge runs fn in one write transaction holding the monitor's judgement
	// lock, so that judgements of one monitor run one at a time across every
	// process sharing the store (PostgreSQL: a transaction-scoped advisory
	// lock; SQLite: its single writer). fn reads the regions' latest checks
	// and the open incident and writes its decision through tx; everything is
	// committed when fn returns nil. fn must not call the Store itself for
	// writes (SQLite would wait for its own writer).
	Judge(ctx context.Context, monitorID string, fn func(tx JudgeTx) error) error
	// Stats aggregates a monitor's checks over [From, To) from the rollups.
	Stats(ctx context.Context, q StatsQuery) (Stats, error)
	// Uptime is the uptime percentage of a monitor over [from, to), nil when
	// there is no countable check.
	Uptime(ctx context.Context, monitorID string, from, to time.Time) (*float64, error)
	// UptimeWindows is the uptime of a monitor over each of the nested
	// windows [to-windows[i], to) in one query of the rollups, nil where
	// there is no countable check. to and the windows are whole minutes
	// (see UptimeWindowEnd); windows are sorted longest first.
	UptimeWindows(ctx context.Context, monitorID string, to time.Time, windows ...time.Duration) ([]*float64, error)
	// UptimeDaily returns the last days calendar days in loc, oldest first,
	// today (up to now) included.
	UptimeDaily(ctx context.Context, monitorID string, days int, loc *time.Location) ([]DailyUptime, error)
	// UptimeDailyMany is UptimeDaily for many monitors at once (a few
	// queries whatever their number, for status pages). Every id is a key of
	// the result, with days entries.
	UptimeDailyMany(ctx context.Context, monitorIDs []string, days int, loc *time.Location) (map[string][]DailyUptime, error)
	// StatsMany is Stats over [from, to) for many monitors at once, all
	// regions. Every id is a key of the result.
	StatsMany(ctx context.Context, monitorIDs []string, from, to time.Time) (map[string]Stats, error)
	// LatencyStats counts a monitor's checks over [from, to) that are good for
	// a latency SLI: up or degraded with a response time at most thresholdMs.
	// total counts up, degraded and down checks (blocked and unknown are
	// excluded). It reads raw checks, so from should lie within retention.
	LatencyStats(ctx context.Context, monitorID string, from, to time.Time, thresholdMs int64) (good, total int64, err error)
	// ResponseSeries returns per-bucket statistics from the rollups.
	ResponseSeries(ctx context.Context, q SeriesQuery) ([]SeriesPoint, error)
	// PruneChecks deletes raw checks older than olderThan in chunks of
	// chunkSize rows, one short transaction per chunk, so ingest is never
	// blocked for long. Rollups are kept. It returns the number deleted.
	PruneChecks(ctx context.Context, olderThan time.Time, chunkSize int) (int64, error)
	// PruneRollups deletes rollup buckets of the given width (time.Minute,
	// time.Hour or 24*time.Hour) that start before olderThan.
	PruneRollups(ctx context.Context, step time.Duration, olderThan time.Time) (int64, error)
	// ResetStats deletes a monitor's checks and rollups (statistics start over);
	// incidents are kept.
	ResetStats(ctx context.Context, monitorID string) error
	// DeleteMonitorHistory deletes everything stored about a monitor: checks,
	// rollups, incidents with their timelines, notes and AI content, DNS
	// records, pause windows, heartbeats, certificate observations, sent
	// expiry notices and its generation record, so no later generation
	// adopts it.
	DeleteMonitorHistory(ctx context.Context, monitorID string) error

	// OpenIncident stores a new open incident (ID and StartedAt are filled when
	// empty), appends an "opened" timeline event and enqueues events, all in
	// one transaction. It fails with ErrIncidentOpen when the monitor already
	// has an open incident.
	OpenIncident(ctx context.Context, inc Incident, events ...OutboxEvent) (Incident, error)
	// ResolveIncident resolves an open incident at at, appends a "resolved"
	// timeline event (and a note when note is not empty) and enqueues events.
	// It fails with ErrIncidentResolved when already resolved.
	ResolveIncident(ctx context.Context, id string, at time.Time, manual bool, note string, events ...OutboxEvent) (Incident, error)
	// UpdateIncident changes engine-owned fields and enqueues events.
	UpdateIncident(ctx context.Context, id string, u IncidentUpdate, events ...OutboxEvent) (Incident, error)
	// GetIncident returns one incident or ErrNotFound.
	GetIncident(ctx context.Context, id string) (Incident, error)
	// GetOpenIncident returns the monitor's open incident or ErrNotFound.
	GetOpenIncident(ctx context.Context, monitorID string) (Incident, error)
	// ListIncidents returns one page of incidents and the counts.
	ListIncidents(ctx context.Context, q IncidentQuery) (IncidentList, error)
	// AcknowledgeIncident records who acknowledged an incident. When it was
	// already acknowledged it returns the incident unchanged together with
	// ErrIncidentAcknowledged and enqueues nothing.
	AcknowledgeIncident(ctx context.Context, id, by string, at time.Time, events ...OutboxEvent) (Incident, error)
	// SnoozeIncident silences an incident's alerts until until; a nil until
	// unsnoozes it.
	SnoozeIncident(ctx context.Context, id string, until *time.Time) (Incident, error)
	// SetPostmortem replaces an incident's postmortem.
	SetPostmortem(ctx context.Context, id, postmortem string) error
	// AttachRunbook attaches a runbook (replacing any previous one).
	AttachRunbook(ctx context.Context, id string, rb IncidentRunbook) (Incident, error)
	// SetRunbookStep marks one step of the attached runbook (not) completed;
	// ErrNotFound when the incident, runbook or step is missing.
	SetRunbookStep(ctx context.Context, id, stepID string, completed bool, at time.Time) (Incident, error)
	// AppendTimeline adds events to an incident's timeline and returns them
	// with their ids.
	AppendTimeline(ctx context.Context, events ...TimelineEvent) ([]TimelineEvent, error)
	// ListTimeline returns one page of an incident's timeline in (at, id)
	// order and the cursor of the next page, empty when there is none.
	ListTimeline(ctx context.Context, q TimelineQuery) (items []TimelineEvent, nextCursor string, err error)
	// AddNote adds a note (ID and CreatedAt filled when empty) and a "note"
	// timeline event.
	AddNote(ctx context.Context, n Note) (Note, error)
	// ListNotes returns an incident's notes, oldest first.
	ListNotes(ctx context.Context, incidentID string) ([]Note, error)
	// DeleteNote deletes a note or returns ErrNotFound.
	DeleteNote(ctx context.Context, incidentID, noteID string) error

	// EnqueueEvents stores outbox events and their deliveries. An event
	// whose ID is already stored is skipped, deliveries and all.
	EnqueueEvents(ctx context.Context, events ...OutboxEvent) error
	// LeaseDeliveries leases up to n pending deliveries that are due and not
	// leased by anyone else (or whose lease expired) to owner for leaseFor,
	// oldest due first.
	LeaseDeliveries(ctx context.Context, owner string, n int, leaseFor time.Duration) ([]Delivery, error)
	// CompleteDelivery marks a leased delivery delivered and logs the attempt.
	CompleteDelivery(ctx context.Context, owner string, a DeliveryAttempt) error
	// RetryDelivery logs a failed attempt and schedules the next at next,
	// releasing the lease.
	RetryDelivery(ctx context.Context, owner string, a DeliveryAttempt, next time.Time) error
	// FailDelivery logs a failed attempt and gives up on the delivery.
	FailDelivery(ctx context.Context, owner string, a DeliveryAttempt) error
	// ReleaseDeliveries gives back owner's leases of the pending deliveries
	// ids without an attempt (a worker shutting down), so any worker can
	// take them at once; others' leases are left alone.
	ReleaseDeliveries(ctx context.Context, owner string, ids ...string) error
	// GetDelivery returns one delivery or ErrNotFound.
	GetDelivery(ctx context.Context, id string) (Delivery, error)
	// ListDeliveries lists deliveries, newest first.
	ListDeliveries(ctx context.Context, q DeliveryQuery) ([]Delivery, error)
	// ListDeliveryAttempts returns a delivery's attempt log, oldest first.
	ListDeliveryAttempts(ctx context.Context, deliveryID string) ([]DeliveryAttempt, error)
	// PruneOutbox deletes events created before olderThan whose deliveries are
	// all finished (delivered or failed).
	PruneOutbox(ctx context.Context, olderThan time.Time) (int64, error)

	// InsertDeployEvent stores a deploy event (ID and CreatedAt filled when empty).
	InsertDeployEvent(ctx context.Context, e DeployEvent) (DeployEvent, error)
	// ListDeployEvents lists deploy events, newest deployment first.
	ListDeployEvents(ctx context.Context, q DeployEventQuery) ([]DeployEvent, error)

	// RecordDNS stores an observed DNS answer; Changed is computed against the
	// previous observation of the same monitor and record type (the first
	// observation is not a change). It returns the stored record.
	RecordDNS(ctx context.Context, r DNSRecord) (DNSRecord, error)
	// ListDNSRecords returns a monitor's observations, newest first; with
	// changedOnly only the changes.
	ListDNSRecords(ctx context.Context, monitorID string, changedOnly bool, limit int) ([]DNSRecord, error)

	// PauseMonitor opens a pause window; a no-op when one is already open.
	PauseMonitor(ctx context.Context, monitorID string, at time.Time) error
	// ResumeMonitor closes the open pause window; a no-op when none is open.
	ResumeMonitor(ctx context.Context, monitorID string, at time.Time) error
	// ListPauseWindows returns the windows that overlap [since, now), oldest first.
	ListPauseWindows(ctx context.Context, monitorID string, since time.Time) ([]PauseWindow, error)

	// RecordHeartbeat stores one heartbeat ping.
	RecordHeartbeat(ctx context.Context, p HeartbeatPing) error
	// ListHeartbeats returns a monitor's pings, newest first.
	ListHeartbeats(ctx context.Context, monitorID string, limit int) ([]HeartbeatPing, error)

	// TouchAPIKey records that an API key was used at at (kept when later).
	TouchAPIKey(ctx context.Context, keyID string, at time.Time) error
	// APIKeyLastUsed returns the last use of each known key among keyIDs.
	APIKeyLastUsed(ctx context.Context, keyIDs ...string) (map[string]time.Time, error)

	// ExpiryStore keeps certificate observations, domain lookups and sent
	// expiry notices.
	ExpiryStore
	// AssistStore keeps AI incident assist content, drafts and usage.
	AssistStore
	// ThirdPartyStore keeps third-party status subscriptions and poller state.
	ThirdPartyStore
	// OTelStore keeps telemetry export settings and delivery status.
	OTelStore
	// SiteHealthStore keeps website health sites, runs and issues.
	SiteHealthStore
	// AlertRecipientStore keeps alert email recipients' confirmation state.
	AlertRecipientStore
	// GenerationStore keeps a monitor's history across delete and re-create.
	GenerationStore

	// AddSubscriber stores a new status page subscriber (ID and CreatedAt
	// filled when empty). When the page already has one with the same channel
	// and address it returns that one with ErrSubscriberExists.
	AddSubscriber(ctx context.Context, s Subscriber) (Subscriber, error)
	// RenewSubscriberToken replaces the confirmation token hash of a pending
	// subscriber and records when the confirmation was sent; ErrNotFound when
	// there is no pending subscriber with the id.
	RenewSubscriberToken(ctx context.Context, id, tokenHash string, sentAt time.Time) error
	// ConfirmSubscriber confirms the pending subscriber whose confirmation
	// token hashes to tokenHash and forgets the hash; ErrNotFound when none
	// does.
	ConfirmSubscriber(ctx context.Context, tokenHash string, at time.Time) (Subscriber, error)
	// GetSubscriber returns one subscriber or ErrNotFound.
	GetSubscriber(ctx context.Context, id string) (Subscriber, error)
	// ListSubscribers returns a page's subscribers, oldest first; with
	// confirmedOnly only the confirmed ones.
	ListSubscribers(ctx context.Context, pageUID string, confirmedOnly bool) ([]Subscriber, error)
	// DeleteSubscriber deletes a subscriber or returns ErrNotFound.
	DeleteSubscriber(ctx context.Context, id string) error
	// PruneSubscribers deletes the pending subscribers whose confirmation was
	// last sent (or, when none was, that were created) before olderThan:
	// confirmations that were never clicked.
	PruneSubscribers(ctx context.Context, olderThan time.Time) (int64, error)

	// Ping checks that the store answers a query (readiness).
	Ping(ctx context.Context) error

	// Close releases the store; pending writes are flushed first.
	Close() error
}

// AgentPresence is a region's agents in contact with any replica.
type AgentPresence struct {
	// Agents is how many agents were in contact within the window asked.
	Agents int
	// Last is the latest contact of any of them.
	Last time.Time
	// Backlog sums the results each of them still held at its last push
	// (AgentReport.Backlog).
	Backlog int
}

// AgentReport is what one push of a probe agent tells about the results
// the agent holds back (probeapi.ResultBatch's Backlog and Replayed).
// Every replica writes the reports of the agents that reach it, so the
// region's figures are the sum over replicas.
type AgentReport struct {
	Region, Agent string
	// At is when the push arrived.
	At time.Time
	// Backlog is how many results the agent still held after the push.
	Backlog int
	// Replayed is how many results delivered late this report adds to the
	// region's total (a replica may add several pushes' in one report).
	Replayed int
}

// RegionReplays is what a region's agents delivered late, across replicas:
// results whose push had failed (a cut link, a refused token) or that a
// restarted agent found on disk.
type RegionReplays struct {
	// Results counts them since the store was created.
	Results int64
	// Last is when a replica last recorded some.
	Last time.Time
}
