package kubectlplugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/uptime-operator/uptime-operator/internal/aggregated"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// tableAccept asks for the Table kubectl prints, so the plugin shows the
// columns the server defines for `kubectl get incidents`.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

func runStatus(ctx context.Context, c *client, args []string) error {
	if len(args) != 0 {
		return errors.New("usage: kubectl uptime status")
	}
	var sum restapi.MonitorSummary
	if err := c.do(ctx, http.MethodGet, "/monitors/summary", "", nil, &sum); err != nil {
		return err
	}
	var monitors []restapi.Monitor
	if err := c.do(ctx, http.MethodGet, "/monitors", "", nil, &monitors); err != nil {
		return err
	}
	var regions []restapi.ProbeRegion
	if err := c.do(ctx, http.MethodGet, "/regions", "", nil, &regions); err != nil {
		return err
	}
	var open aggregated.IncidentList
	if err := c.do(ctx, http.MethodGet, "/uptimeincidents?fieldSelector="+url.QueryEscape("status.state=open"), "", nil, &open); err != nil {
		return err
	}
	uptime := "n/a"
	if sum.Uptime24h != nil {
		uptime = fmt.Sprintf("%.2f%%", *sum.Uptime24h)
	}
	c.printf("Workspace %s: %d monitors (%d up, %d down, %d degraded), %d open incidents, 24 h uptime %s\n",
		c.namespace, sum.Total, sum.Counts["up"], sum.Counts["down"], sum.Counts["degraded"], len(open.Items), uptime)

	var offline []string
	for _, r := range regions {
		// A region checking no monitor may sit idle (scaled to zero).
		if !r.Online && r.Monitors > 0 {
			offline = append(offline, r.Code)
		}
	}
	if len(offline) == 0 {
		c.printf("Regions offline: none\n")
	} else {
		c.printf("Regions offline: %s\n", strings.Join(offline, ", "))
	}

	tw := tabwriter.NewWriter(c.out, 0, 4, 3, ' ', 0)
	var down int
	for _, m := range monitors {
		if m.CurrentStatus != "down" && m.CurrentStatus != "degraded" {
			continue
		}
		if down == 0 {
			fmt.Fprintln(tw, "\nMONITOR\tSTATUS\tSINCE\tLAST ERROR")
		}
		down++
		since := "-"
		if m.OpenIncident != nil {
			since = m.OpenIncident.StartedAt
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.CurrentStatus, since, oneLine(deref(m.LastError)))
	}
	if len(open.Items) > 0 {
		fmt.Fprintln(tw, "\nINCIDENT\tMONITOR\tSTARTED\tACKNOWLEDGED")
		for _, inc := range open.Items {
			acked := inc.Status.AcknowledgedBy
			if inc.Status.AcknowledgedAt == nil {
				acked = "no"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", inc.Name, inc.Spec.Monitor.Name, inc.Status.StartedAt.UTC().Format("2006-01-02T15:04:05Z"), acked)
		}
	}
	return tw.Flush()
}

func runIncidents(ctx context.Context, c *client, args []string) error {
	if len(args) != 0 {
		return errors.New("usage: kubectl uptime incidents [--all]")
	}
	path := "/uptimeincidents"
	if !c.opts.all {
		path += "?fieldSelector=" + url.QueryEscape("status.state=open")
	}
	var t metav1.Table
	if err := c.do(ctx, http.MethodGet, path, tableAccept, nil, &t); err != nil {
		return err
	}
	if len(t.Rows) == 0 {
		if c.opts.all {
			c.printf("No incidents in %s.\n", c.namespace)
		} else {
			c.printf("No open incidents in %s.\n", c.namespace)
		}
		return nil
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 3, ' ', 0)
	var cols []string
	for _, col := range t.ColumnDefinitions {
		if col.Priority == 0 {
			cols = append(cols, strings.ToUpper(col.Name))
		}
	}
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for _, row := range t.Rows {
		cells := make([]string, 0, len(cols))
		for i, col := range t.ColumnDefinitions {
			if col.Priority == 0 && i < len(row.Cells) {
				cells = append(cells, fmt.Sprint(row.Cells[i]))
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// incidentAction posts an action subresource of incident id and returns
// the updated incident.
func incidentAction(ctx context.Context, c *client, id, action string, body any) (*aggregated.Incident, error) {
	var inc aggregated.Incident
	if body == nil {
		body = map[string]any{}
	}
	err := c.do(ctx, http.MethodPost, "/uptimeincidents/"+url.PathEscape(id)+"/"+action, "", body, &inc)
	return &inc, err
}

func runAck(ctx context.Context, c *client, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: kubectl uptime ack INCIDENT")
	}
	inc, err := incidentAction(ctx, c, args[0], "acknowledge", nil)
	if err != nil {
		return err
	}
	c.printf("incident %s (%s) acknowledged by %s\n", inc.Name, inc.Spec.Monitor.Name, inc.Status.AcknowledgedBy)
	return nil
}

func runResolve(ctx context.Context, c *client, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: kubectl uptime resolve INCIDENT [--note TEXT]")
	}
	inc, err := incidentAction(ctx, c, args[0], "resolve", map[string]any{"note": c.opts.note})
	if err != nil {
		return err
	}
	c.printf("incident %s (%s) resolved after %ds\n", inc.Name, inc.Spec.Monitor.Name, inc.Status.DurationSeconds)
	return nil
}

func runNote(ctx context.Context, c *client, args []string) error {
	if len(args) < 2 {
		return errors.New("usage: kubectl uptime note INCIDENT TEXT [--public]")
	}
	inc, err := incidentAction(ctx, c, args[0], "notes", map[string]any{"body": strings.Join(args[1:], " "), "public": c.opts.public})
	if err != nil {
		return err
	}
	c.printf("note added to incident %s (%s); it has %d notes\n", inc.Name, inc.Spec.Monitor.Name, len(inc.Status.Notes))
	return nil
}

// findMonitor finds a monitor by REST id, key (the Monitor object's name)
// or display name.
func findMonitor(ctx context.Context, c *client, ref string) (*restapi.Monitor, error) {
	var monitors []restapi.Monitor
	if err := c.do(ctx, http.MethodGet, "/monitors", "", nil, &monitors); err != nil {
		return nil, err
	}
	var byName []*restapi.Monitor
	for i := range monitors {
		m := &monitors[i]
		if m.ID == ref || deref(m.Key) == ref {
			return m, nil
		}
		if strings.EqualFold(m.Name, ref) {
			byName = append(byName, m)
		}
	}
	switch len(byName) {
	case 0:
		return nil, fmt.Errorf("no monitor %q in namespace %s (give its id, key or name)", ref, c.namespace)
	case 1:
		return byName[0], nil
	}
	return nil, fmt.Errorf("%d monitors are named %q in namespace %s: give the id", len(byName), ref, c.namespace)
}

func runCheck(ctx context.Context, c *client, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: kubectl uptime check MONITOR")
	}
	m, err := findMonitor(ctx, c, args[0])
	if err != nil {
		return err
	}
	var regions struct {
		Regions []string `json:"regions"`
	}
	if err := c.do(ctx, http.MethodGet, "/monitors/"+url.PathEscape(m.ID)+"/regions", "", nil, &regions); err != nil {
		return err
	}
	if len(regions.Regions) == 0 {
		regions.Regions = []string{""} // the default region the server picks
	}
	c.printf("Checking %s (%s) now in %d region(s)\n", m.Name, deref(m.URL), len(regions.Regions))
	tw := tabwriter.NewWriter(c.out, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "REGION\tSTATUS\tCODE\tTIME\tERROR")
	failed := 0
	for _, region := range regions.Regions {
		var res restapi.CheckResult
		err := c.do(ctx, http.MethodPost, "/monitors/"+url.PathEscape(m.ID)+"/run-check", "", map[string]any{"region": region}, &res)
		if err != nil {
			failed++
			fmt.Fprintf(tw, "%s\t%s\t\t\t%s\n", orDash(region), "error", oneLine(err.Error()))
			continue
		}
		code := "-"
		if res.StatusCode != nil {
			code = fmt.Sprint(*res.StatusCode)
		}
		if res.Status != "up" {
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%dms\t%s\n", orDash(res.Region), res.Status, code, res.ResponseTimeMs, oneLine(deref(res.ErrorMessage)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d region(s) did not report up", failed, len(regions.Regions))
	}
	return nil
}

func runWhy(ctx context.Context, c *client, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: kubectl uptime why MONITOR")
	}
	m, err := findMonitor(ctx, c, args[0])
	if err != nil {
		return err
	}
	var e restapi.Explanation
	if err := c.do(ctx, http.MethodGet, "/monitors/"+url.PathEscape(m.ID)+"/explanation", "", nil, &e); err != nil {
		return err
	}
	c.printf("%s: %s\n%s\n", m.Name, e.State, e.Summary)
	c.printf("Quorum: %s (%d of %d voting regions failing, %d required)\n", e.QuorumRule, e.Failing, e.Voting, e.RequiredFailing)
	if e.FailureClass != "" || e.Fault != "" {
		c.printf("Failure class: %s; fault: %s; alert: %s\n", orDash(e.FailureClass), orDash(string(e.Fault)), orDash(e.AlertDecision))
	}
	if e.IncidentID != nil {
		c.printf("Incident: %s\n", *e.IncidentID)
	}
	if len(e.Votes) > 0 {
		tw := tabwriter.NewWriter(c.out, 0, 4, 3, ' ', 0)
		fmt.Fprintln(tw, "REGION\tVOTE\tSTATUS\tCHECKED\tERROR")
		for _, v := range e.Votes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Region, v.Vote, v.Status, v.CheckedAt.UTC().Format("2006-01-02T15:04:05Z"), oneLine(v.Error))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, f := range e.Findings {
		c.printf("- %s\n", f)
	}
	return nil
}

func runPage(ctx context.Context, c *client, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: kubectl uptime page NAME")
	}
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodGet, "/status/pages/me", "", nil, &raw); err != nil {
		return err
	}
	var pages []restapi.StatusPage
	if json.Unmarshal(raw, &pages) != nil {
		var wrapped struct {
			Pages []restapi.StatusPage `json:"pages"`
			Items []restapi.StatusPage `json:"items"`
		}
		if err := json.Unmarshal(raw, &wrapped); err != nil {
			return fmt.Errorf("decode status pages: %w", err)
		}
		pages = append(wrapped.Pages, wrapped.Items...)
	}
	ref := args[0]
	for _, p := range pages {
		if p.ID == ref || p.Slug == ref || strings.EqualFold(p.Title, ref) {
			c.printf("%s\n", p.URL)
			return nil
		}
	}
	return fmt.Errorf("no status page %q in namespace %s (give its id, slug or title)", ref, c.namespace)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps a message on one table line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
