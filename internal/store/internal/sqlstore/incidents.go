package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

const incidentCols = `id, namespace, monitor_id, monitor_name, monitor_url, monitor_type, started_at, resolved_at,
 alert_suppressed, suppression_reason, is_flapping, confirmations, confirming_regions, regions_total,
 acknowledged_at, acknowledged_by, snoozed_until, resolved_manually, cause, issue_url, postmortem, runbook`

func (s *incidentStore) scanIncident(r interface{ Scan(...any) error }) (store.Incident, error) {
	var i store.Incident
	var regions, runbook []byte
	if err := r.Scan(&i.ID, &i.Namespace, &i.MonitorID, &i.MonitorName, &i.MonitorURL, &i.MonitorType,
		s.D.ScanTime(&i.StartedAt), s.D.ScanNullTime(&i.ResolvedAt),
		&i.AlertSuppressed, &i.SuppressionReason, &i.IsFlapping, &i.Confirmations, &regions, &i.RegionsTotal,
		s.D.ScanNullTime(&i.AcknowledgedAt), &i.AcknowledgedBy, s.D.ScanNullTime(&i.SnoozedUntil), &i.ResolvedManually,
		&i.Cause, &i.IssueURL, &i.Postmortem, &runbook); err != nil {
		return i, err
	}
	var err error
	if i.ConfirmingRegions, err = parseList(regions); err != nil {
		return i, err
	}
	if len(runbook) > 0 {
		i.Runbook = &store.IncidentRunbook{}
		if err := json.Unmarshal(runbook, i.Runbook); err != nil {
			return i, fmt.Errorf("decode runbook: %w", err)
		}
	}
	return i, nil
}

func (s *incidentStore) getIncident(ctx context.Context, q Querier, id string) (store.Incident, error) {
	inc, err := s.scanIncident(q.QueryRow(ctx, "SELECT "+incidentCols+" FROM incidents WHERE id = ?", id))
	if err != nil {
		return inc, fmt.Errorf("get incident %s: %w", id, err)
	}
	return inc, nil
}

// GetIncident implements store.Store.
func (s *incidentStore) GetIncident(ctx context.Context, id string) (store.Incident, error) {
	return s.getIncident(ctx, s.B.Reader(), id)
}

// GetOpenIncident implements store.Store.
func (s *incidentStore) GetOpenIncident(ctx context.Context, monitorID string) (store.Incident, error) {
	return s.getOpenIncident(ctx, s.B.Reader(), monitorID)
}

func (s *incidentStore) getOpenIncident(ctx context.Context, q Querier, monitorID string) (store.Incident, error) {
	inc, err := s.scanIncident(q.QueryRow(ctx,
		"SELECT "+incidentCols+" FROM incidents WHERE monitor_id = ? AND resolved_at IS NULL", monitorID))
	if err != nil {
		return inc, fmt.Errorf("get open incident of %s: %w", monitorID, err)
	}
	return inc, nil
}

func (s *incidentStore) appendTimeline(ctx context.Context, q Querier, incidentID, kind string, at time.Time, data any) error {
	var doc any
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return fmt.Errorf("encode timeline data: %w", err)
		}
		doc = string(b)
	}
	_, err := q.Exec(ctx, "INSERT INTO incident_events (incident_id, kind, at, data) VALUES (?, ?, ?, ?)",
		incidentID, kind, s.D.Time(store.UTC(at)), doc)
	if err != nil {
		return fmt.Errorf("append timeline: %w", err)
	}
	return nil
}

// OpenIncident implements store.Store.
func (s *incidentStore) OpenIncident(ctx context.Context, inc store.Incident, events ...store.OutboxEvent) (store.Incident, error) {
	var opened store.Incident
	err := s.B.Write(ctx, func(q Querier) error {
		var err error
		opened, err = s.openIncident(ctx, q, inc, events)
		return err
	})
	return opened, err
}

