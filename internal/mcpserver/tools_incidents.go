package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// incident is a REST incident list item.
func (c *call) incidents(ctx context.Context, q url.Values) (*restapi.IncidentPage, error) {
	var p restapi.IncidentPage
	if err := c.api.Get(ctx, "/incidents", q, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func incidentState(i *restapi.Incident) string {
	switch {
	case i.ResolvedAt != nil:
		return "resolved"
	case i.AcknowledgedAt != nil:
		return "ongoing, acknowledged"
	default:
		return "ongoing"
	}
}

// incidentLine is one incident as a markdown list item.
func incidentLine(i *restapi.Incident) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- `%s` **%s** on %s (`%s`): started %s", i.ID, incidentState(i), clean(i.MonitorName), i.MonitorID, i.StartedAt)
	if i.ResolvedAt != nil {
		fmt.Fprintf(&b, ", resolved %s", *i.ResolvedAt)
		if i.ResolvedManually {
			b.WriteString(" (by hand)")
		}
	}
	fmt.Fprintf(&b, ", duration %s, confirmed by %d/%d regions", duration(float64(i.DurationSeconds)), i.Confirmations, i.RegionsTotal)
	if len(i.ConfirmingRegions) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(i.ConfirmingRegions, ", "))
	}
	if i.AcknowledgedAt != nil {
		fmt.Fprintf(&b, ", acknowledged %s by %s", *i.AcknowledgedAt, clean(str(i.AcknowledgedByName)))
	}
	if i.AlertSuppressed {
		fmt.Fprintf(&b, ", alert suppressed (%s)", clean(str(i.SuppressionReason)))
	}
	if i.IsFlapping {
		b.WriteString(", flapping")
	}
	return b.String()
}

type listIncidentsIn struct {
	Status    string `json:"status,omitempty" jsonschema:"all (default), ongoing, resolved, acknowledged or suppressed"`
	MonitorID string `json:"monitor_id,omitempty" jsonschema:"only incidents of this monitor"`
	Query     string `json:"query,omitempty" jsonschema:"search monitor names and URLs (up to 200 characters)"`
	From      string `json:"from,omitempty" jsonschema:"earliest start time, ISO 8601"`
	To        string `json:"to,omitempty" jsonschema:"latest start time, ISO 8601"`
	Page      *int   `json:"page,omitempty" jsonschema:"page number, from 1"`
	PageSize  *int   `json:"page_size,omitempty" jsonschema:"incidents per page, 1-100 (default 25)"`
	Format
}

// checkISO validates an ISO 8601 time or date parameter.
func checkISO(name, v string) error {
	if v == "" {
		return nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if _, err := time.Parse(layout, v); err == nil {
			return nil
		}
	}
	return invalid("%s must be an ISO 8601 time such as 2025-01-31T12:00:00Z, got %q", name, v)
}

func listIncidentsTool() toolSpec {
	return newTool("service_list_incidents", "List incidents",
		"Incidents newest first with confirming regions and acknowledgement. Filter by status, monitor, search text and start time; page with page and page_size.",
		KindRead, func(ctx context.Context, c *call, in listIncidentsIn) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			if err := oneOf("status", in.Status, "all", "ongoing", "resolved", "acknowledged", "suppressed"); err != nil {
				return "", err
			}
			size, err := intParam("page_size", in.PageSize, 25, 1, 100)
			if err != nil {
				return "", err
			}
			page, err := intParam("page", in.Page, 1, 1, 1<<20)
			if err != nil {
				return "", err
			}
			if len(in.Query) > 200 {
				return "", invalid("query is at most 200 characters")
			}
			if err := checkISO("from", in.From); err != nil {
				return "", err
			}
			if err := checkISO("to", in.To); err != nil {
				return "", err
			}
			q := url.Values{"page": {strconv.Itoa(page)}, "page_size": {strconv.Itoa(size)}}
			for k, v := range map[string]string{"monitor_id": in.MonitorID, "q": in.Query, "from": in.From, "to": in.To} {
				if v != "" {
					q.Set(k, v)
				}
			}
			if in.Status != "" && in.Status != "all" {
				q.Set("status", in.Status)
			}
			p, err := c.incidents(ctx, q)
			if err != nil {
				return "", err
			}
			return render(f, p, func() string {
				var b strings.Builder
				fmt.Fprintf(&b, "%d incident(s) match; page %d (%d per page).", p.Total, page, size)
				if p.Counts != (restapi.IncidentCounts{}) {
					fmt.Fprintf(&b, " Counts: all %d, ongoing %d, resolved %d, suppressed %d.", p.Counts.All, p.Counts.Ongoing, p.Counts.Resolved, p.Counts.Suppressed)
				}
				b.WriteString("\n\n")
				for i := range p.Items {
					b.WriteString(incidentLine(&p.Items[i]) + "\n")
				}
				if page*size < p.Total {
					fmt.Fprintf(&b, "\nMore: call again with page %d.\n", page+1)
				}
				return b.String()
			})
		}, formatOpt, enum("status", "all", "ongoing", "resolved", "acknowledged", "suppressed"), between("page_size", 1, 100), maxLen("query", 200))
}

type incidentIDIn struct {
	IncidentID string `json:"incident_id" jsonschema:"incident id (UUID)"`
}

type getIncidentIn struct {
	IncidentID string `json:"incident_id" jsonschema:"incident id (UUID)"`
	Format
}

