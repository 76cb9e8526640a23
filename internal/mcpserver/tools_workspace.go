package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

type whoami struct {
	WorkspaceID            string  `json:"workspace_id"`
	UserEmail              *string `json:"user_email"`
	AuthType               string  `json:"auth_type"`
	APIKeyAccess           string  `json:"api_key_access"`
	WorkspaceRole          string  `json:"workspace_role"`
	ReadOnly               bool    `json:"read_only"`
	CanManageAlertChannels bool    `json:"can_manage_alert_channels"`
	Plan                   string  `json:"plan"`
	Limits                 struct {
		Monitors           *int `json:"monitors"`
		MinIntervalSeconds int  `json:"min_interval_seconds"`
		ProbeLocations     *int `json:"probe_locations"`
		StatusPages        *int `json:"status_pages"`
	} `json:"limits"`
}

func limitText(p *int) string {
	if p == nil {
		return "unlimited"
	}
	return fmt.Sprint(*p)
}

func whoamiTool() toolSpec {
	return newTool("service_whoami", "Who am I",
		"The workspace this server acts on: plan and limits (monitors, minimum interval, locations per monitor, status pages), the API key's access level, whether it is read-only, whether it may manage alert channels, and this server's tool mode.",
		KindRead, func(ctx context.Context, c *call, in Format) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			var raw map[string]any
			if err := c.api.Get(ctx, "/automation/whoami", nil, &raw); err != nil {
				return "", err
			}
			var w whoami
			_ = decodeInto(raw, &w)
			raw["mcp_mode"] = c.mode.String()
			return render(f, raw, func() string {
				var b strings.Builder
				fmt.Fprintf(&b, "## Workspace %s\n\n", clean(w.WorkspaceID))
				fmt.Fprintf(&b, "- plan: %s\n", clean(w.Plan))
				fmt.Fprintf(&b, "- limits: monitors %s, minimum interval %ds, locations per monitor %s, status pages %s\n",
					limitText(w.Limits.Monitors), w.Limits.MinIntervalSeconds, limitText(w.Limits.ProbeLocations), limitText(w.Limits.StatusPages))
				fmt.Fprintf(&b, "- key access level: %s (read-only: %t)\n", w.APIKeyAccess, w.ReadOnly)
				fmt.Fprintf(&b, "- may manage alert channels: %t\n", w.CanManageAlertChannels)
				fmt.Fprintf(&b, "- MCP tool mode: %s\n", c.mode)
				if w.ReadOnly {
					b.WriteString("\nThis key is read-only: every change is refused with READ_ONLY_ACCESS.\n")
				}
				return b.String()
			})
		}, formatOpt)
}

type region struct {
	Code      string `json:"code"`
	City      string `json:"city"`
	Country   string `json:"country"`
	Continent string `json:"continent"`
	Online    *bool  `json:"online"`
}

func listRegionsTool() toolSpec {
	return newTool("service_list_regions", "List probe regions",
		"Probe locations monitors can be checked from: code, city, country, continent and whether the location is online.",
		KindRead, func(ctx context.Context, c *call, in Format) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			regions, note, err := c.regions(ctx)
			if err != nil {
				return "", err
			}
			return render(f, regions, func() string {
				var b strings.Builder
				fmt.Fprintf(&b, "%d probe location(s).%s\n\n| code | city | country | continent | online |\n|---|---|---|---|---|\n", len(regions), note)
				for _, r := range regions {
					online := "unknown"
					if r.Online != nil {
						online = fmt.Sprint(*r.Online)
					}
					fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", clean(r.Code), clean(r.City), clean(r.Country), clean(r.Continent), online)
				}
				return b.String()
			})
		}, formatOpt)
}

// regions lists the probe locations from GET /regions. Where that endpoint
// is missing it falls back to the codes monitors use.
func (c *call) regions(ctx context.Context) ([]region, string, error) {
	var regions []region
	err := c.api.Get(ctx, "/regions", nil, &regions)
	if err == nil {
		return regions, "", nil
	}
	if !IsStatus(err, http.StatusNotFound) {
		return nil, "", err
	}
	all, lerr := c.listMonitors(ctx, "")
	if lerr != nil {
		return nil, "", lerr
	}
	var codes []string
	for _, m := range all {
		for _, r := range append(slices.Clone(m.Regions), m.EffectiveRegions...) {
			if !slices.Contains(codes, r) {
				codes = append(codes, r)
			}
		}
	}
	slices.Sort(codes)
	for _, code := range codes {
		regions = append(regions, region{Code: code})
	}
	return regions, " (the API has no region list; these are the codes your monitors use)", nil
}