// openIncident stores a new open incident with its "opened" timeline event
// and events, in q's transaction.
func (s *incidentStore) openIncident(ctx context.Context, q Querier, inc store.Incident, events []store.OutboxEvent) (store.Incident, error) {
	if inc.MonitorID == "" {
		return inc, fmt.Errorf("%w: incident needs monitor_id", store.ErrInvalid)
	}
	if inc.ID == "" {
		inc.ID = uuid.NewString()
	}
	if inc.StartedAt.IsZero() {
		inc.StartedAt = s.now()
	}
	inc.StartedAt = store.UTC(inc.StartedAt)
	inc.ResolvedAt = nil
	if inc.ConfirmingRegions == nil {
		inc.ConfirmingRegions = []string{}
	}
	var runbook any
	if inc.Runbook != nil {
		b, _ := json.Marshal(inc.Runbook)
		runbook = string(b)
	}
	err := func() error {
		var n int64
		if err := q.QueryRow(ctx, "SELECT count(*) FROM incidents WHERE id = ?", inc.ID).Scan(&n); err != nil {
			return fmt.Errorf("check incident id: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("%w: incident id %s exists", store.ErrInvalid, inc.ID)
		}
		// The only other unique constraint is the one open incident per monitor.
		_, err := q.Exec(ctx, `INSERT INTO incidents (`+incidentCols+`) VALUES `+placeholders(22),
			inc.ID, inc.Namespace, inc.MonitorID, inc.MonitorName, inc.MonitorURL, inc.MonitorType,
			s.D.Time(inc.StartedAt), nil, inc.AlertSuppressed, inc.SuppressionReason, inc.IsFlapping,
			inc.Confirmations, jsonList(inc.ConfirmingRegions), inc.RegionsTotal,
			s.nullTime(inc.AcknowledgedAt), inc.AcknowledgedBy, s.nullTime(inc.SnoozedUntil), false,
			inc.Cause, inc.IssueURL, inc.Postmortem, runbook)
		if err != nil {
			if s.D.IsUniqueViolation(err) {
				return store.ErrIncidentOpen
			}
			return fmt.Errorf("insert incident: %w", err)
		}
		if err := s.appendTimeline(ctx, q, inc.ID, store.TimelineOpened, inc.StartedAt, map[string]any{
			"confirming_regions": inc.ConfirmingRegions, "cause": inc.Cause,
		}); err != nil {
			return err
		}
		return s.enqueue(ctx, q, events)
	}()
	if err != nil {
		if errors.Is(err, store.ErrIncidentOpen) {
			return inc, err
		}
		return inc, fmt.Errorf("open incident: %w", err)
	}
	return inc, nil
}

// ResolveIncident implements store.Store.
func (s *incidentStore) ResolveIncident(ctx context.Context, id string, at time.Time, manual bool, note string, events ...store.OutboxEvent) (store.Incident, error) {
	var inc store.Incident
	err := s.B.Write(ctx, func(q Querier) error {
		var err error
		inc, err = s.resolveIncident(ctx, q, id, at, manual, note, events)
		return err
	})
	return inc, err
}

// resolveIncident resolves an open incident in q's transaction.
func (s *incidentStore) resolveIncident(ctx context.Context, q Querier, id string, at time.Time, manual bool, note string, events []store.OutboxEvent) (store.Incident, error) {
	at = store.UTC(at)
	n, err := q.Exec(ctx, "UPDATE incidents SET resolved_at = ?, resolved_manually = ? WHERE id = ? AND resolved_at IS NULL",
		s.D.Time(at), manual, id)
	if err != nil {
		return store.Incident{}, fmt.Errorf("resolve incident: %w", err)
	}
	if n == 0 {
		if inc, err := s.getIncident(ctx, q, id); err != nil {
			return inc, err
		}
		return store.Incident{}, store.ErrIncidentResolved
	}
	if err := s.appendTimeline(ctx, q, id, store.TimelineResolved, at, map[string]any{"manual": manual, "note": note}); err != nil {
		return store.Incident{}, err
	}
	if note != "" {
		if _, err := s.addNote(ctx, q, store.Note{IncidentID: id, Body: note, CreatedAt: at}); err != nil {
			return store.Incident{}, err
		}
	}
	if err := s.enqueue(ctx, q, events); err != nil {
		return store.Incident{}, err
	}
	return s.getIncident(ctx, q, id)
}

// UpdateIncident implements store.Store.
func (s *incidentStore) UpdateIncident(ctx context.Context, id string, u store.IncidentUpdate, events ...store.OutboxEvent) (store.Incident, error) {
	var set []string
	var args []any
	add := func(col string, v any) { set = append(set, col+" = ?"); args = append(args, v) }
	if u.AlertSuppressed != nil {
		add("alert_suppressed", *u.AlertSuppressed)
	}
	if u.SuppressionReason != nil {
		add("suppression_reason", *u.SuppressionReason)
	}
	if u.IsFlapping != nil {
		add("is_flapping", *u.IsFlapping)
	}
	if u.Confirmations != nil {
		add("confirmations", *u.Confirmations)
	}
	if u.ConfirmingRegions != nil {
		add("confirming_regions", jsonList(u.ConfirmingRegions))
	}
	if u.RegionsTotal != nil {
		add("regions_total", *u.RegionsTotal)
	}
	if u.IssueURL != nil {
		add("issue_url", *u.IssueURL)
	}
	var inc store.Incident
	err := s.B.Write(ctx, func(q Querier) error {
		if len(set) > 0 {
			n, err := q.Exec(ctx, "UPDATE incidents SET "+strings.Join(set, ", ")+" WHERE id = ?", append(args, id)...)
			if err != nil {
				return fmt.Errorf("update incident: %w", err)
			}
			if n == 0 {
				return fmt.Errorf("update incident %s: %w", id, store.ErrNotFound)
			}
		}
		var err error
		if inc, err = s.getIncident(ctx, q, id); err != nil {
			return err
		}
		return s.enqueue(ctx, q, events)
	})
	return inc, err
}

// AcknowledgeIncident implements store.Store.
func (s *incidentStore) AcknowledgeIncident(ctx context.Context, id, by string, at time.Time, events ...store.OutboxEvent) (store.Incident, error) {
	at = store.UTC(at)
	var inc store.Incident
	err := s.B.Write(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, "UPDATE incidents SET acknowledged_at = ?, acknowledged_by = ? WHERE id = ? AND acknowledged_at IS NULL",
			s.D.Time(at), by, id)
		if err != nil {
			return fmt.Errorf("acknowledge incident: %w", err)
		}
		if inc, err = s.getIncident(ctx, q, id); err != nil {
			return err
		}
		if n == 0 {
			return store.ErrIncidentAcknowledged
		}
		if err := s.appendTimeline(ctx, q, id, store.TimelineAcknowledged, at, map[string]any{"by": by}); err != nil {
			return err
		}
		return s.enqueue(ctx, q, events)
	})
	return inc, err
}

