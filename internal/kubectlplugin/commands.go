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
	"time"

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
	var monitors struct{ Items []aggregated.UptimeMonitor }
	if err := c.do(ctx, http.MethodGet, "/"+aggregated.MonitorsResource, "", nil, &monitors); err != nil {
		return err
	}
	var regions struct{ Items []aggregated.UptimeRegion }
	if err := c.do(ctx, http.MethodGet, "/"+aggregated.RegionsResource, "", nil, &regions); err != nil {
		return err
	}
	var open aggregated.IncidentList
	if err := c.do(ctx, http.MethodGet, "/"+aggregated.IncidentsResource+"?fieldSelector="+url.QueryEscape("status.state=open"), "", nil, &open); err != nil {
		return err
	}
	// The counts and mean 24 h uptime of the REST API's /monitors/summary.
	counts := map[string]int{}
	var sum float64
	var measured int
	for _, m := range monitors.Items {
		counts[m.Status.State]++
		if m.Status.Uptime24h != nil {
			sum += *m.Status.Uptime24h
			measured++
		}
	}
	uptime := "n/a"
	if measured > 0 {
		uptime = fmt.Sprintf("%.2f%%", sum/float64(measured))
	}
	c.printf("Workspace %s: %d monitors (%d up, %d down, %d degraded), %d open incidents, 24 h uptime %s\n",
		c.namespace, len(monitors.Items), counts["up"], counts["down"], counts["degraded"], len(open.Items), uptime)

	var offline []string
	for _, r := range regions.Items {
		// A region checking no monitor may sit idle (scaled to zero).
		if !r.Status.Online && r.Status.Monitors > 0 {
			offline = append(offline, r.Name)
		}
	}
	if len(offline) == 0 {
		c.printf("Regions offline: none\n")
	} else {
		c.printf("Regions offline: %s\n", strings.Join(offline, ", "))
	}

	tw := tabwriter.NewWriter(c.out, 0, 4, 3, ' ', 0)
	var down int
	for _, m := range monitors.Items {
		if m.Status.State != "down" && m.Status.State != "degraded" {
			continue
		}
		if down == 0 {
			fmt.Fprintln(tw, "\nMONITOR\tSTATUS\tREGIONS UP\tSINCE\tLAST ERROR")
		}
		down++
		since := "-"
		if m.Status.OpenIncidentStartedAt != nil {
			since = stamp(m.Status.OpenIncidentStartedAt.Time)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\n", m.Spec.DisplayName, m.Status.State, m.Status.RegionsUp, m.Status.RegionsVoting, since, oneLine(m.Status.LastError))
	}
	if len(open.Items) > 0 {
		fmt.Fprintln(tw, "\nINCIDENT\tMONITOR\tSTARTED\tACKNOWLEDGED")
		for _, inc := range open.Items {
			acked := inc.Status.AcknowledgedBy
			if inc.Status.AcknowledgedAt == nil {
				acked = "no"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", inc.Name, inc.Spec.Monitor.Name, stamp(inc.Status.StartedAt.Time), acked)
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

// findMonitor finds a monitor by REST id (its uptimemonitors name), key
// or display name.
func findMonitor(ctx context.Context, c *client, ref string) (*aggregated.UptimeMonitor, error) {
	var monitors struct{ Items []aggregated.UptimeMonitor }
	if err := c.do(ctx, http.MethodGet, "/"+aggregated.MonitorsResource, "", nil, &monitors); err != nil {
		return nil, err
	}
	var byName []*aggregated.UptimeMonitor
	for i := range monitors.Items {
		m := &monitors.Items[i]
		if m.Name == ref || (m.Spec.Key != "" && m.Spec.Key == ref) {
			return m, nil
		}
		if strings.EqualFold(m.Spec.DisplayName, ref) {
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

// runCheck creates an UptimeCheck, which runs the check in each of the
// monitor's regions, and prints its verdicts.
func runCheck(ctx context.Context, c *client, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: kubectl uptime check MONITOR")
	}
	m, err := findMonitor(ctx, c, args[0])
	if err != nil {
		return err
	}
	c.printf("Checking %s (%s) now in %d region(s)\n", m.Spec.DisplayName, m.Spec.URL, max(1, len(m.Spec.Regions)))
	chk := aggregated.UptimeCheck{
		TypeMeta:   metav1.TypeMeta{Kind: "UptimeCheck", APIVersion: aggregated.Group + "/" + aggregated.Version},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "check-"},
		Spec:       aggregated.UptimeCheckSpec{Monitor: m.Name},
	}
	if err := c.do(ctx, http.MethodPost, "/"+aggregated.ChecksResource, "", &chk, &chk); err != nil {
		return err // a refusal names the role (neededRole)
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "REGION\tSTATUS\tCODE\tTIME\tERROR")
	failed := 0
	for _, res := range chk.Status.Results {
		code := "-"
		if res.StatusCode != nil {
			code = fmt.Sprint(*res.StatusCode)
		}
		if res.Status != "up" {
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%dms\t%s\n", orDash(res.Region), res.Status, code, res.ResponseTimeMs, oneLine(res.Error))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d region(s) did not report up", failed, len(chk.Status.Results))
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
	var e aggregated.MonitorExplanation
	if err := c.do(ctx, http.MethodGet, "/"+aggregated.MonitorsResource+"/"+url.PathEscape(m.Name)+"/explanation", "", nil, &e); err != nil {
		return err
	}
	c.printf("%s: %s\n%s\n", e.DisplayName, e.State, e.Summary)
	c.printf("Quorum: %s (%d of %d voting regions failing, %d required)\n", e.QuorumRule, e.Failing, e.Voting, e.RequiredFailing)
	if e.FailureClass != "" || e.FaultVerdict != "" {
		c.printf("Failure class: %s; fault: %s; alert: %s\n", orDash(e.FailureClass), orDash(e.FaultVerdict), orDash(e.AlertDecision))
	}
	if e.IncidentID != "" {
		c.printf("Incident: %s\n", e.IncidentID)
	}
	if len(e.RegionVotes) > 0 {
		tw := tabwriter.NewWriter(c.out, 0, 4, 3, ' ', 0)
		fmt.Fprintln(tw, "REGION\tVOTE\tSTATUS\tCHECKED\tERROR")
		for _, v := range e.RegionVotes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Region, v.Vote, v.Status, stamp(v.CheckedAt.Time), oneLine(v.Error))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, f := range e.ContributingFindings {
		c.printf("- %s\n", f)
	}
	return nil
}

// runPage prints a status page's address. Status pages are read through the
// REST API, so this one command needs an access level (the ClusterRole
// uptime-operator-viewer or above); the built-in view role grants none.
func runPage(ctx context.Context, c *client, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: kubectl uptime page NAME")
	}
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodGet, "/status/pages/me", "", nil, &raw); err != nil {
		var fe *forbiddenError
		if errors.As(err, &fe) {
			return fmt.Errorf("status pages are read through the REST API, which needs an access level (bind uptime-operator-viewer or above; the built-in view role grants none): %w", err)
		}
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

// stamp prints a time as the tables do, and "-" for a region that has not
// checked yet (the zero time).
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
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
