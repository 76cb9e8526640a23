package engine

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Quorum is the result of counting a monitor's region votes.
//
// The rule: each region's latest verdict votes fail (down), pass (up or
// degraded) or abstains (blocked, unknown, no verdict yet, or stale: older
// than three intervals plus the timeout). An outage is confirmed when at least
// Required regions fail and, unless the monitor turns majority off, the
// failing regions are more than half of the voting ones. Required defaults to
// 2 for monitors with two or more regions and 1 otherwise
// (spec.confirmation.regions overrides it, capped at the region count). The
// incident resolves when the outage is no longer confirmed and at least one
// region passes; while every region abstains the state is kept.
type Quorum struct {
	Total          int
	Voting         int
	Passing        int
	FailingRegions []string
	Abstaining     []string
	Required       int
	Majority       bool
	// Outage: the failure is confirmed.
	Outage bool
	// Recovered: no confirmed failure and at least one region passes.
	Recovered bool
	// LastMileOnly: only ISP vantage points fail while data-centre regions
	// pass; this raises a last-mile notice, not an incident.
	LastMileOnly bool
	FailingISPs  []string
	// FirstFailure is the earliest check time among failing verdicts.
	FirstFailure time.Time
	// Cause is the error type and Reason the message of a failing verdict.
	Cause, Reason string
	Votes         []RegionVote
}

// Rule describes the quorum rule in words.
func (q Quorum) Rule() string {
	rule := fmt.Sprintf("at least %d failing %s", q.Required, regions(q.Required))
	if q.Majority {
		rule += fmt.Sprintf(" and a majority of the %d voting %s", q.Voting, regions(q.Voting))
	}
	return rule
}

func regions(n int) string {
	if n == 1 {
		return "region"
	}
	return "regions"
}

// Summary is a one-line verdict for alerts.
func (q Quorum) Summary() string {
	if len(q.FailingRegions) == 0 {
		return ""
	}
	s := fmt.Sprintf("%d of %d voting regions failing (%s)", len(q.FailingRegions), q.Voting, strings.Join(q.FailingRegions, ", "))
	if q.Cause != "" {
		s += ": " + q.Cause
	}
	return s
}

// RegionFacts is what the engine knows about the probe regions when it
// counts votes.
type RegionFacts struct {
	// ISP maps last-mile region codes to their ISP.
	ISP map[string]string
	// Online holds the regions with an agent in contact (here or, through
	// ProbeRegion status, with another replica).
	Online map[string]bool
	// Created is when each ProbeRegion was created: a region created less
	// than a staleness period ago may have agents still on their way (a
	// fresh install, a new site), so a monitor's warm-up waits for it as
	// for an online one.
	Created map[string]time.Time
}

// mayReport reports whether region code is expected to send results: an
// agent of it is online, or it was created within the last staleAfter.
func (f RegionFacts) mayReport(code string, now time.Time, staleAfter time.Duration) bool {
	if f.Online[code] {
		return true
	}
	created, ok := f.Created[code]
	return ok && now.Sub(created) <= staleAfter
}