// SnoozeIncident implements store.Store.
func (s *incidentStore) SnoozeIncident(ctx context.Context, id string, until *time.Time) (store.Incident, error) {
	var inc store.Incident
	err := s.B.Write(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, "UPDATE incidents SET snoozed_until = ? WHERE id = ?", s.nullTime(until), id)
		if err != nil {
			return fmt.Errorf("snooze incident: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("snooze incident %s: %w", id, store.ErrNotFound)
		}
		kind, data := store.TimelineUnsnoozed, map[string]any{}
		if until != nil {
			kind, data = store.TimelineSnoozed, map[string]any{"until": store.UTC(*until)}
		}
		if err := s.appendTimeline(ctx, q, id, kind, s.now(), data); err != nil {
			return err
		}
		inc, err = s.getIncident(ctx, q, id)
		return err
	})
	return inc, err
}

// SetPostmortem implements store.Store.
func (s *incidentStore) SetPostmortem(ctx context.Context, id, postmortem string) error {
	return s.B.Write(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, "UPDATE incidents SET postmortem = ? WHERE id = ?", postmortem, id)
		if err != nil {
			return fmt.Errorf("set postmortem: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("set postmortem %s: %w", id, store.ErrNotFound)
		}
		return s.appendTimeline(ctx, q, id, store.TimelinePostmortem, s.now(), nil)
	})
}

