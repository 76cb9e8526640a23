package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

func visibility(p *restapi.StatusPage) string {
	if p.IsPublic {
		return "public"
	}
	return "private"
}

func pageLine(p *restapi.StatusPage) string {
	return fmt.Sprintf("- **%s** (`%s`): slug `%s`, %s, custom domain %s, %d monitor(s), status %s, %s",
		clean(p.Title), p.ID, clean(p.Slug), visibility(p), clean(str(p.CustomDomain)), len(p.Monitors), str(p.OverallStatus), p.URL)
}

func pageMarkdown(p *restapi.StatusPage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Status page %s\n\n", clean(p.Title))
	fmt.Fprintf(&b, "- id: `%s`\n- slug: `%s`\n- visibility: %s\n- url: %s\n", p.ID, clean(p.Slug), visibility(p), p.URL)
	if p.Description != nil {
		fmt.Fprintf(&b, "- description (data): %s\n", clean(*p.Description))
	}
	fmt.Fprintf(&b, "- overall status: %s\n- show response times: %t\n- hide powered-by: %t\n", str(p.OverallStatus), p.ShowResponseTimes, p.HidePoweredBy)
	fmt.Fprintf(&b, "- logo: %s, favicon: %s, accent colour: %s, custom domain: %s\n", clean(str(p.LogoURL)), clean(str(p.FaviconURL)), clean(str(p.AccentColor)), clean(str(p.CustomDomain)))
	fmt.Fprintf(&b, "\nMonitors (%d), in page order:\n", len(p.Monitors))
	for _, m := range p.Monitors {
		fmt.Fprintf(&b, "- %s (`%s`) section %s, status %s\n", clean(m.Name), m.MonitorID, clean(str(m.Section)), m.CurrentStatus)
	}
	return b.String()
}

func listStatusPagesTool() toolSpec {
	return newTool("service_list_status_pages", "List status pages",
		"Status pages with slug, visibility, custom domain and monitor count.",
		KindRead, func(ctx context.Context, c *call, in Format) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			var pages []restapi.StatusPage
			if err := c.api.Get(ctx, "/status/pages/me", nil, &pages); err != nil {
				return "", err
			}
			type listed struct {
				restapi.StatusPage
				MonitorCount int `json:"monitor_count"`
			}
			out := make([]listed, len(pages))
			for i := range pages {
				out[i] = listed{pages[i], len(pages[i].Monitors)}
			}
			return render(f, out, func() string {
				var b strings.Builder
				fmt.Fprintf(&b, "%d status page(s).\n\n", len(pages))
				for i := range pages {
					b.WriteString(pageLine(&pages[i]) + "\n")
				}
				return b.String()
			})
		}, formatOpt)
}

type pageIDIn struct {
	StatusPageID string `json:"status_page_id" jsonschema:"status page id (UUID)"`
}

type getPageIn struct {
	StatusPageID string `json:"status_page_id" jsonschema:"status page id (UUID)"`
	Format
}

