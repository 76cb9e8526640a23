package statuspage

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Feed bounds.
const (
	// feedIncidentsPerMonitor is how many recent incidents of each monitor
	// the feed reads.
	feedIncidentsPerMonitor = 20
	// feedMaxEntries bounds the feed.
	feedMaxEntries = 50
)

// AtomFeed is an Atom 1.0 feed (RFC 4287).
type AtomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	ID      string      `xml:"id"`
	Title   string      `xml:"title"`
	Updated string      `xml:"updated"`
	Author  AtomPerson  `xml:"author"`
	Links   []AtomLink  `xml:"link"`
	Entries []AtomEntry `xml:"entry"`
}

// AtomPerson is an author.
type AtomPerson struct {
	Name string `xml:"name"`
}

// AtomLink is a link of a feed or entry.
type AtomLink struct {
	Rel  string `xml:"rel,attr,omitempty"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

// AtomEntry is one incident or maintenance window.
type AtomEntry struct {
	ID        string     `xml:"id"`
	Title     string     `xml:"title"`
	Updated   string     `xml:"updated"`
	Published string     `xml:"published,omitempty"`
	Links     []AtomLink `xml:"link"`
	Category  *AtomCat   `xml:"category,omitempty"`
	Content   AtomText   `xml:"content"`
}

// AtomCat is an entry category.
type AtomCat struct {
	Term string `xml:"term,attr"`
}

// AtomText is a text construct.
type AtomText struct {
	Type string `xml:"type,attr"`
	Body string `xml:",chardata"`
}

func atomTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// serveFeed writes GET /status/:slug/feed.xml.
func (p *Public) serveFeed(w http.ResponseWriter, r *http.Request, page *monv1.StatusPage) {
	snap, err := p.snapshot(r.Context(), page)
	if err != nil {
		p.internalError(w, r, err)
		return
	}
	v, err := p.cache.get("feed/"+string(page.UID)+"/"+strconv.FormatInt(page.Generation, 10), p.now(), func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 30*time.Second)
		defer cancel()
		return p.buildFeed(ctx, page, snap)
	})
	if err != nil {
		p.internalError(w, r, err)
		return
	}
	out, err := xml.MarshalIndent(v, "", "  ")
	if err != nil {
		p.internalError(w, r, fmt.Errorf("marshal feed: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/atom+xml; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=60")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(xml.Header))
		_, _ = w.Write(out)
	}
}

// buildFeed collects the recent incidents (with public updates) of the page's
// monitors and its maintenance windows, newest update first.
func (p *Public) buildFeed(ctx context.Context, page *monv1.StatusPage, snap *snapshot) (*AtomFeed, error) {
	slug := Slug(page)
	pageURL := p.BaseURL + "/s/" + slug
	feed := &AtomFeed{
		ID:     "urn:uuid:" + string(page.UID),
		Title:  page.Spec.Title + " status",
		Author: AtomPerson{Name: page.Spec.Title},
		Links: []AtomLink{
			{Rel: "self", Type: "application/atom+xml", Href: p.BaseURL + "/status/" + slug + "/feed.xml"},
			{Rel: "alternate", Type: "text/html", Href: pageURL},
		},
		Entries: []AtomEntry{},
	}
	type dated struct {
		e  AtomEntry
		at time.Time
	}
	var entries []dated
	if p.Store != nil {
		ids := make([]string, 0, len(snap.monitors))
		for id := range snap.monitors {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			list, err := p.Store.ListIncidents(ctx, store.IncidentQuery{
				Namespace: page.Namespace, MonitorID: id, Page: 1, PageSize: feedIncidentsPerMonitor,
			})
			if err != nil {
				return nil, fmt.Errorf("list incidents: %w", err)
			}
			for _, inc := range list.Items {
				updates, err := p.publicUpdates(ctx, inc.ID)
				if err != nil {
					return nil, err
				}
				e, at := incidentEntry(snap.monitors[id], &inc, updates, pageURL)
				entries = append(entries, dated{e, at})
			}
		}
	}
	for _, m := range snap.doc.Maintenance {
		e, at := maintenanceEntry(m, pageURL)
		entries = append(entries, dated{e, at})
	}
	if err := p.completedMaintenance(ctx, page, snap, pageURL, func(e AtomEntry, at time.Time) {
		entries = append(entries, dated{e, at})
	}); err != nil {
		return nil, err
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].at.After(entries[j].at) })
	if len(entries) > feedMaxEntries {
		entries = entries[:feedMaxEntries]
	}
	updated := snap.builtAt
	if len(entries) > 0 {
		updated = entries[0].at
	}
	feed.Updated = atomTime(updated)
	for _, d := range entries {
		feed.Entries = append(feed.Entries, d.e)
	}
	return feed, nil
}

// incidentEntry is the feed entry of an incident; its time is its latest
// change.
func incidentEntry(monitor string, inc *store.Incident, updates []PublicUpdate, pageURL string) (AtomEntry, time.Time) {
	at := inc.StartedAt
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s went down.\n", atomTime(inc.StartedAt), monitor)
	for _, u := range updates {
		fmt.Fprintf(&b, "%s: %s\n", atomTime(u.CreatedAt), u.Body)
		if u.CreatedAt.After(at) {
			at = u.CreatedAt
		}
	}
	state := "ongoing"
	if inc.ResolvedAt != nil {
		state = "resolved"
		fmt.Fprintf(&b, "%s: resolved.\n", atomTime(*inc.ResolvedAt))
		if inc.ResolvedAt.After(at) {
			at = *inc.ResolvedAt
		}
	}
	return AtomEntry{
		ID:        "urn:uuid:" + inc.ID,
		Title:     incidentTitle(monitor, inc.ResolvedAt),
		Updated:   atomTime(at),
		Published: atomTime(inc.StartedAt),
		Links:     []AtomLink{{Rel: "alternate", Type: "text/html", Href: pageURL}},
		Category:  &AtomCat{Term: "incident-" + state},
		Content:   AtomText{Type: "text", Body: strings.TrimSpace(b.String())},
	}, at
}

// maintenanceEntry is the feed entry of a maintenance window; its time is its
// start.
func maintenanceEntry(m PublicMaintenance, pageURL string) (AtomEntry, time.Time) {
	body := fmt.Sprintf("%s to %s (%s impact).", atomTime(m.StartsAt), atomTime(m.EndsAt), m.Impact)
	if len(m.Monitors) > 0 {
		body += " Affects: " + strings.Join(m.Monitors, ", ") + "."
	}
	if m.Description != "" {
		body = m.Description + "\n" + body
	}
	return AtomEntry{
		ID:        "urn:uuid:" + m.ID,
		Title:     "Maintenance (" + m.State + "): " + m.Title,
		Updated:   atomTime(m.StartsAt),
		Published: atomTime(m.StartsAt),
		Links:     []AtomLink{{Rel: "alternate", Type: "text/html", Href: pageURL}},
		Category:  &AtomCat{Term: "maintenance-" + m.State},
		Content:   AtomText{Type: "text", Body: body},
	}, m.StartsAt
}

// completedMaintenance adds the windows of the last 30 days that completed, so
// the feed keeps a window after it ends.
func (p *Public) completedMaintenance(ctx context.Context, page *monv1.StatusPage, snap *snapshot, pageURL string, add func(AtomEntry, time.Time)) error {
	var list monv1.MaintenanceWindowList
	if err := p.Reader.List(ctx, &list, client.InNamespace(page.Namespace)); err != nil {
		return fmt.Errorf("list maintenance windows: %w", err)
	}
	for i := range list.Items {
		w := &list.Items[i]
		if WindowState(w, snap.builtAt) != monv1.MaintenanceCompleted {
			continue
		}
		end := w.Spec.EndsAt.Time
		if w.Status.CurrentEnd != nil {
			end = w.Status.CurrentEnd.Time
		}
		if snap.builtAt.Sub(end) > 30*24*time.Hour {
			continue
		}
		if w.Spec.Scope != "all" && !coversAny(w, snap.shown) {
			continue
		}
		start := w.Spec.StartsAt.Time
		if w.Status.CurrentStart != nil {
			start = w.Status.CurrentStart.Time
		}
		e, _ := maintenanceEntry(PublicMaintenance{
			ID: string(w.UID), Title: w.Spec.Title, Description: w.Spec.Description,
			State: string(monv1.MaintenanceCompleted), Impact: orDefault(w.Spec.Impact, "medium"),
			StartsAt: start.UTC(), EndsAt: end.UTC(), Monitors: []string{},
		}, pageURL)
		e.Updated = atomTime(end)
		add(e, end)
	}
	return nil
}

// coversAny reports whether a monitors-scoped window names a monitor of the
// page (shown: the names of the monitors it shows). Group-scoped windows are
// left out of the completed list: resolving groups needs the monitors, and
// the live view already shows current ones.
func coversAny(w *monv1.MaintenanceWindow, shown map[string]bool) bool {
	for _, r := range w.Spec.Monitors {
		if shown[r.Name] {
			return true
		}
	}
	return false
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
