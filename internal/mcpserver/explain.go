package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Outcomes of service_explain_incident.
const (
	OutcomeOngoing            = "ongoing"
	OutcomeResolved           = "resolved"
	OutcomeHealthy            = "healthy"
	OutcomeFailingUnconfirmed = "failing_unconfirmed"
	OutcomeNoData             = "no_data"
	OutcomePaused             = "paused"
	OutcomeAmbiguous          = "ambiguous"
)

// maxCandidates is how many monitors an ambiguous match lists.
const maxCandidates = 10

// explanation is the REST explanation (restapi.Explanation), decoded from
// GET /monitors/:id/explanation and /incidents/:id/explanation.
type explanation = restapi.Explanation

// monitorRef names the monitor an explanation is about.
type monitorRef struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	URL    string `json:"url,omitempty"`
	Key    string `json:"key,omitempty"`
	Status string `json:"current_status"`
}

func refOf(m *restapi.Monitor) monitorRef {
	r := monitorRef{ID: m.ID, Name: m.Name, Type: m.Type, URL: monitorURL(m), Status: m.CurrentStatus}
	if m.Key != nil {
		r.Key = *m.Key
	}
	return r
}

// incidentExplained is an incident with its explanation.
type incidentExplained struct {
	Incident    restapi.Incident `json:"incident"`
	Explanation *explanation     `json:"explanation,omitempty"`
}

// Explained is the result of service_explain_incident.
type Explained struct {
	Outcome           string             `json:"outcome"`
	Monitor           *monitorRef        `json:"monitor,omitempty"`
	Incident          *restapi.Incident  `json:"incident,omitempty"`
	Explanation       *explanation       `json:"explanation,omitempty"`
	Fault             string             `json:"fault,omitempty"`
	AbstainingRegions []string           `json:"abstaining_regions"`
	InMaintenance     bool               `json:"in_maintenance"`
	IncidentsTotal    int                `json:"incidents_total"`
	LastIncident      *incidentExplained `json:"last_incident,omitempty"`
	Candidates        []monitorRef       `json:"candidates,omitempty"`
	CandidatesTotal   int                `json:"candidates_total,omitempty"`
	Summary           string             `json:"summary"`
}

type explainIn struct {
	IncidentID          string `json:"incident_id,omitempty" jsonschema:"explain this incident; give exactly one of incident_id, monitor_id, monitor"`
	MonitorID           string `json:"monitor_id,omitempty" jsonschema:"explain this monitor's open incident or current state"`
	Monitor             string `json:"monitor,omitempty" jsonschema:"find the monitor by name, key or URL fragment"`
	IncludeLastIncident *bool  `json:"include_last_incident,omitempty" jsonschema:"without an open incident, also explain the monitor's latest incident (default true)"`
	Format
}

func explainIncidentTool() toolSpec {
	return newTool("service_explain_incident", "Explain an incident or monitor state",
		"Deterministic explanation of why a monitor is or is not in an incident (the dashboard's why-this-alert view): region votes against the quorum rule, abstaining regions, failure class, alert decision and fault verdict (yours, external, checker, unknown). "+
			"Give exactly one of incident_id, monitor_id or monitor (name, key or URL fragment). Outcome is ongoing, resolved, healthy, failing_unconfirmed, no_data, paused, or ambiguous (several monitors matched: ask the user which one).",
		KindRead, func(ctx context.Context, c *call, in explainIn) (string, error) {
			f, err := in.format("markdown")
			if err != nil {
				return "", err
			}
			n := 0
			for _, v := range []string{in.IncidentID, in.MonitorID, in.Monitor} {
				if strings.TrimSpace(v) != "" {
					n++
				}
			}
			if n != 1 {
				return "", invalid("give exactly one of incident_id, monitor_id or monitor")
			}
			includeLast := in.IncludeLastIncident == nil || *in.IncludeLastIncident
			var res *Explained
			switch {
			case in.IncidentID != "":
				res, err = c.explainIncident(ctx, strings.TrimSpace(in.IncidentID))
			case in.MonitorID != "":
				var m *restapi.Monitor
				if m, err = c.getMonitor(ctx, in.MonitorID); err == nil {
					res, err = c.explainMonitor(ctx, m, includeLast)
				}
			default:
				var all []restapi.Monitor
				if all, err = c.listMonitors(ctx, ""); err != nil {
					break
				}
				match := MatchMonitors(all, in.Monitor)
				switch len(match) {
				case 0:
					err = fmt.Errorf("no monitor matches %q by name, key or URL; list monitors with service_list_monitors", in.Monitor)
				case 1:
					res, err = c.explainMonitor(ctx, &match[0], includeLast)
				default:
					res = ambiguous(match)
				}
			}
			if err != nil {
				return "", err
			}
			return render(f, res, func() string { return explainMarkdown(res) })
		}, formatOpt)
}