// Tally counts votes of the monitor's regions: verdicts holds each region's
// latest stored check and since is when the monitor's current run of results
// began (store.MonitorView.RunSince; zero when it began more than a
// staleness period ago or nothing was stored since).
func Tally(m *monv1.Monitor, verdicts map[string]store.Check, since time.Time, facts RegionFacts, now time.Time) Quorum {
	isp := facts.ISP
	regions := monitorRegions(m)
	q := Quorum{Total: len(regions), Majority: true}
	if c := m.Spec.Confirmation; c != nil && c.Majority != nil {
		q.Majority = *c.Majority
	}
	q.Required = 1
	if len(regions) >= 2 {
		q.Required = 2
	}
	if c := m.Spec.Confirmation; c != nil && c.Regions > 0 {
		q.Required = int(c.Regions)
	}
	q.Required = max(1, min(q.Required, max(len(regions), 1)))
	staleAfter := staleness(m)

	// The start of the monitor's current run of results tells how long it
	// has been reporting: an online region still silent (no result, or only
	// a stale one) a staleness period after that is not checking it and is
	// no longer waited for, while one silent during this warm-up is merely
	// slower to send its first result — after the monitor's creation, or
	// after a silence of every region (manager restart, resume). The start
	// of the run, not the oldest of the latest results: those move forward
	// with every result, so a silent region would be waited for forever. A
	// region without an agent is not waited for, unless it was created
	// within the warm-up (its agents may still be connecting).
	warmup := !since.IsZero() && now.Sub(since) <= staleAfter
	warmingUp := 0

	dcFailing, dcPassing := 0, 0
	for _, code := range regions {
		v, ok := verdicts[code]
		vote := RegionVote{Region: code, ISP: isp[code]}
		switch {
		case !ok:
			vote.Status, vote.Vote = "pending", "abstain"
			if warmup && facts.mayReport(code, now, staleAfter) {
				warmingUp++
			}
		case now.Sub(v.CheckedAt) > staleAfter:
			vote.Status, vote.Vote, vote.CheckedAt = string(v.Status), "abstain", v.CheckedAt
			vote.Error = "stale: no recent result from this region"
			if warmup && facts.mayReport(code, now, staleAfter) {
				warmingUp++
			}
		default:
			vote.Status, vote.CheckedAt, vote.ErrorType, vote.Error = string(v.Status), v.CheckedAt, v.ErrorType, v.ErrorMessage
			vote.ScreenshotURL = screenshotURL(v)
			switch v.Status {
			case store.StatusDown:
				vote.Vote = "fail"
			case store.StatusUp, store.StatusDegraded:
				vote.Vote = "pass"
			default:
				vote.Vote = "abstain"
			}
		}
		q.Votes = append(q.Votes, vote)
		switch vote.Vote {
		case "fail":
			q.Voting++
			q.FailingRegions = append(q.FailingRegions, code)
			if q.FirstFailure.IsZero() || v.CheckedAt.Before(q.FirstFailure) {
				q.FirstFailure = v.CheckedAt
			}
			if q.Cause == "" {
				q.Cause, q.Reason = v.ErrorType, v.ErrorMessage
			}
			if name, ok := isp[code]; ok {
				if !slices.Contains(q.FailingISPs, name) {
					q.FailingISPs = append(q.FailingISPs, name)
				}
			} else {
				dcFailing++
			}
		case "pass":
			q.Voting++
			q.Passing++
			if _, ok := isp[code]; !ok {
				dcPassing++
			}
		default:
			q.Abstaining = append(q.Abstaining, code)
		}
	}
	// Regions that cannot vote (no agent, blocked, unknown, stale) must not
	// hide an outage: the confirmations needed are capped at the number of
	// voting regions. Regions yet to send their first result during the
	// warm-up still count, so one fast region cannot open an incident alone.
	q.Required = max(1, min(q.Required, q.Voting+warmingUp))
	failing := len(q.FailingRegions)
	q.Outage = failing >= q.Required && (!q.Majority || 2*failing > q.Voting)
	q.Recovered = !q.Outage && q.Passing > 0
	q.LastMileOnly = failing > 0 && dcFailing == 0 && dcPassing > 0
	if q.Reason == "" && q.Cause != "" {
		q.Reason = q.Cause
	}
	return q
}

// monitorRegions are the regions that vote for m.
func monitorRegions(m *monv1.Monitor) []string {
	if m.Spec.Type == monv1.MonitorCron {
		return []string{HeartbeatRegion}
	}
	return monitor.Regions(m)
}

// ManagerRegion labels results of checks the manager ran itself because no
// agent of the region was reachable (RunCheck). They show in status but do
// not vote.
const ManagerRegion = "manager"

// viewRegions are the regions whose latest results the monitor's status
// shows: the voting ones and the manager's own checks.
func viewRegions(m *monv1.Monitor) []string {
	regions := monitorRegions(m)
	if slices.Contains(regions, ManagerRegion) {
		return regions
	}
	return append(slices.Clone(regions), ManagerRegion)
}

// viewQuery selects what a judgement of m at now reads from the store.
func viewQuery(m *monv1.Monitor, now time.Time) store.ViewQuery {
	return store.ViewQuery{Regions: viewRegions(m), Now: now, Gap: staleness(m)}
}

// staleness is how old a verdict may be before its region abstains.
func staleness(m *monv1.Monitor) time.Duration {
	interval := time.Duration(max(monitor.IntervalSeconds(m), 15)) * time.Second
	if m.Spec.Type == monv1.MonitorCron {
		return 366 * 24 * time.Hour // a heartbeat verdict holds until the next ping or miss
	}
	return 3*interval + time.Duration(max(m.Status.EffectiveTimeoutMs, 30000))*time.Millisecond
}

// screenshotURL is the REST path of the screenshot a failed browser check
// stored (its details count the bytes), else "". Only failures take one,
// so an up check costs no look at its details.
func screenshotURL(c store.Check) string {
	if c.Status == store.StatusUp || !bytes.Contains(c.Details, []byte(`"screenshot_bytes":`)) {
		return ""
	}
	return "/monitors/" + c.MonitorID + "/checks/" + c.ID + "/screenshot"
}
