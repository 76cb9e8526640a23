package thirdparty

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"
)

// Snapshot is the parsed state of a provider at one poll.
type Snapshot struct {
	// Indicator is the page's overall indicator (none, minor, major,
	// critical) of a Statuspage-compatible provider.
	Indicator    string               `json:"indicator,omitempty"`
	Components   map[string]Component `json:"components,omitempty"`
	Incidents    map[string]Incident  `json:"incidents,omitempty"`
	Maintenances map[string]Incident  `json:"maintenances,omitempty"`
	// Items are the entries of a feed provider, by id.
	Items map[string]FeedItem `json:"items,omitempty"`
}

// Component is one component of a Statuspage-compatible provider.
type Component struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Status is operational, degraded_performance, partial_outage,
	// major_outage or under_maintenance.
	Status  string `json:"status"`
	GroupID string `json:"group_id,omitempty"`
	// Group is true for a component that only groups others.
	Group bool `json:"group,omitempty"`
}

// Incident is an incident or a scheduled maintenance of a
// Statuspage-compatible provider.
type Incident struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Status is investigating, identified, monitoring, resolved or
	// postmortem for incidents; scheduled, in_progress, verifying or
	// completed for maintenances.
	Status string `json:"status"`
	// Impact is none, minor, major, critical or maintenance.
	Impact    string `json:"impact"`
	Shortlink string `json:"shortlink,omitempty"`
	UpdatedAt string `json:"updated_at,omitempty"`
	// Update is the body of the latest update.
	Update     string   `json:"update,omitempty"`
	Components []string `json:"components,omitempty"`
	// ComponentNames are the names of Components, in the same order.
	ComponentNames []string `json:"component_names,omitempty"`
}

// FeedItem is one entry of an RSS or Atom status feed.
type FeedItem struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Link    string `json:"link,omitempty"`
	Summary string `json:"summary,omitempty"`
	Updated string `json:"updated,omitempty"`
}

// maxFeedItems bounds the items kept of a feed: the newest ones.
const maxFeedItems = 100

type spComponent struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	GroupID string `json:"group_id"`
	Group   bool   `json:"group"`
}

type spIncident struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Status          string `json:"status"`
	Impact          string `json:"impact"`
	Shortlink       string `json:"shortlink"`
	UpdatedAt       string `json:"updated_at"`
	IncidentUpdates []struct {
		Body      string `json:"body"`
		CreatedAt string `json:"created_at"`
	} `json:"incident_updates"`
	Components []spComponent `json:"components"`
}

func (i spIncident) incident() Incident {
	out := Incident{ID: i.ID, Name: i.Name, Status: i.Status, Impact: i.Impact, Shortlink: i.Shortlink, UpdatedAt: i.UpdatedAt}
	if len(i.IncidentUpdates) > 0 {
		// Statuspage lists updates newest first.
		out.Update = i.IncidentUpdates[0].Body
	}
	for _, c := range i.Components {
		out.Components = append(out.Components, c.ID)
		out.ComponentNames = append(out.ComponentNames, c.Name)
	}
	return out
}

// spSummary is the part of summary.json (and incidents.json) this package
// reads.
type spSummary struct {
	Status struct {
		Indicator string `json:"indicator"`
	} `json:"status"`
	Components            []spComponent `json:"components"`
	Incidents             []spIncident  `json:"incidents"`
	ScheduledMaintenances []spIncident  `json:"scheduled_maintenances"`
}

// ParseSummary parses a Statuspage summary.json.
func ParseSummary(raw []byte) (*Snapshot, error) {
	var s spSummary
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decode summary.json: %w", err)
	}
	snap := &Snapshot{Indicator: s.Status.Indicator, Components: map[string]Component{},
		Incidents: map[string]Incident{}, Maintenances: map[string]Incident{}}
	for _, c := range s.Components {
		snap.Components[c.ID] = Component(c)
	}
	for _, i := range s.Incidents {
		snap.Incidents[i.ID] = i.incident()
	}
	for _, m := range s.ScheduledMaintenances {
		snap.Maintenances[m.ID] = m.incident()
	}
	return snap, nil
}