// MatchMonitors finds the monitors q names. An exact id, key or name
// (case-insensitive) wins; otherwise monitors whose name or URL contains q.
func MatchMonitors(all []restapi.Monitor, q string) []restapi.Monitor {
	q = strings.ToLower(strings.TrimSpace(q))
	if q == "" {
		return nil
	}
	var exact, partial []restapi.Monitor
	for _, m := range all {
		key := ""
		if m.Key != nil {
			key = strings.ToLower(*m.Key)
		}
		switch {
		case strings.ToLower(m.ID) == q || key == q || strings.ToLower(m.Name) == q:
			exact = append(exact, m)
		case strings.Contains(strings.ToLower(m.Name), q) || strings.Contains(strings.ToLower(monitorURL(&m)), q):
			partial = append(partial, m)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return partial
}

func ambiguous(match []restapi.Monitor) *Explained {
	res := &Explained{Outcome: OutcomeAmbiguous, CandidatesTotal: len(match), AbstainingRegions: []string{}}
	for i := range match[:min(len(match), maxCandidates)] {
		res.Candidates = append(res.Candidates, refOf(&match[i]))
	}
	res.Summary = fmt.Sprintf("%d monitors match; ask the user which one and call again with its monitor_id.", len(match))
	return res
}

// monitorOutcome maps the engine's state of a monitor without an open
// incident to an outcome. States about an incident (the engine may still
// hold one that was just resolved) fall back to the region counts.
func monitorOutcome(x *explanation) string {
	switch x.State {
	case "up":
		return OutcomeHealthy
	case "no_data":
		return OutcomeNoData
	case "unconfirmed_failure", "confirming", "last_mile":
		return OutcomeFailingUnconfirmed
	}
	switch {
	case x.Failing > 0:
		return OutcomeFailingUnconfirmed
	case x.Voting == 0:
		return OutcomeNoData
	default:
		return OutcomeHealthy
	}
}

func (c *call) incidentExplanation(ctx context.Context, id string) (*explanation, error) {
	var x explanation
	if err := c.api.Get(ctx, "/incidents/"+pathEscape(id)+"/explanation", nil, &x); err != nil {
		return nil, err
	}
	return &x, nil
}

// monitorIncidents is the monitor's latest incident and its incident count.
func (c *call) monitorIncidents(ctx context.Context, monitorID string) (*restapi.Incident, int, error) {
	p, err := c.incidents(ctx, url.Values{"monitor_id": {monitorID}, "page_size": {"1"}})
	if err != nil {
		return nil, 0, err
	}
	if len(p.Items) == 0 {
		return nil, p.Total, nil
	}
	return &p.Items[0], p.Total, nil
}

func (c *call) explainIncident(ctx context.Context, id string) (*Explained, error) {
	var inc restapi.Incident
	if err := c.api.Get(ctx, "/incidents/"+pathEscape(id), nil, &inc); err != nil {
		return nil, err
	}
	x, err := c.incidentExplanation(ctx, id)
	if err != nil {
		return nil, err
	}
	res := &Explained{Outcome: OutcomeOngoing, Incident: &inc, Explanation: x, Fault: string(x.Fault), AbstainingRegions: nonNilStrings(x.Abstaining), Summary: x.Summary}
	if inc.ResolvedAt != nil {
		res.Outcome = OutcomeResolved
	}
	var d restapi.Monitor
	switch err := c.api.Get(ctx, "/monitors/"+pathEscape(inc.MonitorID), nil, &d); {
	case err == nil:
		ref := refOf(&d)
		res.Monitor, res.InMaintenance = &ref, d.UnderMaintenance
	case IsStatus(err, http.StatusNotFound):
		res.Monitor = &monitorRef{ID: inc.MonitorID, Name: inc.MonitorName, Type: inc.MonitorType, URL: redactURL(inc.MonitorURL), Status: "deleted"}
	default:
		return nil, err
	}
	if _, total, err := c.monitorIncidents(ctx, inc.MonitorID); err == nil {
		res.IncidentsTotal = max(total, 1)
	} else {
		return nil, err
	}
	return res, nil
}

func (c *call) explainMonitor(ctx context.Context, m *restapi.Monitor, includeLast bool) (*Explained, error) {
	if m.OpenIncident != nil {
		res, err := c.explainIncident(ctx, m.OpenIncident.ID)
		if err != nil || res.Outcome == OutcomeOngoing {
			return res, err
		}
		// The monitor's status lags: the incident is resolved by now, so the
		// current state is explained below.
	}
	ref := refOf(m)
	res := &Explained{Monitor: &ref, InMaintenance: m.UnderMaintenance, AbstainingRegions: []string{}}
	last, total, err := c.monitorIncidents(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	res.IncidentsTotal = total
	if !m.IsActive || m.CurrentStatus == "paused" {
		res.Outcome = OutcomePaused
		res.Summary = "the monitor is paused: no checks run and no alerts are sent until it is resumed"
	} else {
		var x explanation
		if err := c.api.Get(ctx, "/monitors/"+pathEscape(m.ID)+"/explanation", nil, &x); err != nil {
			return nil, err
		}
		if x.IncidentID != nil && *x.IncidentID != "" && x.State == "incident_open" {
			// An incident opened since the monitor was read.
			if ir, err := c.explainIncident(ctx, *x.IncidentID); err != nil || ir.Outcome == OutcomeOngoing {
				return ir, err
			}
		}
		res.Explanation, res.Outcome, res.Summary = &x, monitorOutcome(&x), x.Summary
		res.AbstainingRegions = nonNilStrings(x.Abstaining)
		if res.Outcome == OutcomeFailingUnconfirmed {
			res.Fault = string(x.Fault)
		}
	}
	if includeLast && last != nil {
		le := &incidentExplained{Incident: *last}
		if lx, err := c.incidentExplanation(ctx, last.ID); err == nil {
			le.Explanation = lx
		} else if !IsStatus(err, http.StatusNotFound) {
			return nil, err
		}
		res.LastIncident = le
	}
	return res, nil
}

func explainMarkdown(r *Explained) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Outcome: %s\n\n", r.Outcome)
	if r.Outcome == OutcomeAmbiguous {
		fmt.Fprintf(&b, "%d monitors match; showing %d. Ask the user which one, then call again with its monitor_id:\n\n", r.CandidatesTotal, len(r.Candidates))
		for _, c := range r.Candidates {
			fmt.Fprintf(&b, "- **%s** (`%s`, %s) %s, status %s", clean(c.Name), c.ID, c.Type, clean(c.URL), c.Status)
			if c.Key != "" {
				fmt.Fprintf(&b, ", key `%s`", clean(c.Key))
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	if r.Monitor != nil {
		fmt.Fprintf(&b, "- monitor: **%s** (`%s`, %s) %s, status %s\n", clean(r.Monitor.Name), r.Monitor.ID, r.Monitor.Type, clean(r.Monitor.URL), r.Monitor.Status)
	}
	if r.Summary != "" {
		fmt.Fprintf(&b, "- summary: %s\n", clean(r.Summary))
	}
	if r.Fault != "" {
		fmt.Fprintf(&b, "- fault verdict: **%s**\n", r.Fault)
	}
	fmt.Fprintf(&b, "- in maintenance: %t\n- incidents total: %d\n", r.InMaintenance, r.IncidentsTotal)
	if r.Incident != nil {
		b.WriteString("\nIncident:\n" + incidentLine(r.Incident) + "\n")
	}
	if r.Explanation != nil {
		b.WriteString(explanationMarkdown(r.Explanation))
	}
	if r.LastIncident != nil {
		b.WriteString("\n### Latest incident\n\n" + incidentLine(&r.LastIncident.Incident) + "\n")
		if x := r.LastIncident.Explanation; x != nil {
			fmt.Fprintf(&b, "- fault verdict: %s; failure class: %s; alert decision: %s\n", x.Fault, clean(x.FailureClass), clean(x.AlertDecision))
			for _, f := range x.Findings {
				fmt.Fprintf(&b, "- finding (data): %s\n", clean(f))
			}
		}
	}
	return b.String()
}

func explanationMarkdown(x *explanation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Quorum\n\n- rule: %s\n- failing %d of %d voting regions (%d needed)\n", clean(x.QuorumRule), x.Failing, x.Voting, x.RequiredFailing)
	if len(x.Abstaining) > 0 {
		fmt.Fprintf(&b, "- abstaining (blocked or inconclusive checks): %s\n", strings.Join(x.Abstaining, ", "))
	}
	if x.FailureClass != "" {
		fmt.Fprintf(&b, "- failure class: %s\n", clean(x.FailureClass))
	}
	if x.AlertDecision != "" {
		fmt.Fprintf(&b, "- alert decision: %s\n", clean(x.AlertDecision))
	}
	if len(x.Votes) > 0 {
		b.WriteString("\n| region | status | vote | checked at | error (data) |\n|---|---|---|---|---|\n")
		for _, v := range x.Votes {
			e := v.Error
			if v.ErrorType != "" {
				e = v.ErrorType + ": " + e
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", clean(v.Region), v.Status, v.Vote, v.CheckedAt, clean(e))
		}
	}
	if len(x.Findings) > 0 {
		b.WriteString("\nContributing findings (data):\n")
		for _, f := range x.Findings {
			fmt.Fprintf(&b, "- %s\n", clean(f))
		}
	}
	return b.String()
}
