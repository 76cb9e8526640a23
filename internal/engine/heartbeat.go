package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// NewHeartbeatToken returns a random 32-character token for heartbeat URLs
// (monv1.NewHeartbeatToken, the one place tokens are made).
func NewHeartbeatToken() string { return monv1.NewHeartbeatToken() }

// HeartbeatByToken records a ping for the cron monitor owning token. The
// object holds the token's hash only (monv1.HeartbeatTokenHash), so the
// ping is matched by its hash: one lookup in the cache's index, no read
// of a Secret.
func (e *Engine) HeartbeatByToken(ctx context.Context, token string, p Ping) error {
	if token == "" {
		return ErrUnknownToken
	}
	var list monv1.MonitorList
	if err := e.opts.Client.List(ctx, &list, client.MatchingFields{HeartbeatTokenIndex: monv1.HashHeartbeatToken(token)}); err != nil {
		return fmt.Errorf("find heartbeat token: %w", err)
	}
	if len(list.Items) == 0 {
		return ErrUnknownToken
	}
	// Admission refuses a token another Monitor holds; should two hold one
	// anyway (written before that check), the ping goes to the oldest,
	// whose token the other copied, never to the copy.
	first := slices.MinFunc(list.Items, func(a, b monv1.Monitor) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return e.Heartbeat(ctx, &first, p)
}

// Heartbeat records a ping of cron monitor m: the ping is stored, and its
// outcome becomes the monitor's verdict (a success recovers a missed run, a
// reported failure is a failure at once). Pings of paused monitors are
// ignored.
func (e *Engine) Heartbeat(ctx context.Context, m *monv1.Monitor, p Ping) error {
	if m.Spec.Type != monv1.MonitorCron {
		return fmt.Errorf("monitor %s is not a cron monitor", m.Name)
	}
	if m.Spec.Paused {
		return nil
	}
	if p.At.IsZero() {
		p.At = e.opts.Now()
	}
	p.At = p.At.UTC().Truncate(time.Microsecond)
	if err := e.opts.Store.RecordHeartbeat(ctx, store.HeartbeatPing{
		MonitorID: string(m.UID), At: p.At, OK: p.OK, DurationMs: p.DurationMs, StatusCode: p.StatusCode,
	}); err != nil {
		return fmt.Errorf("record heartbeat: %w", err)
	}
	c := store.Check{ID: uuid.NewString(), MonitorID: string(m.UID), Namespace: m.Namespace, Region: HeartbeatRegion,
		CheckedAt: p.At, Status: store.StatusUp, StatusCode: p.StatusCode}
	if p.DurationMs != nil {
		c.ResponseTimeMs = *p.DurationMs
	}
	if p.ExecutionCount != nil {
		// Kept with the check, so the check history shows what the job
		// reported.
		c.Details = []byte(fmt.Sprintf(`{"execution_count":%d}`, *p.ExecutionCount))
	}
	if !p.OK {
		c.Status, c.ErrorType, c.ErrorMessage = store.StatusDown, "heartbeat_failed", "the job reported a failure"
	}
	if _, err := e.opts.Store.InsertChecks(ctx, []store.Check{c}); err != nil {
		return fmt.Errorf("store heartbeat check: %w", err)
	}
	return e.judge(ctx, m, false, false)
}

// NextExpected is when the next ping of a cron monitor is due at the latest:
// the first scheduled run after the last ping (or after creation) plus grace.
func NextExpected(m *monv1.Monitor, lastPing *time.Time) (time.Time, error) {
	cfg := m.Spec.Cron
	if cfg == nil {
		return time.Time{}, fmt.Errorf("monitor %s has no cron config", m.Name)
	}
	sched, err := monitor.ParseCron(cfg.CronExpression)
	if err != nil {
		return time.Time{}, err
	}
	loc := time.UTC
	if cfg.TimeZone != "" {
		if l, err := time.LoadLocation(cfg.TimeZone); err == nil {
			loc = l
		}
	}
	from := m.CreationTimestamp.Time
	if lastPing != nil && lastPing.After(from) {
		from = *lastPing
	}
	return sched.Next(from.In(loc)).Add(time.Duration(cfg.GraceSeconds) * time.Second), nil
}

// CheckHeartbeats turns overdue cron monitors into failures: when no ping
// arrived by the next scheduled run plus grace, the monitor's verdict becomes
// down (error type missed_heartbeat) and the quorum of its single voter opens
// an incident. The manager calls it periodically.
func (e *Engine) CheckHeartbeats(ctx context.Context) error {
	var list monv1.MonitorList
	if err := e.opts.Client.List(ctx, &list, client.MatchingFields{MonitorTypeIndex: string(monv1.MonitorCron)}); err != nil {
		return fmt.Errorf("list monitors: %w", err)
	}
	now := e.opts.Now()
	for i := range list.Items {
		m := &list.Items[i]
		if m.Spec.Type != monv1.MonitorCron || !m.DeletionTimestamp.IsZero() {
			continue
		}
		if e.notePause(m, now) {
			continue
		}
		if err := e.checkHeartbeat(ctx, m, now); err != nil {
			e.opts.Log.Error(err, "check heartbeat", "monitor", m.Name, "namespace", m.Namespace)
		}
	}
	return nil
}

func (e *Engine) checkHeartbeat(ctx context.Context, m *monv1.Monitor, now time.Time) error {
	// The last ping and the verdict come from the store: pings reach
	// whichever replica the Service picked.
	pings, err := e.opts.Store.ListHeartbeats(ctx, string(m.UID), 1)
	if err != nil {
		return fmt.Errorf("read last heartbeat: %w", err)
	}
	var lastPing *time.Time
	if len(pings) > 0 {
		lastPing = &pings[0].At
	}
	due, err := NextExpected(m, lastPing)
	if err != nil || now.Before(due) {
		return err
	}
	// Overdue counted from the last ping; a pause since then restarts the
	// schedule at its end, so runs skipped while paused are not missed runs.
	if resumed, err := e.lastResume(ctx, m, lastPing); err != nil {
		return err
	} else if resumed != nil {
		if due, err = NextExpected(m, resumed); err != nil || now.Before(due) {
			return err
		}
	}
	view, err := e.opts.Store.MonitorView(ctx, string(m.UID), store.ViewQuery{Regions: []string{HeartbeatRegion}, Now: now, Gap: staleness(m)})
	if err != nil {
		return fmt.Errorf("read heartbeat verdict: %w", err)
	}
	if v := latestOf(view); v != nil && v.ErrorType == "missed_heartbeat" && !v.CheckedAt.Before(due) {
		return nil // this miss is already recorded
	}
	c := store.Check{ID: uuid.NewString(), MonitorID: string(m.UID), Namespace: m.Namespace, Region: HeartbeatRegion,
		CheckedAt: due.UTC().Truncate(time.Microsecond), Status: store.StatusDown, ErrorType: "missed_heartbeat",
		ErrorMessage: "no heartbeat by " + due.UTC().Format(time.RFC3339)}
	if _, err := e.opts.Store.InsertChecks(ctx, []store.Check{c}); err != nil {
		return fmt.Errorf("store missed heartbeat: %w", err)
	}
	return e.judge(ctx, m, true, false)
}

// notePause records pause changes of cron monitor m seen at now and reports
// whether m is paused.
func (e *Engine) notePause(m *monv1.Monitor, now time.Time) bool {
	st := e.state(string(m.UID))
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case m.Spec.Paused:
		st.pausedSeen = true
	case st.pausedSeen:
		st.pausedSeen = false
		at := now
		st.resumedAt = &at
	}
	return m.Spec.Paused
}

// lastResume is the latest resume of m after its last ping (or creation):
// the one this engine saw in the spec, or the end of a pause window the
// REST API recorded (which survives restarts). Nil when there was none.
func (e *Engine) lastResume(ctx context.Context, m *monv1.Monitor, lastPing *time.Time) (*time.Time, error) {
	since := m.CreationTimestamp.Time
	if lastPing != nil && lastPing.After(since) {
		since = *lastPing
	}
	var latest *time.Time
	st := e.state(string(m.UID))
	st.mu.Lock()
	if st.resumedAt != nil && st.resumedAt.After(since) {
		r := *st.resumedAt
		latest = &r
	}
	st.mu.Unlock()
	windows, err := e.opts.Store.ListPauseWindows(ctx, string(m.UID), since)
	if err != nil {
		return nil, fmt.Errorf("list pause windows: %w", err)
	}
	for _, w := range windows {
		if r := w.ResumedAt; r != nil && r.After(since) && (latest == nil || r.After(*latest)) {
			latest = r
		}
	}
	return latest, nil
}