// ParseIncidents parses a Statuspage incidents.json into incidents by id.
func ParseIncidents(raw []byte) (map[string]Incident, error) {
	var s spSummary
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decode incidents.json: %w", err)
	}
	out := make(map[string]Incident, len(s.Incidents))
	for _, i := range s.Incidents {
		out[i.ID] = i.incident()
	}
	return out, nil
}

// feedDoc decodes both RSS 2.0 (rss/channel/item) and Atom (feed/entry).
type feedDoc struct {
	XMLName xml.Name
	Items   []struct {
		GUID        string   `xml:"guid"`
		Title       string   `xml:"title"`
		Link        string   `xml:"link"`
		Description innerXML `xml:"description"`
		PubDate     string   `xml:"pubDate"`
	} `xml:"channel>item"`
	Entries []struct {
		ID    string `xml:"id"`
		Title string `xml:"title"`
		Links []struct {
			Href string `xml:"href,attr"`
			Rel  string `xml:"rel,attr"`
		} `xml:"link"`
		Summary innerXML `xml:"summary"`
		Content innerXML `xml:"content"`
		Updated string   `xml:"updated"`
	} `xml:"entry"`
}

var tags = regexp.MustCompile(`<[^>]*>`)

// innerXML keeps an element's content as written: feeds put HTML in it,
// as child elements, escaped text or CDATA.
type innerXML struct {
	XML string `xml:",innerxml"`
}

var cdata = strings.NewReplacer("<![CDATA[", "", "]]>", "")

// plain turns feed HTML (markup, escaped markup or CDATA) into one line of
// text.
func plain(s string) string {
	s = tags.ReplaceAllString(cdata.Replace(s), " ")
	s = tags.ReplaceAllString(html.UnescapeString(s), " ")
	return strings.Join(strings.Fields(s), " ")
}

// ParseFeed parses an RSS 2.0 or Atom feed; only the first maxFeedItems
// entries (feeds list the newest first) are kept.
func ParseFeed(raw []byte) (*Snapshot, error) {
	var d feedDoc
	if err := xml.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("decode feed: %w", err)
	}
	if d.XMLName.Local != "rss" && d.XMLName.Local != "feed" {
		return nil, fmt.Errorf("decode feed: root element %q is neither rss nor feed", d.XMLName.Local)
	}
	snap := &Snapshot{Items: map[string]FeedItem{}}
	add := func(it FeedItem) {
		if it.ID == "" {
			it.ID = it.Link
		}
		if it.ID == "" {
			it.ID = it.Title
		}
		if len(snap.Items) < maxFeedItems && it.ID != "" {
			snap.Items[it.ID] = it
		}
	}
	for _, it := range d.Items {
		add(FeedItem{ID: strings.TrimSpace(it.GUID), Title: plain(it.Title), Link: strings.TrimSpace(it.Link),
			Summary: plain(it.Description.XML), Updated: strings.TrimSpace(it.PubDate)})
	}
	for _, e := range d.Entries {
		link := ""
		if i := slices.IndexFunc(e.Links, func(l struct {
			Href string `xml:"href,attr"`
			Rel  string `xml:"rel,attr"`
		}) bool {
			return l.Rel == "" || l.Rel == "alternate"
		}); i >= 0 {
			link = e.Links[i].Href
		}
		summary := e.Summary.XML
		if strings.TrimSpace(summary) == "" {
			summary = e.Content.XML
		}
		add(FeedItem{ID: strings.TrimSpace(e.ID), Title: plain(e.Title), Link: link, Summary: plain(summary), Updated: strings.TrimSpace(e.Updated)})
	}
	return snap, nil
}