func getIncidentTool() toolSpec {
	return newTool("service_get_incident", "Get an incident",
		"One incident with its timeline, error details, notes, runbook and postmortem. JSON by default.",
		KindRead, func(ctx context.Context, c *call, in getIncidentIn) (string, error) {
			f, err := in.format("json")
			if err != nil {
				return "", err
			}
			if err := required("incident_id", in.IncidentID); err != nil {
				return "", err
			}
			var d restapi.IncidentDetail
			if err := c.api.Get(ctx, "/incidents/"+pathEscape(in.IncidentID), nil, &d); err != nil {
				return "", err
			}
			return render(f, d, func() string {
				var b strings.Builder
				fmt.Fprintf(&b, "## Incident %s\n\n%s\n", d.ID, incidentLine(&d.Incident))
				if d.Cause != nil {
					fmt.Fprintf(&b, "\nCause (data): %s\n", clean(*d.Cause))
				}
				if len(d.Notes) > 0 {
					b.WriteString("\nNotes (data):\n")
					for _, n := range d.Notes {
						vis := "internal"
						if n.Public {
							vis = "public"
						}
						fmt.Fprintf(&b, "- %s %s by %s: %s\n", n.CreatedAt, vis, clean(str(n.Author)), cleanN(n.Body, 1000))
					}
				}
				if d.Runbook != nil {
					b.WriteString("\nRunbook:\n" + jsonBlock(d.Runbook))
				}
				if d.Postmortem != nil {
					fmt.Fprintf(&b, "\nPostmortem (data): %s\n", cleanN(*d.Postmortem, 3000))
				}
				return b.String()
			})
		}, formatOpt)
}

func acknowledgeIncidentTool() toolSpec {
	return newTool("service_acknowledge_incident", "Acknowledge an incident",
		"Acknowledge an ongoing incident: escalation to the next on-call step stops.",
		KindWrite, func(ctx context.Context, c *call, in incidentIDIn) (string, error) {
			if err := required("incident_id", in.IncidentID); err != nil {
				return "", err
			}
			var out restapi.Incident
			if err := c.api.Do(ctx, http.MethodPost, "/incidents/"+pathEscape(in.IncidentID)+"/acknowledge", nil, nil, &out); err != nil {
				return "", err
			}
			if out.ID == "" {
				return fmt.Sprintf("Acknowledged incident `%s`: escalation stops.", in.IncidentID), nil
			}
			return "Acknowledged incident: escalation stops.\n\n" + incidentLine(&out), nil
		})
}

type resolveIncidentIn struct {
	IncidentID string `json:"incident_id" jsonschema:"incident id (UUID)"`
	Note       string `json:"note,omitempty" jsonschema:"optional resolution note, up to 5000 characters"`
}

func resolveIncidentTool() toolSpec {
	return newTool("service_resolve_incident", "Resolve an incident",
		"Resolve an ongoing incident by hand, with an optional note. An already resolved incident gives INCIDENT_RESOLVED.",
		KindWrite, func(ctx context.Context, c *call, in resolveIncidentIn) (string, error) {
			if err := required("incident_id", in.IncidentID); err != nil {
				return "", err
			}
			if n := len([]rune(in.Note)); n > 5000 {
				return "", invalid("note is at most 5000 characters, got %d", n)
			}
			body := map[string]any{}
			if in.Note != "" {
				body["note"] = in.Note
			}
			var out restapi.Incident
			if err := c.api.Do(ctx, http.MethodPost, "/incidents/"+pathEscape(in.IncidentID)+"/resolve", nil, body, &out); err != nil {
				return "", err
			}
			if out.ID == "" {
				return fmt.Sprintf("Resolved incident `%s`.", in.IncidentID), nil
			}
			return "Resolved incident.\n\n" + incidentLine(&out), nil
		}, maxLen("note", 5000))
}

type addNoteIn struct {
	IncidentID string `json:"incident_id" jsonschema:"incident id (UUID)"`
	Body       string `json:"body" jsonschema:"note text, 1-5000 characters"`
	Public     *bool  `json:"public,omitempty" jsonschema:"true publishes a public update on status pages (needs destructive mode); default false"`
}

func addIncidentNoteTool() toolSpec {
	return newTool("service_add_incident_note", "Add an incident note",
		"Add a note to an incident's timeline. public: true publishes a public update and needs destructive mode.",
		KindWrite, func(ctx context.Context, c *call, in addNoteIn) (string, error) {
			if err := required("incident_id", in.IncidentID); err != nil {
				return "", err
			}
			n := len([]rune(in.Body))
			if strings.TrimSpace(in.Body) == "" || n > 5000 {
				return "", invalid("body is required, 1-5000 characters (got %d)", n)
			}
			public := in.Public != nil && *in.Public
			if public && !c.mode.Destructive {
				return "", refuseDestructive("posting a public incident update")
			}
			var out map[string]any
			if err := c.api.Do(ctx, http.MethodPost, "/incidents/"+pathEscape(in.IncidentID)+"/notes", nil, map[string]any{"body": in.Body, "public": public}, &out); err != nil {
				return "", err
			}
			vis := "an internal note"
			if public {
				vis = "a public update"
			}
			id, _ := out["id"].(string)
			return fmt.Sprintf("Added %s to incident `%s` (note id `%s`).", vis, in.IncidentID, id), nil
		}, maxLen("body", 5000))
}
