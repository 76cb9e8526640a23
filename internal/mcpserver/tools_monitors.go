package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// monitorURL is the monitor's target URL with the password of its user
// info redacted ("" without a URL).
func monitorURL(m *restapi.Monitor) string {
	if m.URL == nil {
		return ""
	}
	return redactURL(*m.URL)
}

// monitorConfig is the monitor's config object as REST shows it (stored
// credentials already [REDACTED]); nil when it has none.
func monitorConfig(m *restapi.Monitor) map[string]any {
	var cfg map[string]any
	_ = json.Unmarshal(m.Config, &cfg)
	return cfg
}

// redactedMonitor is m as the tools return it: the REST monitor object,
// every field kept, with credentials in its config and URL redacted.
func redactedMonitor(m restapi.Monitor) restapi.Monitor {
	if m.URL != nil {
		u := redactURL(*m.URL)
		m.URL = &u
	}
	if cfg := monitorConfig(&m); cfg != nil {
		if raw, err := json.Marshal(RedactConfig(cfg)); err == nil {
			m.Config = raw
		}
	}
	return m
}

// monitorTypes are monv1.MonitorTypes as the tool arguments spell them.
var monitorTypes = monv1.MonitorTypeNames()

// typeArgDescription and urlArgDescription describe the type and url
// arguments of the monitor tools from monv1.MonitorTypeRegistry (its
// extension types, its URL column), so a type added there shows in them.
var typeArgDescription, urlArgDescription = func() (string, string) {
	var spec, ext, urls, https []string
	for _, r := range monv1.MonitorTypeRegistry {
		name := string(r.Type)
		if r.Type == monv1.MonitorHTTP {
			name += " (default)"
		}
		if r.Extension {
			ext = append(ext, name)
		} else {
			spec = append(spec, name)
		}
		if r.URL != monv1.URLNone {
			urls = append(urls, string(r.Type))
		}
		if r.URL == monv1.URLHTTPS {
			https = append(https, string(r.Type))
		}
	}
	typ := strings.Join(spec, ", ")
	if len(ext) > 0 {
		typ += ", or the extension types " + andList(ext)
	}
	url := "target URL, required for " + andList(urls)
	if len(https) > 0 {
		url += " (" + andList(https) + " needs https)"
	}
	return typ + "; cannot change later", url
}()

// andList joins words as prose: "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

var keyRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$`)

func (c *call) getMonitor(ctx context.Context, id string) (*restapi.Monitor, error) {
	if err := required("monitor_id", id); err != nil {
		return nil, err
	}
	var d restapi.Monitor
	if err := c.api.Get(ctx, "/monitors/"+pathEscape(strings.TrimSpace(id)), nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

func (c *call) listMonitors(ctx context.Context, tag string) ([]restapi.Monitor, error) {
	var q url.Values
	if tag != "" {
		q = url.Values{"tag": {tag}}
	}
	var out []restapi.Monitor
	if err := c.api.Get(ctx, "/monitors", q, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// monitorByKey finds a monitor by its monitoring-as-code key.
func (c *call) monitorByKey(ctx context.Context, key string) (*restapi.Monitor, error) {
	var d restapi.Monitor
	err := c.api.Get(ctx, "/automation/monitors/"+pathEscape(key), nil, &d)
	if err == nil && d.ID != "" {
		return &d, nil
	}
	if err != nil && !IsStatus(err, http.StatusNotFound) {
		return nil, err
	}
	all, lerr := c.listMonitors(ctx, "")
	if lerr != nil {
		return nil, lerr
	}
	for i := range all {
		if all[i].Key != nil && *all[i].Key == key {
			return &all[i], nil
		}
	}
	return nil, fmt.Errorf("no monitor has the key %q", key)
}

// monitorLine is one monitor as a markdown list item.
func monitorLine(m *restapi.Monitor) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- **%s** (`%s`, %s) status **%s**", clean(m.Name), m.ID, m.Type, m.CurrentStatus)
	if u := monitorURL(m); u != "" {
		fmt.Fprintf(&b, ", %s", clean(u))
	}
	fmt.Fprintf(&b, ", every %ds, uptime 24h %s / 30d %s", m.IntervalSeconds, pct(m.Uptime24h), pct(m.Uptime30d))
	if m.OpenIncident != nil {
		fmt.Fprintf(&b, ", open incident `%s` since %s", m.OpenIncident.ID, m.OpenIncident.StartedAt)
	}
	if m.UnderMaintenance {
		b.WriteString(", in maintenance")
	}
	if len(m.Tags) > 0 {
		fmt.Fprintf(&b, ", tags: %s", clean(strings.Join(m.Tags, ", ")))
	}
	return b.String()
}

// monitorMarkdown is the detailed view of one monitor.
func monitorMarkdown(m *restapi.Monitor) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Monitor %s\n\n", clean(m.Name))
	fmt.Fprintf(&b, "- id: `%s`\n- type: %s\n", m.ID, m.Type)
	if u := monitorURL(m); u != "" {
		fmt.Fprintf(&b, "- url: %s\n", clean(u))
	}
	if m.Key != nil {
		fmt.Fprintf(&b, "- key: `%s`\n", clean(*m.Key))
	}
	fmt.Fprintf(&b, "- status: **%s** (active: %t)\n- interval: %ds\n", m.CurrentStatus, m.IsActive, m.IntervalSeconds)
	fmt.Fprintf(&b, "- uptime: 24h %s, 30d %s\n", pct(m.Uptime24h), pct(m.Uptime30d))
	fmt.Fprintf(&b, "- regions: %s (effective: %s)\n", listOrDefault(m.Regions, "plan default"), listOrDefault(m.EffectiveRegions, "none"))
	fmt.Fprintf(&b, "- last check: %s, status %s, %s\n", str(m.LastCheckedAt), str(m.LastStatus), ms(m.LastResponseTimeMs))
	if m.LastError != nil && *m.LastError != "" {
		fmt.Fprintf(&b, "- last error (data): %s\n", clean(*m.LastError))
	}
	if m.OpenIncident != nil {
		fmt.Fprintf(&b, "- open incident: `%s` since %s\n", m.OpenIncident.ID, m.OpenIncident.StartedAt)
	} else {
		b.WriteString("- open incident: none\n")
	}
	if m.UnderMaintenance {
		b.WriteString("- under maintenance: yes\n")
	}
	if len(m.Tags) > 0 {
		fmt.Fprintf(&b, "- tags: %s\n", clean(strings.Join(m.Tags, ", ")))
	}
	if m.HeartbeatURL != nil {
		fmt.Fprintf(&b, "- heartbeat URL: %s\n", *m.HeartbeatURL)
	}
	if cfg := monitorConfig(m); len(cfg) > 0 {
		b.WriteString("\nConfig (stored credentials shown as [REDACTED]; send [REDACTED] back to keep them):\n")
		b.WriteString(jsonBlock(RedactConfig(cfg)))
	}
	return b.String()
}

func listOrDefault(v []string, def string) string {
	if len(v) == 0 {
		return def
	}
	return strings.Join(v, ", ")
}

// --- read tools -------------------------------------------------------------

type listMonitorsIn struct {
	Status string `json:"status,omitempty" jsonschema:"filter by live status: up, down, degraded, paused, pending or maintenance"`
	Tag    string `json:"tag,omitempty" jsonschema:"only monitors with this tag"`
	Search string `json:"search,omitempty" jsonschema:"case-insensitive text to find in the monitor name or URL"`
	Limit  *int   `json:"limit,omitempty" jsonschema:"page size, 1-200 (default 50)"`
	Offset *int   `json:"offset,omitempty" jsonschema:"how many matching monitors to skip (default 0)"`
	Format
}

func listMonitorsTool() toolSpec {
	return newTool("service_list_monitors", "List monitors",
		"List the workspace's monitors with live status and 24 h / 30 d uptime, newest first. Filter by status, tag or search text; page with limit and offset.",
		KindRead, func(ctx context.Context, c *call, in listMonitorsIn) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			if err := oneOf("status", in.Status, "up", "down", "degraded", "paused", "pending", "maintenance"); err != nil {
				return "", err
			}
			limit, err := intParam("limit", in.Limit, 50, 1, 200)
			if err != nil {
				return "", err
			}
			offset, err := intParam("offset", in.Offset, 0, 0, 1<<30)
			if err != nil {
				return "", err
			}
			all, err := c.listMonitors(ctx, strings.ToLower(strings.TrimSpace(in.Tag)))
			if err != nil {
				return "", err
			}
			search := strings.ToLower(strings.TrimSpace(in.Search))
			var match []restapi.Monitor
			for _, m := range all {
				if in.Status != "" && m.CurrentStatus != in.Status {
					continue
				}
				if search != "" && !strings.Contains(strings.ToLower(m.Name), search) && !strings.Contains(strings.ToLower(monitorURL(&m)), search) {
					continue
				}
				match = append(match, m)
			}
			page := match[min(offset, len(match)):min(offset+limit, len(match))]
			items := make([]restapi.Monitor, 0, len(page))
			for _, m := range page {
				items = append(items, redactedMonitor(m))
			}
			data := map[string]any{"total": len(match), "offset": offset, "limit": limit, "items": items}
			return render(f, data, func() string {
				var b strings.Builder
				fmt.Fprintf(&b, "%d monitor(s) match; showing %d from offset %d.\n\n", len(match), len(page), offset)
				for i := range page {
					b.WriteString(monitorLine(&page[i]) + "\n")
				}
				if offset+len(page) < len(match) {
					fmt.Fprintf(&b, "\nMore: call again with offset %d.\n", offset+len(page))
				}
				return b.String()
			})
		}, formatOpt, enum("status", "up", "down", "degraded", "paused", "pending", "maintenance"), between("limit", 1, 200))
}

type getMonitorIn struct {
	MonitorID string `json:"monitor_id,omitempty" jsonschema:"monitor id (UUID); give this or key"`
	Key       string `json:"key,omitempty" jsonschema:"monitoring-as-code key of the monitor; give this or monitor_id"`
	Format
}

func getMonitorTool() toolSpec {
	return newTool("service_get_monitor", "Get a monitor",
		"Get one monitor by monitor_id or key: config (stored credentials shown as [REDACTED]), regions, live status, uptime, last check and open incident.",
		KindRead, func(ctx context.Context, c *call, in getMonitorIn) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			id, key := strings.TrimSpace(in.MonitorID), strings.TrimSpace(in.Key)
			var d *restapi.Monitor
			switch {
			case id != "" && key != "":
				return "", invalid("give monitor_id or key, not both")
			case id != "":
				d, err = c.getMonitor(ctx, id)
			case key != "":
				d, err = c.monitorByKey(ctx, key)
			default:
				return "", invalid("monitor_id or key is required")
			}
			if err != nil {
				return "", err
			}
			return render(f, redactedMonitor(*d), func() string { return monitorMarkdown(d) })
		}, formatOpt)
}

type checkResultsIn struct {
	MonitorID string `json:"monitor_id" jsonschema:"monitor id (UUID)"`
	Limit     *int   `json:"limit,omitempty" jsonschema:"rows, 1-500 (default 50)"`
	Before    string `json:"before,omitempty" jsonschema:"page back: pass the previous answer's next_before unchanged"`
	Region    string `json:"region,omitempty" jsonschema:"only checks from this region code"`
	Status    string `json:"status,omitempty" jsonschema:"up, down, degraded, or problem (anything not up)"`
	Format
}

func checkResultsTool() toolSpec {
	return newTool("service_get_check_results", "Get check results",
		"Check history of a monitor, newest first, one row per check per region. Page back with before = the previous answer's next_before.",
		KindRead, func(ctx context.Context, c *call, in checkResultsIn) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			if err := required("monitor_id", in.MonitorID); err != nil {
				return "", err
			}
			limit, err := intParam("limit", in.Limit, 50, 1, 500)
			if err != nil {
				return "", err
			}
			if err := oneOf("status", in.Status, "up", "down", "degraded", "problem"); err != nil {
				return "", err
			}
			q := url.Values{"limit": {strconv.Itoa(limit)}}
			if in.Before != "" {
				q.Set("before", in.Before)
			}
			if in.Region != "" {
				q.Set("region", in.Region)
			}
			if in.Status != "" {
				q.Set("status", in.Status)
			}
			var page restapi.CheckPage
			if err := c.api.Get(ctx, "/monitors/"+pathEscape(in.MonitorID)+"/checks", q, &page); err != nil {
				return "", err
			}
			return render(f, page, func() string {
				var b strings.Builder
				fmt.Fprintf(&b, "%d check(s), newest first.\n\n| checked at | region | status | code | time | error |\n|---|---|---|---|---|---|\n", len(page.Items))
				for _, r := range page.Items {
					code := "-"
					if r.StatusCode != nil {
						code = strconv.Itoa(*r.StatusCode)
					}
					e := ""
					if r.ErrorMessage != nil {
						e = clean(str(r.ErrorType) + ": " + *r.ErrorMessage)
					}
					fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.CheckedAt, r.Region, r.Status, code, ms(&r.ResponseTimeMs), e)
				}
				if page.NextBefore != nil {
					fmt.Fprintf(&b, "\nOlder checks: call again with before = `%s`.\n", *page.NextBefore)
				} else {
					b.WriteString("\nNo older checks.\n")
				}
				return b.String()
			})
		}, formatOpt, enum("status", "up", "down", "degraded", "problem"), between("limit", 1, 500))
}

// --- write tools ------------------------------------------------------------

type createMonitorIn struct {
	Name            string         `json:"name" jsonschema:"display name, 1-255 characters"`
	Type            string         `json:"type,omitempty" jsonschema:"the monitor type (described from monv1.MonitorTypeRegistry)"`
	URL             string         `json:"url,omitempty" jsonschema:"target URL (described from monv1.MonitorTypeRegistry)"`
	IntervalSeconds *int           `json:"interval_seconds,omitempty" jsonschema:"seconds between checks, 15-900, not below the plan minimum"`
	Config          map[string]any `json:"config,omitempty" jsonschema:"type-specific settings (method, headers, timeout, expected_status_codes, keyword, host, port, cron_expression, ...)"`
	Tags            []string       `json:"tags,omitempty" jsonschema:"up to 20 lower-case labels of up to 32 characters"`
	Regions         []string       `json:"regions,omitempty" jsonschema:"probe location codes (default: the plan's locations)"`
	Key             string         `json:"key,omitempty" jsonschema:"monitoring-as-code key: with a key the first call creates and later calls update the same monitor; without one every call creates a new monitor"`
	Paused          *bool          `json:"paused,omitempty" jsonschema:"create the monitor paused"`
}

// checkMonitorFields validates the fields shared by create and update.
func checkMonitorFields(typ, rawURL string, interval *int, tags, regions []string, cfg map[string]any) ([]string, error) {
	if rawURL != "" {
		u, err := url.Parse(rawURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, invalid("url must be a valid http:// or https:// URL")
		}
		if info, _ := monv1.LookupMonitorType(monv1.MonitorType(typ)); info.URL == monv1.URLHTTPS && u.Scheme != "https" {
			return nil, invalid("an %s monitor needs an https URL", typ)
		}
	}
	if interval != nil && (*interval < 15 || *interval > 900) {
		return nil, invalid("interval_seconds must be between 15 and 900, got %d", *interval)
	}
	if len(tags) > 20 {
		return nil, invalid("at most 20 tags, got %d", len(tags))
	}
	var out []string
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || len(t) > 32 {
			return nil, invalid("tags must be 1-32 characters, got %q", t)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if regions != nil && (len(regions) < 1 || len(regions) > 50) {
		return nil, invalid("regions must list 1-50 location codes")
	}
	for _, r := range regions {
		if strings.TrimSpace(r) == "" {
			return nil, invalid("region codes must not be empty")
		}
	}
	if cfg != nil {
		raw, _ := json.Marshal(cfg)
		if len(cfg) > 50 || len(raw) > 32*1024 {
			return nil, invalid("config may have at most 50 keys and 32 KB as JSON")
		}
	}
	return out, nil
}

func createMonitorTool() toolSpec {
	return newTool("service_create_monitor", "Create a monitor",
		"Create a monitor. With key, the first call creates it and later calls with the same key update it (repeat-safe); without key every call creates a new monitor.",
		KindWrite, func(ctx context.Context, c *call, in createMonitorIn) (string, error) {
			name := strings.TrimSpace(in.Name)
			if name == "" || len(name) > 255 {
				return "", invalid("name is required, 1-255 characters")
			}
			typ := strings.ToLower(strings.TrimSpace(in.Type))
			if typ == "" {
				typ = string(monv1.MonitorHTTP)
			}
			if err := oneOf("type", typ, monitorTypes...); err != nil {
				return "", err
			}
			if info, _ := monv1.LookupMonitorType(monv1.MonitorType(typ)); info.URL != monv1.URLNone && strings.TrimSpace(in.URL) == "" {
				return "", invalid("url is required for %s monitors", typ)
			}
			tags, err := checkMonitorFields(typ, in.URL, in.IntervalSeconds, in.Tags, in.Regions, in.Config)
			if err != nil {
				return "", err
			}
			if containsRedacted(in.Config) {
				return "", invalid("config contains %s: a new monitor has no stored value to keep; send the real value", Redacted)
			}
			body := map[string]any{"name": name, "type": typ}
			if in.URL != "" {
				body["url"] = in.URL
			}
			if in.IntervalSeconds != nil {
				body["interval_seconds"] = *in.IntervalSeconds
			}
			if in.Config != nil {
				body["config"] = in.Config
			}
			if in.Tags != nil {
				body["tags"] = tags
			}
			if in.Regions != nil {
				body["regions"] = in.Regions
			}
			var d restapi.Monitor
			verb := "Created"
			if key := strings.TrimSpace(in.Key); key != "" {
				if !keyRE.MatchString(key) {
					return "", invalid("key must be 1-128 characters of letters, digits and . _ : / -, starting with a letter or digit")
				}
				if in.Paused != nil {
					body["paused"] = *in.Paused
				}
				if err := c.api.Do(ctx, http.MethodPut, "/automation/monitors/"+pathEscape(key), nil, body, &d); err != nil {
					return "", err
				}
				verb = "Created or updated (by key)"
			} else {
				if err := c.api.Do(ctx, http.MethodPost, "/monitors", nil, body, &d); err != nil {
					return "", err
				}
				if in.Paused != nil && *in.Paused {
					var p restapi.Monitor
					if err := c.api.Do(ctx, http.MethodPost, "/monitors/"+pathEscape(d.ID)+"/pause", nil, nil, &p); err != nil {
						return "", fmt.Errorf("monitor %s was created but pausing it failed: %w", d.ID, err)
					}
					d = p
				}
			}
			return verb + " monitor.\n\n" + monitorMarkdown(&d), nil
		}, enum("type", toAny(monitorTypes)...), describe("type", typeArgDescription), describe("url", urlArgDescription), between("interval_seconds", 15, 900), maxItems("tags", 20), maxLen("name", 255))
}

func toAny(v []string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}

type updateMonitorIn struct {
	MonitorID       string         `json:"monitor_id" jsonschema:"monitor id (UUID)"`
	Name            *string        `json:"name,omitempty" jsonschema:"new name"`
	URL             *string        `json:"url,omitempty" jsonschema:"new target URL"`
	IntervalSeconds *int           `json:"interval_seconds,omitempty" jsonschema:"seconds between checks, 15-900"`
	Config          map[string]any `json:"config,omitempty" jsonschema:"replaces the whole config object; values shown as [REDACTED] may be sent back as [REDACTED] to keep the stored value"`
	Tags            []string       `json:"tags,omitempty" jsonschema:"replaces the tags"`
	Regions         []string       `json:"regions,omitempty" jsonschema:"replaces the probe locations (1-50 codes)"`
}

func updateMonitorTool() toolSpec {
	return newTool("service_update_monitor", "Update a monitor",
		"Change a monitor: only passed fields change. config replaces the whole config object ([REDACTED] keeps a stored credential); regions replaces the locations; the type cannot change.",
		KindWrite, func(ctx context.Context, c *call, in updateMonitorIn) (string, error) {
			if err := required("monitor_id", in.MonitorID); err != nil {
				return "", err
			}
			if in.Name == nil && in.URL == nil && in.IntervalSeconds == nil && in.Config == nil && in.Tags == nil && in.Regions == nil {
				return "", invalid("pass at least one of name, url, interval_seconds, config, tags, regions")
			}
			cur, err := c.getMonitor(ctx, in.MonitorID)
			if err != nil {
				return "", err
			}
			rawURL := ""
			if in.URL != nil {
				rawURL = *in.URL
				if cur.URL != nil && rawURL == redactURL(*cur.URL) {
					rawURL = *cur.URL // the redacted form keeps the stored password
				}
			}
			tags, err := checkMonitorFields(cur.Type, rawURL, in.IntervalSeconds, in.Tags, in.Regions, in.Config)
			if err != nil {
				return "", err
			}
			body := map[string]any{}
			if in.Name != nil {
				n := strings.TrimSpace(*in.Name)
				if n == "" || len(n) > 255 {
					return "", invalid("name must be 1-255 characters")
				}
				body["name"] = n
			}
			if in.URL != nil {
				body["url"] = rawURL
			}
			if in.IntervalSeconds != nil {
				body["interval_seconds"] = *in.IntervalSeconds
			}
			if in.Tags != nil {
				body["tags"] = nonNilStrings(tags)
			}
			if in.Config != nil {
				cfg, err := replacementConfig(in.Config, monitorConfig(cur))
				if err != nil {
					return "", err
				}
				body["config"] = cfg
			}
			d := cur
			var warnings []string
			if len(body) > 0 {
				var out restapi.Monitor
				if err := c.api.Do(ctx, http.MethodPut, "/monitors/"+pathEscape(cur.ID), nil, body, &out); err != nil {
					return "", err
				}
				d, warnings = &out, out.Warnings
			}
			if in.Regions != nil {
				if err := c.api.Do(ctx, http.MethodPut, "/monitors/"+pathEscape(cur.ID)+"/regions", nil, map[string]any{"regions": in.Regions}, nil); err != nil {
					return "", fmt.Errorf("updating the regions failed (other fields were saved): %w", err)
				}
				if d, err = c.getMonitor(ctx, cur.ID); err != nil {
					return "", err
				}
			}
			msg := "Updated monitor.\n\n"
			if len(warnings) > 0 {
				// What the update dropped (a stored credential not sent
				// again when the target moved to another origin).
				msg += "Warnings:\n"
				for _, w := range warnings {
					msg += "- " + clean(w) + "\n"
				}
				msg += "\n"
			}
			return msg + monitorMarkdown(d), nil
		}, between("interval_seconds", 15, 900), maxItems("tags", 20), maxItems("regions", 50))
}

// replacementConfig turns the config an update sends into the body of a
// REST update, which merges keys: [REDACTED] values get the stored ones,
// and keys of the stored config that were left out are sent as null so the
// whole object is replaced.
func replacementConfig(sent, stored map[string]any) (map[string]any, error) {
	cfg, err := RestoreRedacted(sent, stored)
	if err != nil {
		return nil, invalid("%v", err)
	}
	for k := range stored {
		if _, ok := cfg[k]; !ok {
			cfg[k] = nil
		}
	}
	return cfg, nil
}

func nonNilStrings(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

type monitorIDIn struct {
	MonitorID string `json:"monitor_id" jsonschema:"monitor id (UUID)"`
}

func pauseMonitorTool() toolSpec {
	return monitorActionTool("service_pause_monitor", "Pause a monitor",
		"Pause a monitor: checks and alerts stop until it is resumed; history is kept.",
		"pause", "Paused monitor: checks and alerts stop until resumed.")
}

func resumeMonitorTool() toolSpec {
	return monitorActionTool("service_resume_monitor", "Resume a monitor",
		"Resume a paused monitor; it is checked right away.",
		"resume", "Resumed monitor: it is checked right away.")
}

// monitorActionTool is a write tool that posts /monitors/:id/<action> and
// reports done followed by the monitor.
func monitorActionTool(name, title, description, action, done string) toolSpec {
	return newTool(name, title, description,
		KindWrite, func(ctx context.Context, c *call, in monitorIDIn) (string, error) {
			if err := required("monitor_id", in.MonitorID); err != nil {
				return "", err
			}
			var d restapi.Monitor
			if err := c.api.Do(ctx, http.MethodPost, "/monitors/"+pathEscape(in.MonitorID)+"/"+action, nil, nil, &d); err != nil {
				return "", err
			}
			return done + "\n\n" + monitorLine(&d), nil
		})
}

func runCheckTool() toolSpec {
	return newTool("service_run_check", "Run a check now",
		"Run one real check of a monitor now from one region, recorded like a scheduled check. Refused for paused monitors. Limited to 30 per 5 minutes.",
		KindWrite, func(ctx context.Context, c *call, in monitorIDIn) (string, error) {
			d, err := c.getMonitor(ctx, in.MonitorID)
			if err != nil {
				return "", err
			}
			if !d.IsActive || d.CurrentStatus == "paused" {
				return "", fmt.Errorf("refused: monitor %s is paused; resume it before running a check", d.ID)
			}
			var r restapi.CheckResult
			if err := c.api.Do(ctx, http.MethodPost, "/monitors/"+pathEscape(d.ID)+"/run-check", nil, nil, &r); err != nil {
				return "", err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "Ran a check of **%s** (`%s`)", clean(d.Name), d.ID)
			if r.Region != "" {
				fmt.Fprintf(&b, " from %s", r.Region)
			}
			if r.Status != "" {
				fmt.Fprintf(&b, ": status **%s**, %s", r.Status, ms(&r.ResponseTimeMs))
				if r.StatusCode != nil {
					fmt.Fprintf(&b, ", HTTP %d", *r.StatusCode)
				}
				if r.ErrorMessage != nil && *r.ErrorMessage != "" {
					fmt.Fprintf(&b, ", error (data): %s", clean(str(r.ErrorType)+": "+*r.ErrorMessage))
				}
			}
			b.WriteString(".\n\n")
			b.WriteString(jsonBlock(r))
			return b.String(), nil
		})
}

func deleteMonitorTool() toolSpec {
	return newTool("service_delete_monitor", "Delete a monitor",
		"Permanently delete a monitor with its check history and incidents. Cannot be undone; confirm with the user first.",
		KindDestructive, func(ctx context.Context, c *call, in monitorIDIn) (string, error) {
			if !c.mode.Destructive {
				return "", refuseDestructive("deleting a monitor")
			}
			if err := required("monitor_id", in.MonitorID); err != nil {
				return "", err
			}
			if err := c.api.Do(ctx, http.MethodDelete, "/monitors/"+pathEscape(in.MonitorID), nil, nil, nil); err != nil {
				return "", err
			}
			return fmt.Sprintf("Deleted monitor `%s` with its check history and incidents.", in.MonitorID), nil
		})
}
