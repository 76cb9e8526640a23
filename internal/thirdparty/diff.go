package thirdparty

import (
	"slices"
	"sort"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Notice kinds of the third_party.* payloads.
const (
	KindIncidentOpened       = "incident_opened"
	KindIncidentUpdated      = "incident_updated"
	KindIncidentResolved     = "incident_resolved"
	KindMaintenanceStarted   = "maintenance_started"
	KindMaintenanceCompleted = "maintenance_completed"
	KindComponentDegraded    = "component_degraded"
	KindComponentRecovered   = "component_recovered"
)

// Payload severities.
const (
	SeverityOperational = "operational"
	SeverityMaintenance = "maintenance"
	SeverityMinor       = "minor"
	SeverityMajor       = "major"
	SeverityCritical    = "critical"
)

// Change is one difference between two snapshots of a provider: one notice,
// before the subscriptions' filters.
type Change struct {
	Kind     string
	Severity string
	// Rank orders the change against a subscription's min_severity: the
	// severity of the incident or outage it opens, updates or ends (1 minor,
	// 2 major, 3 critical); 0 for maintenance, which min_severity does not
	// filter.
	Rank int
	// Detail is the one-line description of the payload.
	Detail string
	// ComponentIDs and Components (names) are the components concerned.
	ComponentIDs []string
	Components   []string
	IncidentURL  string
	// Text is what keywords are matched against.
	Text string
}

// Rank returns the rank of a severity name (minor 1, major 2, critical 3),
// 0 for any other.
func Rank(severity string) int {
	switch severity {
	case SeverityMinor:
		return 1
	case SeverityMajor:
		return 2
	case SeverityCritical:
		return 3
	}
	return 0
}

// impactSeverity maps a Statuspage incident impact to a severity; an
// incident without impact ("none") is minor.
func impactSeverity(impact string) string {
	switch impact {
	case "critical":
		return SeverityCritical
	case "major":
		return SeverityMajor
	}
	return SeverityMinor
}

// componentSeverity maps a Statuspage component status to a severity, ""
// for a status that is not an outage (operational, under_maintenance).
func componentSeverity(status string) string {
	switch status {
	case "degraded_performance":
		return SeverityMinor
	case "partial_outage":
		return SeverityMajor
	case "major_outage":
		return SeverityCritical
	}
	return ""
}

var statusWords = map[string]string{
	"operational":          "operational",
	"degraded_performance": "degraded performance",
	"partial_outage":       "partial outage",
	"major_outage":         "major outage",
	"under_maintenance":    "under maintenance",
}

func resolved(status string) bool { return status == "resolved" || status == "postmortem" }

func maintenanceActive(status string) bool { return status == "in_progress" || status == "verifying" }

// Diff returns the changes from prev to cur, in a stable order. closed
// supplies the final state of incidents that left the summary (from
// incidents.json); it may be nil. pageURL builds incident links for
// incidents without a shortlink.
func Diff(prev, cur *Snapshot, closed map[string]Incident, pageURL string) []Change {
	var out []Change
	link := func(i Incident) string {
		if i.Shortlink != "" {
			return i.Shortlink
		}
		if pageURL == "" {
			return ""
		}
		return strings.TrimRight(pageURL, "/") + "/incidents/" + i.ID
	}
	incident := func(kind string, i Incident, sev string, rank int) Change {
		return Change{Kind: kind, Severity: sev, Rank: rank, Detail: i.Name, ComponentIDs: i.Components,
			Components: i.ComponentNames, IncidentURL: link(i), Text: i.Name + "\n" + i.Update + "\n" + strings.Join(i.ComponentNames, "\n")}
	}

	for _, id := range sortedKeys(cur.Incidents) {
		i := cur.Incidents[id]
		old, seen := prev.Incidents[id]
		switch {
		case !seen && !resolved(i.Status):
			out = append(out, incident(KindIncidentOpened, i, impactSeverity(i.Impact), Rank(impactSeverity(i.Impact))))
		case !seen:
			// Opened and resolved between two polls: nothing was announced.
		case resolved(i.Status) && !resolved(old.Status):
			out = append(out, incident(KindIncidentResolved, i, SeverityOperational, max(Rank(impactSeverity(old.Impact)), Rank(impactSeverity(i.Impact)))))
		case !resolved(i.Status) && (i.Status != old.Status || i.Impact != old.Impact || i.UpdatedAt != old.UpdatedAt):
			out = append(out, incident(KindIncidentUpdated, i, impactSeverity(i.Impact), Rank(impactSeverity(i.Impact))))
		}
	}
	for _, id := range sortedKeys(prev.Incidents) {
		old := prev.Incidents[id]
		if _, still := cur.Incidents[id]; still || resolved(old.Status) {
			continue
		}
		final := old
		if c, ok := closed[id]; ok {
			final = c
		}
		out = append(out, incident(KindIncidentResolved, final, SeverityOperational, Rank(impactSeverity(old.Impact))))
	}

	for _, id := range sortedKeys(cur.Maintenances) {
		m := cur.Maintenances[id]
		old, seen := prev.Maintenances[id]
		wasActive := seen && maintenanceActive(old.Status)
		switch {
		case maintenanceActive(m.Status) && !wasActive:
			out = append(out, incident(KindMaintenanceStarted, m, SeverityMaintenance, 0))
		case m.Status == "completed" && wasActive:
			out = append(out, incident(KindMaintenanceCompleted, m, SeverityMaintenance, 0))
		}
	}
	for _, id := range sortedKeys(prev.Maintenances) {
		old := prev.Maintenances[id]
		if _, still := cur.Maintenances[id]; !still && maintenanceActive(old.Status) {
			out = append(out, incident(KindMaintenanceCompleted, old, SeverityMaintenance, 0))
		}
	}

	for _, id := range sortedKeys(cur.Components) {
		c := cur.Components[id]
		if c.Group {
			continue
		}
		was := prev.Components[id].Status
		sev, oldSev := componentSeverity(c.Status), componentSeverity(was)
		comp := func(kind, sev string, rank int) Change {
			return Change{Kind: kind, Severity: sev, Rank: rank, Detail: c.Name + ": " + statusWords[c.Status],
				ComponentIDs: []string{c.ID}, Components: []string{c.Name}, IncidentURL: pageURL, Text: c.Name}
		}
		switch {
		case sev != "" && Rank(sev) > Rank(oldSev):
			out = append(out, comp(KindComponentDegraded, sev, Rank(sev)))
		case sev == "" && oldSev != "" && c.Status == "operational":
			out = append(out, comp(KindComponentRecovered, SeverityOperational, Rank(oldSev)))
		}
	}

	for _, id := range sortedKeys(cur.Items) {
		it := cur.Items[id]
		old, seen := prev.Items[id]
		if seen && old.Updated == it.Updated && old.Title == it.Title && old.Summary == it.Summary {
			continue
		}
		out = append(out, feedChange(it, seen))
	}
	return out
}

// feedChange classifies a new or changed feed entry from its words: feeds
// carry no structured status.
func feedChange(it FeedItem, seen bool) Change {
	text := strings.ToLower(it.Title + " " + it.Summary)
	has := func(words ...string) bool {
		return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(text, w) })
	}
	sev := SeverityMinor
	switch {
	case has("critical", "major outage", "complete outage", "service disruption"):
		sev = SeverityCritical
	case has("outage", "unavailable", "disruption", "down"):
		sev = SeverityMajor
	}
	ch := Change{Severity: sev, Rank: Rank(sev), Detail: it.Title, IncidentURL: it.Link, Text: it.Title + "\n" + it.Summary}
	switch {
	case has("maintenance"):
		ch.Kind, ch.Severity, ch.Rank = KindMaintenanceStarted, SeverityMaintenance, 0
		if has("completed", "complete", "finished", "ended") {
			ch.Kind = KindMaintenanceCompleted
		}
	case has("resolved", "[resolved]", "recovered", "operating normally", "service is operating normally"):
		ch.Kind, ch.Severity = KindIncidentResolved, SeverityOperational
	case seen:
		ch.Kind = KindIncidentUpdated
	default:
		ch.Kind = KindIncidentOpened
	}
	return ch
}

// Matches reports whether a subscription wants a change: incident and
// component notices need notify and a severity of at least min_severity
// (resolved and recovered notices are ranked by what they end); maintenance
// notices need notify_maintenance. With component ids, a change that names
// components must name one of them; with keywords, the change's text must
// contain one (case-insensitively).
func Matches(sub store.ThirdPartySubscription, ch Change) bool {
	switch ch.Kind {
	case KindMaintenanceStarted, KindMaintenanceCompleted:
		if !sub.NotifyMaintenance {
			return false
		}
	default:
		if !sub.Notify || ch.Rank < max(Rank(sub.MinSeverity), 1) {
			return false
		}
	}
	if len(sub.ComponentIDs) > 0 && len(ch.ComponentIDs) > 0 &&
		!slices.ContainsFunc(ch.ComponentIDs, func(id string) bool { return slices.Contains(sub.ComponentIDs, id) }) {
		return false
	}
	if len(sub.Keywords) > 0 {
		text := strings.ToLower(ch.Text)
		if !slices.ContainsFunc(sub.Keywords, func(k string) bool { return strings.Contains(text, strings.ToLower(k)) }) {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
