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

func limitText(p *int32) string {
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
			var w restapi.Whoami
			if err := c.api.Get(ctx, "/automation/whoami", nil, &w); err != nil {
				return "", err
			}
			out := struct {
				restapi.Whoami
				MCPMode string `json:"mcp_mode"`
			}{w, c.mode.String()}
			return render(f, out, func() string {
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

func listRegionsTool() toolSpec {
	return newTool("service_list_regions", "List probe regions",
		"Probe locations monitors can be checked from: code, city, country, continent and whether the location is online.",
		KindRead, func(ctx context.Context, c *call, in Format) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			regions, fallback, err := c.regions(ctx)
			if err != nil {
				return "", err
			}
			note := ""
			if fallback {
				note = " (the API has no region list; these are the codes your monitors use)"
			}
			return render(f, regions, func() string {
				var b strings.Builder
				fmt.Fprintf(&b, "%d probe location(s).%s\n\n| code | city | country | continent | online |\n|---|---|---|---|---|\n", len(regions), note)
				for _, r := range regions {
					online := fmt.Sprint(r.Online)
					if fallback {
						online = "unknown"
					}
					fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", clean(r.Code), clean(str(r.City)), clean(str(r.Country)), clean(str(r.Continent)), online)
				}
				return b.String()
			})
		}, formatOpt)
}

// regions lists the probe locations from GET /regions. Where that endpoint
// is missing it falls back to the codes monitors use (fallback: then only
// the codes are known).
func (c *call) regions(ctx context.Context) (regions []restapi.ProbeRegion, fallback bool, err error) {
	err = c.api.Get(ctx, "/regions", nil, &regions)
	if err == nil {
		return regions, false, nil
	}
	if !IsStatus(err, http.StatusNotFound) {
		return nil, false, err
	}
	all, lerr := c.listMonitors(ctx, "")
	if lerr != nil {
		return nil, false, lerr
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
		regions = append(regions, restapi.ProbeRegion{Code: code, Name: code})
	}
	return regions, true, nil
}

func monitorSummaryTool() toolSpec {
	return newTool("service_monitor_summary", "Monitor summary",
		"Workspace overview: monitor counts by status, open incidents, 24 h workspace uptime and the last incident.",
		KindRead, func(ctx context.Context, c *call, in Format) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			var s restapi.MonitorSummary
			if err := c.api.Get(ctx, "/monitors/summary", nil, &s); err != nil {
				return "", err
			}
			page, err := c.incidents(ctx, url.Values{"page_size": {"1"}})
			if err != nil {
				return "", err
			}
			var last *restapi.Incident
			if len(page.Items) > 0 {
				last = &page.Items[0]
			}
			out := struct {
				restapi.MonitorSummary
				LastIncident *restapi.Incident `json:"last_incident"`
			}{s, last}
			return render(f, out, func() string {
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
			var all []restapi.MaintenanceWindow
			if err := c.api.Get(ctx, "/maintenance", nil, &all); err != nil {
				return "", err
			}
			var out []restapi.MaintenanceWindow
			for _, w := range all {
				if in.Status == "" || w.State == in.Status {
					out = append(out, w)
				}
			}
			slices.SortStableFunc(out, func(a, b restapi.MaintenanceWindow) int { return strings.Compare(b.StartsAt, a.StartsAt) })
			if out == nil {
				out = []restapi.MaintenanceWindow{}
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