type summary struct {
	Total         int            `json:"total"`
	Counts        map[string]int `json:"counts"`
	OpenIncidents int            `json:"open_incidents"`
	Uptime24h     *float64       `json:"uptime_24h"`
}

func monitorSummaryTool() toolSpec {
	return newTool("service_monitor_summary", "Monitor summary",
		"Workspace overview: monitor counts by status, open incidents, 24 h workspace uptime and the last incident.",
		KindRead, func(ctx context.Context, c *call, in Format) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			var raw map[string]any
			if err := c.api.Get(ctx, "/monitors/summary", nil, &raw); err != nil {
				return "", err
			}
			var s summary
			_ = decodeInto(raw, &s)
			page, err := c.incidents(ctx, url.Values{"page_size": {"1"}})
			if err != nil {
				return "", err
			}
			var last *restapi.Incident
			if len(page.Items) > 0 {
				last = &page.Items[0]
			}
			raw["last_incident"] = last
			return render(f, raw, func() string {
				var b strings.Builder
				fmt.Fprintf(&b, "## Monitors: %d\n\n", s.Total)
				keys := make([]string, 0, len(s.Counts))
				for k := range s.Counts {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				for _, k := range keys {
					if s.Counts[k] > 0 {
						fmt.Fprintf(&b, "- %s: %d\n", k, s.Counts[k])
					}
				}
				fmt.Fprintf(&b, "- open incidents: %d\n- workspace uptime 24h: %s\n", s.OpenIncidents, pct(s.Uptime24h))
				if last != nil {
					fmt.Fprintf(&b, "\nLast incident:\n%s\n", incidentLine(last))
				} else {
					b.WriteString("\nNo incidents yet.\n")
				}
				return b.String()
			})
		}, formatOpt)
}

type maintenanceIn struct {
	Status string `json:"status,omitempty" jsonschema:"live state: scheduled, ongoing, completed or cancelled (a scheduled window whose start has passed counts as ongoing)"`
	Format
}

type maintenanceWindow struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Description *string  `json:"description"`
	StartsAt    string   `json:"starts_at"`
	EndsAt      string   `json:"ends_at"`
	TimeZone    string   `json:"time_zone"`
	Recurrence  *string  `json:"recurrence"`
	Scope       string   `json:"scope"`
	MonitorIDs  []string `json:"monitor_ids"`
	GroupIDs    []string `json:"group_ids"`
	Impact      string   `json:"impact"`
	State       string   `json:"state"`
}

func listMaintenanceTool() toolSpec {
	return newTool("service_list_maintenance_windows", "List maintenance windows",
		"Maintenance windows, newest start first, with live state, times, time zone, impact, scope (all monitors, monitors or groups) and recurrence. Read-only: the owner changes windows in the dashboard.",
		KindRead, func(ctx context.Context, c *call, in maintenanceIn) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			if err := oneOf("status", in.Status, "scheduled", "ongoing", "completed", "cancelled"); err != nil {
				return "", err
			}
			var all []maintenanceWindow
			if err := c.api.Get(ctx, "/maintenance", nil, &all); err != nil {
				return "", err
			}
			var out []maintenanceWindow
			for _, w := range all {
				if in.Status == "" || w.State == in.Status {
					out = append(out, w)
				}
			}
			slices.SortStableFunc(out, func(a, b maintenanceWindow) int { return strings.Compare(b.StartsAt, a.StartsAt) })
			if out == nil {
				out = []maintenanceWindow{}
			}
			return render(f, out, func() string {
				var b strings.Builder
				fmt.Fprintf(&b, "%d maintenance window(s).\n\n", len(out))
				for _, w := range out {
					scope := w.Scope
					switch {
					case len(w.MonitorIDs) > 0:
						scope += fmt.Sprintf(" (%d monitors)", len(w.MonitorIDs))
					case len(w.GroupIDs) > 0:
						scope += fmt.Sprintf(" (%d groups)", len(w.GroupIDs))
					}
					rec := "once"
					if w.Recurrence != nil {
						rec = *w.Recurrence
					}
					fmt.Fprintf(&b, "- **%s** (`%s`): %s, %s → %s (%s), impact %s, scope %s, recurrence %s\n",
						clean(w.Title), w.ID, w.State, w.StartsAt, w.EndsAt, w.TimeZone, w.Impact, scope, rec)
				}
				return b.String()
			})
		}, formatOpt, enum("status", "scheduled", "ongoing", "completed", "cancelled"))
}
