package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// MonitorView implements store.Store.
func (s *judgeStore) MonitorView(ctx context.Context, monitorID string, vq store.ViewQuery) (store.MonitorView, error) {
	return s.monitorView(ctx, s.B.Reader(), monitorID, vq)
}

// monitorView reads, in two statements, the start of the monitor's current
// run of results (two probes of checks_monitor_time), its judgement
// document and open incident id, then the newest check of each region (one
// probe each on checks_monitor_region_time); the open incident itself only
// when there is one. Judging every monitor of every batch makes this the
// engine's hottest read, hence few statements.
func (s *judgeStore) monitorView(ctx context.Context, q Querier, monitorID string, vq store.ViewQuery) (store.MonitorView, error) {
	var out store.MonitorView
	edge := s.D.Time(store.UTC(vq.Now.Add(-vq.Gap)))
	var first, before *time.Time
	var state, openID *string
	if err := q.QueryRow(ctx, `SELECT
 (SELECT min(checked_at) FROM checks WHERE monitor_id = ? AND checked_at > ?),
 (SELECT max(checked_at) FROM checks WHERE monitor_id = ? AND checked_at <= ?),
 (SELECT state FROM monitor_judgements WHERE monitor_id = ?),
 (SELECT id FROM incidents WHERE monitor_id = ? AND resolved_at IS NULL)`,
		monitorID, edge, monitorID, edge, monitorID, monitorID).
		Scan(s.D.ScanNullTime(&first), s.D.ScanNullTime(&before), &state, &openID); err != nil {
		return out, fmt.Errorf("read judgement of %s: %w", monitorID, err)
	}
	if first != nil && (before == nil || first.Sub(*before) > vq.Gap) {
		out.RunSince = first
	}
	if state != nil {
		out.State = []byte(*state)
	}
	if openID != nil {
		inc, err := s.incidents.getIncident(ctx, q, *openID)
		if err != nil {
			return out, err
		}
		out.Open = &inc
	}
	if regions := vq.Regions; len(regions) > 0 {
		parts := make([]string, len(regions))
		args := make([]any, 0, 2*len(regions))
		for i, r := range regions {
			parts[i] = fmt.Sprintf("SELECT * FROM (SELECT %s FROM checks WHERE monitor_id = ? AND region = ? ORDER BY checked_at DESC, id DESC LIMIT 1) AS r%d", checkCols, i)
			args = append(args, monitorID, r)
		}
		cs, err := s.checks.queryChecksIn(ctx, q, strings.Join(parts, " UNION ALL "), args...)
		if err != nil {
			return out, fmt.Errorf("latest checks of %s: %w", monitorID, err)
		}
		out.Checks = cs
	}
	return out, nil
}

// Judge implements store.Store: fn runs in one write transaction that first
// takes the monitor's lock (Dialect.LockMonitor).
func (s *judgeStore) Judge(ctx context.Context, monitorID string, fn func(store.JudgeTx) error) error {
	return s.B.Write(ctx, func(q Querier) error {
		if s.D.LockMonitor != "" {
			if _, err := q.Exec(ctx, s.D.LockMonitor, monitorID); err != nil {
				return fmt.Errorf("lock monitor %s: %w", monitorID, err)
			}
		}
		return fn(judgeTx{s: s, q: q, monitorID: monitorID})
	})
}

// judgeTx is store.JudgeTx on one transaction.
type judgeTx struct {
	s         *judgeStore
	q         Querier
	monitorID string
}

func (j judgeTx) View(ctx context.Context, vq store.ViewQuery) (store.MonitorView, error) {
	return j.s.monitorView(ctx, j.q, j.monitorID, vq)
}

func (j judgeTx) OpenedSince(ctx context.Context, since time.Time) (int, error) {
	var n int
	if err := j.q.QueryRow(ctx, "SELECT count(*) FROM incidents WHERE monitor_id = ? AND started_at > ?",
		j.monitorID, j.s.D.Time(store.UTC(since))).Scan(&n); err != nil {
		return 0, fmt.Errorf("count recent incidents of %s: %w", j.monitorID, err)
	}
	return n, nil
}