func (c *call) getPage(ctx context.Context, id string) (*restapi.StatusPage, error) {
	if err := required("status_page_id", id); err != nil {
		return nil, err
	}
	var p restapi.StatusPage
	if err := c.api.Get(ctx, "/status/pages/"+pathEscape(id), nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func getStatusPageTool() toolSpec {
	return newTool("service_get_status_page", "Get a status page",
		"A status page's settings and its monitors with sections, in page order.",
		KindRead, func(ctx context.Context, c *call, in getPageIn) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			p, err := c.getPage(ctx, in.StatusPageID)
			if err != nil {
				return "", err
			}
			return render(f, p, func() string { return pageMarkdown(p) })
		}, formatOpt)
}

type createPageIn struct {
	Title       string  `json:"title" jsonschema:"page title, 1-255 characters"`
	Description *string `json:"description,omitempty" jsonschema:"up to 1000 characters"`
	IsPublic    *bool   `json:"is_public,omitempty" jsonschema:"publish the page; without destructive mode the page is created non-public"`
}

func createStatusPageTool() toolSpec {
	return newTool("service_create_status_page", "Create a status page",
		"Create a status page (counts against the plan's status-page limit). Without destructive mode it is created non-public.",
		KindWrite, func(ctx context.Context, c *call, in createPageIn) (string, error) {
			t := strings.TrimSpace(in.Title)
			if t == "" || len([]rune(t)) > 255 {
				return "", invalid("title is required, 1-255 characters")
			}
			if in.Description != nil && len([]rune(*in.Description)) > 1000 {
				return "", invalid("description is at most 1000 characters")
			}
			public := in.IsPublic != nil && *in.IsPublic
			note := ""
			if public && !c.mode.Destructive {
				public = false
				note = "\n\nThe page was created non-public: publishing " + destructiveRefusalSuffix + "."
			}
			body := map[string]any{"title": t, "is_public": public}
			if in.Description != nil {
				body["description"] = *in.Description
			}
			var p restapi.StatusPage
			if err := c.api.Do(ctx, http.MethodPost, "/status/pages", nil, body, &p); err != nil {
				return "", err
			}
			return "Created status page.\n\n" + pageMarkdown(&p) + note, nil
		}, maxLen("title", 255), maxLen("description", 1000))
}

type updatePageIn struct {
	StatusPageID      string         `json:"status_page_id" jsonschema:"status page id (UUID)"`
	Title             *string        `json:"title,omitempty" jsonschema:"1-255 characters"`
	Description       *string        `json:"description,omitempty" jsonschema:"up to 1000 characters; empty clears"`
	Slug              *string        `json:"slug,omitempty" jsonschema:"3-64 characters; changing it needs destructive mode"`
	IsPublic          *bool          `json:"is_public,omitempty" jsonschema:"publish or unpublish; needs destructive mode"`
	LogoURL           *string        `json:"logo_url,omitempty" jsonschema:"https URL, or empty to clear"`
	AccentColor       *string        `json:"accent_color,omitempty" jsonschema:"hex colour such as #1a2b3c, or empty to clear"`
	FaviconURL        *string        `json:"favicon_url,omitempty" jsonschema:"https URL, or empty to clear; needs a white-label plan"`
	ShowResponseTimes *bool          `json:"show_response_times,omitempty" jsonschema:"show response times on the page"`
	HidePoweredBy     *bool          `json:"hide_powered_by,omitempty" jsonschema:"hide the powered-by line; needs a white-label plan"`
	OtherFields       map[string]any `json:"other_fields,omitempty" jsonschema:"the same settings nested in one object; anything else is refused"`
}

// pageFields are the settings service_update_status_page accepts.
var pageFields = []string{"title", "description", "slug", "is_public", "logo_url", "accent_color", "favicon_url", "show_response_times", "hide_powered_by"}

var hexColorRE = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// pageUpdateBody merges the named parameters and other_fields into one
// PATCH body and validates it.
func pageUpdateBody(in *updatePageIn) (map[string]any, error) {
	body := map[string]any{}
	set := func(k string, v any) {
		body[k] = v
	}
	if in.Title != nil {
		set("title", *in.Title)
	}
	if in.Description != nil {
		set("description", *in.Description)
	}
	if in.Slug != nil {
		set("slug", *in.Slug)
	}
	if in.IsPublic != nil {
		set("is_public", *in.IsPublic)
	}
	if in.LogoURL != nil {
		set("logo_url", *in.LogoURL)
	}
	if in.AccentColor != nil {
		set("accent_color", *in.AccentColor)
	}
	if in.FaviconURL != nil {
		set("favicon_url", *in.FaviconURL)
	}
	if in.ShowResponseTimes != nil {
		set("show_response_times", *in.ShowResponseTimes)
	}
	if in.HidePoweredBy != nil {
		set("hide_powered_by", *in.HidePoweredBy)
	}
	for k, v := range in.OtherFields {
		if !slices.Contains(pageFields, k) {
			return nil, invalid("other_fields.%s is not a status page setting; accepted: %s (custom domains are managed in the dashboard)", k, strings.Join(pageFields, ", "))
		}
		if prev, ok := body[k]; ok && fmt.Sprint(prev) != fmt.Sprint(v) {
			return nil, invalid("%s is given twice with different values (as a parameter and in other_fields)", k)
		}
		body[k] = v
	}
	if len(body) == 0 {
		return nil, invalid("pass at least one setting to change")
	}
	for k, v := range body {
		switch k {
		case "is_public", "show_response_times", "hide_powered_by":
			if _, ok := v.(bool); !ok {
				return nil, invalid("%s must be true or false", k)
			}
			continue
		}
		s, ok := v.(string)
		if !ok && v != nil {
			return nil, invalid("%s must be a string", k)
		}
		switch k {
		case "title":
			if n := len([]rune(strings.TrimSpace(s))); n < 1 || n > 255 {
				return nil, invalid("title must be 1-255 characters")
			}
		case "description":
			if len([]rune(s)) > 1000 {
				return nil, invalid("description is at most 1000 characters")
			}
		case "slug":
			if n := len(s); n < 3 || n > 64 {
				return nil, invalid("slug must be 3-64 characters")
			}
		case "logo_url", "favicon_url":
			if s != "" {
				u, err := url.Parse(s)
				if err != nil || u.Scheme != "https" || u.Host == "" {
					return nil, invalid("%s must be an https URL (or empty to clear)", k)
				}
			}
		case "accent_color":
			if s != "" && !hexColorRE.MatchString(s) {
				return nil, invalid("accent_color must be a hex colour such as #1a2b3c (or empty to clear)")
			}
		}
	}
	return body, nil
}

func updateStatusPageTool() toolSpec {
	return newTool("service_update_status_page", "Update a status page",
		"Change a status page's settings; only passed fields change. Without destructive mode is_public and slug cannot change and an already public page cannot be edited. Custom domains are managed in the dashboard.",
		KindWrite, func(ctx context.Context, c *call, in updatePageIn) (string, error) {
			if err := required("status_page_id", in.StatusPageID); err != nil {
				return "", err
			}
			body, err := pageUpdateBody(&in)
			if err != nil {
				return "", err
			}
			if !c.mode.Destructive {
				if _, ok := body["is_public"]; ok {
					return "", refuseDestructive("changing is_public of a status page")
				}
				if _, ok := body["slug"]; ok {
					return "", refuseDestructive("changing the slug of a status page")
				}
				cur, err := c.getPage(ctx, in.StatusPageID)
				if err != nil {
					return "", err
				}
				if cur.IsPublic {
					return "", refuseDestructive("editing a public status page")
				}
			}
			var p restapi.StatusPage
			if err := c.api.Do(ctx, http.MethodPatch, "/status/pages/"+pathEscape(in.StatusPageID), nil, body, &p); err != nil {
				return "", err
			}
			return "Updated status page.\n\n" + pageMarkdown(&p), nil
		}, maxLen("title", 255), maxLen("description", 1000))
}

type pageMonitor struct {
	MonitorID string `json:"monitor_id" jsonschema:"monitor id (UUID)"`
	Section   string `json:"section,omitempty" jsonschema:"section heading on the page, up to 100 characters"`
}

type setPageMonitorsIn struct {
	StatusPageID string        `json:"status_page_id" jsonschema:"status page id (UUID)"`
	Monitors     []pageMonitor `json:"monitors,omitempty" jsonschema:"the page's monitors in order (up to 500); omitted monitors are removed from the page, not deleted"`
	RemoveAll    *bool         `json:"remove_all,omitempty" jsonschema:"must be true to send an empty list (removes every monitor from the page); default false"`
}

func setStatusPageMonitorsTool() toolSpec {
	return newTool("service_set_status_page_monitors", "Set status page monitors",
		"Replace a status page's monitors, in order. Monitors left out are removed from the page (not deleted). An empty list is refused unless remove_all is true.",
		KindDestructive, func(ctx context.Context, c *call, in setPageMonitorsIn) (string, error) {
			if !c.mode.Destructive {
				return "", refuseDestructive("replacing the monitors of a status page")
			}
			if err := required("status_page_id", in.StatusPageID); err != nil {
				return "", err
			}
			removeAll := in.RemoveAll != nil && *in.RemoveAll
			if len(in.Monitors) == 0 && !removeAll {
				return "", invalid("refused: an empty monitors list would remove every monitor from the page; pass remove_all: true to do that")
			}
			if len(in.Monitors) > 0 && removeAll {
				return "", invalid("remove_all: true needs an empty monitors list")
			}
			if len(in.Monitors) > 500 {
				return "", invalid("at most 500 monitors per call, got %d", len(in.Monitors))
			}
			entries := make([]map[string]any, 0, len(in.Monitors))
			for i, m := range in.Monitors {
				if strings.TrimSpace(m.MonitorID) == "" {
					return "", invalid("monitors[%d].monitor_id is required", i)
				}
				if len([]rune(m.Section)) > 100 {
					return "", invalid("monitors[%d].section is at most 100 characters", i)
				}
				e := map[string]any{"monitor_id": m.MonitorID}
				if m.Section != "" {
					e["section"] = m.Section
				}
				entries = append(entries, e)
			}
			var p restapi.StatusPage
			if err := c.api.Do(ctx, http.MethodPut, "/status/pages/"+pathEscape(in.StatusPageID)+"/monitors", nil, map[string]any{"monitors": entries}, &p); err != nil {
				return "", err
			}
			if p.ID == "" {
				return fmt.Sprintf("The page now shows %d monitor(s).", len(entries)), nil
			}
			return "Replaced the page's monitors.\n\n" + pageMarkdown(&p), nil
		}, maxItems("monitors", 500))
}

func deleteStatusPageTool() toolSpec {
	return newTool("service_delete_status_page", "Delete a status page",
		"Permanently delete a status page and its subscriber list; monitors are not affected. Cannot be undone; confirm with the user first.",
		KindDestructive, func(ctx context.Context, c *call, in pageIDIn) (string, error) {
			if !c.mode.Destructive {
				return "", refuseDestructive("deleting a status page")
			}
			if err := required("status_page_id", in.StatusPageID); err != nil {
				return "", err
			}
			if err := c.api.Do(ctx, http.MethodDelete, "/status/pages/"+pathEscape(in.StatusPageID), nil, nil, nil); err != nil {
				return "", err
			}
			return fmt.Sprintf("Deleted status page `%s` and its subscriber list; monitors are unaffected.", in.StatusPageID), nil
		})
}