func (s *incidentStore) writeRunbook(ctx context.Context, q Querier, id string, rb *store.IncidentRunbook, event map[string]any) (store.Incident, error) {
	b, err := json.Marshal(rb)
	if err != nil {
		return store.Incident{}, fmt.Errorf("encode runbook: %w", err)
	}
	n, err := q.Exec(ctx, "UPDATE incidents SET runbook = ? WHERE id = ?", string(b), id)
	if err != nil {
		return store.Incident{}, fmt.Errorf("store runbook: %w", err)
	}
	if n == 0 {
		return store.Incident{}, fmt.Errorf("store runbook of %s: %w", id, store.ErrNotFound)
	}
	if err := s.appendTimeline(ctx, q, id, store.TimelineRunbook, s.now(), event); err != nil {
		return store.Incident{}, err
	}
	return s.getIncident(ctx, q, id)
}

// AttachRunbook implements store.Store.
func (s *incidentStore) AttachRunbook(ctx context.Context, id string, rb store.IncidentRunbook) (store.Incident, error) {
	if rb.Steps == nil {
		rb.Steps = []store.RunbookStep{}
	}
	for i := range rb.Steps {
		if rb.Steps[i].ID == "" {
			rb.Steps[i].ID = uuid.NewString()
		}
	}
	var inc store.Incident
	err := s.B.Write(ctx, func(q Querier) error {
		var err error
		inc, err = s.writeRunbook(ctx, q, id, &rb, map[string]any{"runbook_id": rb.RunbookID, "action": "attached"})
		return err
	})
	return inc, err
}

// SetRunbookStep implements store.Store. The read-modify-write runs in one
// write transaction (the row is locked on PostgreSQL).
func (s *incidentStore) SetRunbookStep(ctx context.Context, id, stepID string, completed bool, at time.Time) (store.Incident, error) {
	var inc store.Incident
	err := s.B.Write(ctx, func(q Querier) error {
		if s.D.LockRows {
			if _, err := q.Exec(ctx, "SELECT id FROM incidents WHERE id = ? FOR UPDATE", id); err != nil {
				return fmt.Errorf("lock incident: %w", err)
			}
		}
		cur, err := s.getIncident(ctx, q, id)
		if err != nil {
			return err
		}
		if cur.Runbook == nil {
			return fmt.Errorf("incident %s has no runbook: %w", id, store.ErrNotFound)
		}
		found := false
		for i := range cur.Runbook.Steps {
			st := &cur.Runbook.Steps[i]
			if st.ID != stepID {
				continue
			}
			found = true
			st.Completed = completed
			st.CompletedAt = nil
			if completed {
				t := store.UTC(at)
				st.CompletedAt = &t
			}
		}
		if !found {
			return fmt.Errorf("runbook step %s: %w", stepID, store.ErrNotFound)
		}
		inc, err = s.writeRunbook(ctx, q, id, cur.Runbook, map[string]any{"step_id": stepID, "is_completed": completed})
		return err
	})
	return inc, err
}

// incidentFilter builds the WHERE clause of a list query without its status.
func (s *incidentStore) incidentFilter(q store.IncidentQuery) (string, []any) {
	where := []string{"1 = 1"}
	var args []any
	if q.Namespace != "" {
		where = append(where, "namespace = ?")
		args = append(args, q.Namespace)
	}
	if q.MonitorID != "" {
		where = append(where, "monitor_id = ?")
		args = append(args, q.MonitorID)
	} else {
		// A deleted monitor's incidents wait, out of the lists, for a
		// re-created monitor to adopt them (store.GenerationStore).
		where = append(where, "NOT EXISTS (SELECT 1 FROM monitor_generations g WHERE g.uid = incidents.monitor_id AND g.retired_at IS NOT NULL)")
	}
	if q.From != nil {
		where = append(where, "started_at >= ?")
		args = append(args, s.D.Time(store.UTC(*q.From)))
	}
	if q.To != nil {
		where = append(where, "started_at < ?")
		args = append(args, s.D.Time(store.UTC(*q.To)))
	}
	if q.Q != "" {
		where = append(where, "("+s.D.Contains("monitor_name", "?")+" OR "+s.D.Contains("monitor_url", "?")+")")
		args = append(args, q.Q, q.Q)
	}
	return strings.Join(where, " AND "), args
}