func (j judgeTx) Open(ctx context.Context, inc store.Incident, events ...store.OutboxEvent) (store.Incident, error) {
	if inc.MonitorID != j.monitorID {
		return inc, fmt.Errorf("%w: judgement of %s cannot open an incident of %s", store.ErrInvalid, j.monitorID, inc.MonitorID)
	}
	return j.s.incidents.openIncident(ctx, j.q, inc, events)
}

func (j judgeTx) Resolve(ctx context.Context, id string, at time.Time, events ...store.OutboxEvent) (store.Incident, error) {
	return j.s.incidents.resolveIncident(ctx, j.q, id, at, false, "", events)
}

func (j judgeTx) Enqueue(ctx context.Context, events ...store.OutboxEvent) error {
	return j.s.enqueue(ctx, j.q, events)
}

func (j judgeTx) SetState(ctx context.Context, state []byte) error {
	var err error
	if len(state) == 0 {
		_, err = j.q.Exec(ctx, "DELETE FROM monitor_judgements WHERE monitor_id = ?", j.monitorID)
	} else {
		_, err = j.q.Exec(ctx, `INSERT INTO monitor_judgements (monitor_id, state) VALUES (?, ?)
 ON CONFLICT (monitor_id) DO UPDATE SET state = excluded.state`, j.monitorID, string(state))
	}
	if err != nil {
		return fmt.Errorf("write judgement state of %s: %w", j.monitorID, err)
	}
	return nil
}

// RecordAgentContact implements store.Store.
func (s *judgeStore) RecordAgentContact(ctx context.Context, region, agent string, at time.Time) error {
	t := s.D.Time(store.UTC(at))
	err := s.B.Write(ctx, func(q Querier) error {
		if _, err := q.Exec(ctx, `INSERT INTO agent_contacts (region, agent, last_contact) VALUES (?, ?, ?)
 ON CONFLICT (region, agent) DO UPDATE SET last_contact = excluded.last_contact
 WHERE excluded.last_contact > agent_contacts.last_contact`, region, agent, t); err != nil {
			return err
		}
		_, err := q.Exec(ctx, "DELETE FROM agent_contacts WHERE last_contact < ?", s.D.Time(store.UTC(at.Add(-7*24*time.Hour))))
		return err
	})
	if err != nil {
		return fmt.Errorf("record agent contact: %w", err)
	}
	return nil
}

// RecordAgentReport implements store.Store: in one transaction, the
// contact, the backlog (unless a later report of the agent is stored; the
// writes of two replicas may arrive out of order) and the region's
// replayed results.
func (s *judgeStore) RecordAgentReport(ctx context.Context, r store.AgentReport) error {
	if r.Backlog < 0 || r.Replayed < 0 {
		return fmt.Errorf("%w: agent report of %s/%s: negative backlog or replayed count", store.ErrInvalid, r.Region, r.Agent)
	}
	t := s.D.Time(store.UTC(r.At))
	err := s.B.Write(ctx, func(q Querier) error {
		if _, err := q.Exec(ctx, `INSERT INTO agent_contacts (region, agent, last_contact, backlog, backlog_at) VALUES (?, ?, ?, ?, ?)
 ON CONFLICT (region, agent) DO UPDATE SET
 last_contact = CASE WHEN excluded.last_contact > agent_contacts.last_contact THEN excluded.last_contact ELSE agent_contacts.last_contact END,
 backlog = CASE WHEN agent_contacts.backlog_at IS NULL OR excluded.backlog_at >= agent_contacts.backlog_at THEN excluded.backlog ELSE agent_contacts.backlog END,
 backlog_at = CASE WHEN agent_contacts.backlog_at IS NULL OR excluded.backlog_at >= agent_contacts.backlog_at THEN excluded.backlog_at ELSE agent_contacts.backlog_at END`,
			r.Region, r.Agent, t, r.Backlog, t); err != nil {
			return err
		}
		if r.Replayed == 0 {
			return nil
		}
		_, err := q.Exec(ctx, `INSERT INTO region_replays (region, results, last_replay) VALUES (?, ?, ?)
 ON CONFLICT (region) DO UPDATE SET results = region_replays.results + excluded.results,
 last_replay = CASE WHEN excluded.last_replay > region_replays.last_replay THEN excluded.last_replay ELSE region_replays.last_replay END`,
			r.Region, r.Replayed, t)
		return err
	})
	if err != nil {
		return fmt.Errorf("record agent report: %w", err)
	}
	return nil
}