// incidentStatusCond is the SQL condition of each list filter.
var incidentStatusCond = map[store.IncidentStatus]string{
	store.IncidentOngoing:      "resolved_at IS NULL",
	store.IncidentResolved:     "resolved_at IS NOT NULL",
	store.IncidentSuppressed:   "alert_suppressed",
	store.IncidentAcknowledged: "acknowledged_at IS NOT NULL",
}

// ListIncidents implements store.Store.
func (s *incidentStore) ListIncidents(ctx context.Context, q store.IncidentQuery) (store.IncidentList, error) {
	out := store.IncidentList{Items: []store.Incident{}}
	offset := store.IncidentPage(&q)
	where, args := s.incidentFilter(q)
	r := s.B.Reader()
	var all, ongoing, resolved, suppressed int64
	err := r.QueryRow(ctx, `SELECT count(*),
 CAST(coalesce(sum(CASE WHEN resolved_at IS NULL THEN 1 ELSE 0 END),0) AS BIGINT),
 CAST(coalesce(sum(CASE WHEN resolved_at IS NOT NULL THEN 1 ELSE 0 END),0) AS BIGINT),
 CAST(coalesce(sum(CASE WHEN alert_suppressed THEN 1 ELSE 0 END),0) AS BIGINT)
 FROM incidents WHERE `+where, args...).Scan(&all, &ongoing, &resolved, &suppressed)
	if err != nil {
		return out, fmt.Errorf("count incidents: %w", err)
	}
	out.Counts = store.IncidentCounts{All: int(all), Ongoing: int(ongoing), Resolved: int(resolved), Suppressed: int(suppressed)}
	out.Total = out.Counts.All
	if q.Status != "" {
		cond, ok := incidentStatusCond[q.Status]
		if !ok {
			return out, fmt.Errorf("%w: incident status %q", store.ErrInvalid, q.Status)
		}
		where += " AND " + cond
		var total int64
		if err := r.QueryRow(ctx, "SELECT count(*) FROM incidents WHERE "+where, args...).Scan(&total); err != nil {
			return out, fmt.Errorf("count incidents: %w", err)
		}
		out.Total = int(total)
	}
	rows, err := r.Query(ctx, "SELECT "+incidentCols+" FROM incidents WHERE "+where+
		" ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?", append(args, q.PageSize, offset)...)
	if err != nil {
		return out, fmt.Errorf("list incidents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		inc, err := s.scanIncident(rows)
		if err != nil {
			return out, fmt.Errorf("scan incident: %w", err)
		}
		out.Items = append(out.Items, inc)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("list incidents: %w", err)
	}
	return out, nil
}

// AppendTimeline implements store.Store.
func (s *incidentStore) AppendTimeline(ctx context.Context, events ...store.TimelineEvent) ([]store.TimelineEvent, error) {
	out := make([]store.TimelineEvent, 0, len(events))
	err := s.B.Write(ctx, func(q Querier) error {
		out = out[:0]
		for _, e := range events {
			if e.At.IsZero() {
				e.At = s.now()
			}
			e.At = store.UTC(e.At)
			if err := q.QueryRow(ctx, "INSERT INTO incident_events (incident_id, kind, at, data) VALUES (?, ?, ?, ?) RETURNING id",
				e.IncidentID, e.Kind, s.D.Time(e.At), jsonArg(e.Data)).Scan(&e.ID); err != nil {
				return fmt.Errorf("append timeline to %s: %w", e.IncidentID, err)
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListTimeline implements store.Store.
func (s *incidentStore) ListTimeline(ctx context.Context, q store.TimelineQuery) ([]store.TimelineEvent, string, error) {
	limit := store.Limit(q.Limit, 200, 1000)
	where := "incident_id = ?"
	args := []any{q.IncidentID}
	if q.Cursor != "" {
		at, id, err := store.DecodeTimelineCursor(q.Cursor)
		if err != nil {
			return nil, "", err
		}
		where += " AND (at > ? OR (at = ? AND id > ?))"
		args = append(args, s.D.Time(at), s.D.Time(at), id)
	}
	rows, err := s.B.Reader().Query(ctx, "SELECT id, incident_id, kind, at, data FROM incident_events WHERE "+where+
		" ORDER BY at, id LIMIT ?", append(args, limit+1)...)
	if err != nil {
		return nil, "", fmt.Errorf("list timeline: %w", err)
	}
	defer rows.Close()
	out := []store.TimelineEvent{}
	for rows.Next() {
		var e store.TimelineEvent
		var data []byte
		if err := rows.Scan(&e.ID, &e.IncidentID, &e.Kind, s.D.ScanTime(&e.At), &data); err != nil {
			return nil, "", fmt.Errorf("scan timeline: %w", err)
		}
		if len(data) > 0 {
			e.Data = json.RawMessage(data)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list timeline: %w", err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = store.EncodeTimelineCursor(last.At, last.ID)
	}
	return out, next, nil
}

func (s *incidentStore) addNote(ctx context.Context, q Querier, n store.Note) (store.Note, error) {
	if n.ID == "" {
		n.ID = uuid.NewString()
	}
	if n.CreatedAt.IsZero() {
		n.CreatedAt = s.now()
	}
	n.CreatedAt = store.UTC(n.CreatedAt)
	if _, err := q.Exec(ctx, "INSERT INTO incident_notes (id, incident_id, body, public, author, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		n.ID, n.IncidentID, n.Body, n.Public, n.Author, s.D.Time(n.CreatedAt)); err != nil {
		return n, fmt.Errorf("insert note: %w", err)
	}
	return n, s.appendTimeline(ctx, q, n.IncidentID, store.TimelineNote, n.CreatedAt, map[string]any{
		"note_id": n.ID, "public": n.Public, "author": n.Author,
	})
}

// AddNote implements store.Store.
func (s *incidentStore) AddNote(ctx context.Context, n store.Note) (store.Note, error) {
	err := s.B.Write(ctx, func(q Querier) error {
		if _, err := s.getIncident(ctx, q, n.IncidentID); err != nil {
			return err
		}
		var err error
		n, err = s.addNote(ctx, q, n)
		return err
	})
	return n, err
}

// ListNotes implements store.Store.
func (s *incidentStore) ListNotes(ctx context.Context, incidentID string) ([]store.Note, error) {
	rows, err := s.B.Reader().Query(ctx, "SELECT id, incident_id, body, public, author, created_at FROM incident_notes WHERE incident_id = ? ORDER BY created_at, id", incidentID)
	if err != nil {
		return nil, fmt.Errorf("list notes: %w", err)
	}
	defer rows.Close()
	out := []store.Note{}
	for rows.Next() {
		var n store.Note
		if err := rows.Scan(&n.ID, &n.IncidentID, &n.Body, &n.Public, &n.Author, s.D.ScanTime(&n.CreatedAt)); err != nil {
			return nil, fmt.Errorf("scan note: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list notes: %w", err)
	}
	return out, nil
}

// DeleteNote implements store.Store.
func (s *incidentStore) DeleteNote(ctx context.Context, incidentID, noteID string) error {
	return s.B.Write(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, "DELETE FROM incident_notes WHERE id = ? AND incident_id = ?", noteID, incidentID)
		if err != nil {
			return fmt.Errorf("delete note: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("delete note %s: %w", noteID, store.ErrNotFound)
		}
		return nil
	})
}