// RegionReplays implements store.Store.
func (s *judgeStore) RegionReplays(ctx context.Context) (map[string]store.RegionReplays, error) {
	rows, err := s.B.Reader().Query(ctx, "SELECT region, results, last_replay FROM region_replays")
	if err != nil {
		return nil, fmt.Errorf("region replays: %w", err)
	}
	defer rows.Close()
	out := map[string]store.RegionReplays{}
	for rows.Next() {
		var region string
		var r store.RegionReplays
		if err := rows.Scan(&region, &r.Results, s.D.ScanTime(&r.Last)); err != nil {
			return nil, fmt.Errorf("region replays: %w", err)
		}
		out[region] = r
	}
	return out, rows.Err()
}

// AgentsOnline implements store.Store.
func (s *judgeStore) AgentsOnline(ctx context.Context, since time.Time) (map[string]store.AgentPresence, error) {
	rows, err := s.B.Reader().Query(ctx, "SELECT region, agent, last_contact, backlog FROM agent_contacts WHERE last_contact >= ?",
		s.D.Time(store.UTC(since)))
	if err != nil {
		return nil, fmt.Errorf("agents online: %w", err)
	}
	defer rows.Close()
	out := map[string]store.AgentPresence{}
	for rows.Next() {
		var region, agent string
		var last time.Time
		var backlog int
		if err := rows.Scan(&region, &agent, s.D.ScanTime(&last), &backlog); err != nil {
			return nil, fmt.Errorf("agents online: %w", err)
		}
		p := out[region]
		p.Agents++
		p.Backlog += backlog
		if last.After(p.Last) {
			p.Last = last
		}
		out[region] = p
	}
	return out, rows.Err()
}

// UnsettledMonitors implements store.Store: per chunk of ids, one statement
// on the open-incident index and the judgement documents' primary key.
func (s *judgeStore) UnsettledMonitors(ctx context.Context, monitorIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	for lo := 0; lo < len(monitorIDs); lo += manyChunk {
		ids := monitorIDs[lo:min(lo+manyChunk, len(monitorIDs))]
		in := placeholders(len(ids))
		args := make([]any, 0, 2*len(ids))
		for range 2 {
			for _, id := range ids {
				args = append(args, id)
			}
		}
		if err := s.unsettled(ctx, out, ` AND monitor_id IN `+in, ` WHERE monitor_id IN `+in, args...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AllUnsettledMonitors implements store.Store: one statement, as long as
// the open incidents and judgement documents are.
func (s *judgeStore) AllUnsettledMonitors(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	if err := s.unsettled(ctx, out, "", ""); err != nil {
		return nil, err
	}
	return out, nil
}

// unsettled adds to out the monitors with an open incident (incidentsWhere
// narrows them) or a judgement document (judgementsWhere).
func (s *judgeStore) unsettled(ctx context.Context, out map[string]bool, incidentsWhere, judgementsWhere string, args ...any) error {
	rows, err := s.B.Reader().Query(ctx, `SELECT monitor_id FROM incidents WHERE resolved_at IS NULL`+incidentsWhere+`
 UNION SELECT monitor_id FROM monitor_judgements`+judgementsWhere, args...)
	if err != nil {
		return fmt.Errorf("read unsettled monitors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("read unsettled monitors: %w", err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read unsettled monitors: %w", err)
	}
	return nil
}
