package aggregated

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// MonitorsResource is the monitors' live state as a resource: what the
// REST API's GET /monitors and /monitors/:id/explanation answer, for
// kubectl and the built-in view role. It is not named monitors: that is
// the Monitor custom resource of monitoring.uptime-operator.io (the
// configuration), which kubectl would find first, and {base_url}/monitors
// through the aggregated API stays the REST API.
const MonitorsResource = "uptimemonitors"

// UptimeMonitor is a monitor's live state (kind UptimeMonitor of
// api.uptime-operator.io/v1). Its name and UID are the monitor's REST id
// (the Monitor object's UID); its namespace is the workspace.
type UptimeMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              UptimeMonitorSpec   `json:"spec"`
	Status            UptimeMonitorStatus `json:"status"`
}

// UptimeMonitorSpec is what the monitor checks.
type UptimeMonitorSpec struct {
	// DisplayName is the monitor's name in the REST API and the UI.
	DisplayName string `json:"displayName"`
	// Type is the check type (http, tcp, dns, …).
	Type string `json:"type"`
	// URL is the target.
	URL string `json:"url,omitempty"`
	// IntervalSeconds is how often it is checked.
	IntervalSeconds int32 `json:"intervalSeconds"`
	// Active is false while the monitor is paused.
	Active bool `json:"active"`
	// Regions are the regions that check it (the plan's default when the
	// monitor names none).
	Regions []string `json:"regions,omitempty"`
	// Tags are the monitor's tags.
	Tags []string `json:"tags,omitempty"`
	// Key is the monitor's key in monitoring as code, if it has one.
	Key string `json:"key,omitempty"`
}

// UptimeMonitorStatus is the monitor's live state.
type UptimeMonitorStatus struct {
	// State is the REST current_status: up, down, degraded, paused, pending…
	State string `json:"state"`
	// LastCheckStatus is the status of the latest check.
	LastCheckStatus string `json:"lastCheckStatus,omitempty"`
	// LastCheckedAt is when it ran.
	LastCheckedAt *metav1.Time `json:"lastCheckedAt,omitempty"`
	// LastResponseTimeMs is its response time.
	LastResponseTimeMs *int64 `json:"lastResponseTimeMs,omitempty"`
	// LastError is its error, if it failed.
	LastError string `json:"lastError,omitempty"`
	// OpenIncident is the id of the open incident (an uptimeincidents
	// name), and OpenIncidentStartedAt when it opened.
	OpenIncident          string       `json:"openIncident,omitempty"`
	OpenIncidentStartedAt *metav1.Time `json:"openIncidentStartedAt,omitempty"`
	// UnderMaintenance is true during a maintenance window.
	UnderMaintenance bool `json:"underMaintenance,omitempty"`
	// Uptime24h and Uptime30d are percentages; absent without checks.
	Uptime24h *float64 `json:"uptime24h,omitempty"`
	Uptime30d *float64 `json:"uptime30d,omitempty"`
	// RegionsVoting is how many regions vote in the quorum, RegionsUp how
	// many of them passed their latest check and RegionsFailing how many
	// failed it (from the monitor's explanation).
	RegionsVoting  int `json:"regionsVoting"`
	RegionsUp      int `json:"regionsUp"`
	RegionsFailing int `json:"regionsFailing"`
}

func (m *UptimeMonitor) objectMeta() *metav1.ObjectMeta { return &m.ObjectMeta }

func (m *UptimeMonitor) fieldSet() fields.Set {
	return metaFields(&m.ObjectMeta, fields.Set{
		"spec.displayName":    m.Spec.DisplayName,
		"spec.type":           m.Spec.Type,
		"status.state":        m.Status.State,
		"status.openIncident": m.Status.OpenIncident,
	})
}

var monitorColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "The monitor's REST id."},
	{Name: "Display Name", Type: "string", Description: "The monitor's name."},
	{Name: "Type", Type: "string", Description: "The check type."},
	{Name: "Status", Type: "string", Description: "The live state: up, down, degraded, paused, pending."},
	{Name: "Regions", Type: "string", Description: "Regions whose latest check passed, of the regions voting in the quorum."},
	{Name: "Uptime 24h", Type: "string", Description: "Uptime over the last 24 hours."},
	{Name: "Last Check", Type: "string", Description: "How long ago the latest check ran."},
	{Name: "Open Incident", Type: "string", Description: "The open incident's id (kubectl get incident ID)."},
	{Name: "URL", Type: "string", Priority: 1, Description: "The target (-o wide)."},
}

func (m *UptimeMonitor) row() []any {
	uptime := "<none>"
	if m.Status.Uptime24h != nil {
		uptime = fmt.Sprintf("%.2f%%", *m.Status.Uptime24h)
	}
	last := "<none>"
	if m.Status.LastCheckedAt != nil {
		last = duration.HumanDuration(time.Since(m.Status.LastCheckedAt.Time)) + " ago"
	}
	return []any{m.Name, m.Spec.DisplayName, m.Spec.Type, m.Status.State,
		fmt.Sprintf("%d/%d", m.Status.RegionsUp, m.Status.RegionsVoting), uptime, last, orNone(m.Status.OpenIncident), m.Spec.URL}
}

var monitorsResource = &resource{
	name: MonitorsResource, singular: "uptimemonitor", kind: "UptimeMonitor", shortNames: []string{"um"},
	verbs: metav1.Verbs{"get", "list", "watch"}, columns: monitorColumns,
	fields: []string{"spec.displayName", "spec.type", "status.state", "status.openIncident"},
	list:   listMonitors,
	get: func(c *call, name string) (object, error) {
		var m restapi.Monitor
		if err := c.restJSON("read-only", http.MethodGet, "/monitors/"+url.PathEscape(name), nil, &m); err != nil {
			return nil, err
		}
		return c.uptimeMonitor(&m)
	},
	subresources: map[string]func(c *call, name string) (any, error){"explanation": monitorExplanation},
	// Every poll reads each monitor's explanation: less often than incidents.
	pollInterval: 10 * time.Second,
}

func listMonitors(c *call) ([]object, error) {
	var list []restapi.Monitor
	if err := c.restJSON("read-only", http.MethodGet, "/monitors", nil, &list); err != nil {
		return nil, err
	}
	out := make([]object, 0, len(list))
	for i := range list {
		m, err := c.uptimeMonitor(&list[i])
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// uptimeMonitor converts a REST monitor, with its explanation's region
// votes, into the object of c's namespace.
func (c *call) uptimeMonitor(m *restapi.Monitor) (*UptimeMonitor, error) {
	var ex restapi.Explanation
	if err := c.restJSON("read-only", http.MethodGet, "/monitors/"+url.PathEscape(m.ID)+"/explanation", nil, &ex); err != nil {
		return nil, err
	}
	um := &UptimeMonitor{
		TypeMeta: metav1.TypeMeta{Kind: "UptimeMonitor", APIVersion: Group + "/" + Version},
		ObjectMeta: metav1.ObjectMeta{Name: m.ID, Namespace: c.ns, UID: types.UID(m.ID),
			CreationTimestamp: metav1.NewTime(parseTime(&m.CreatedAt))},
		Spec: UptimeMonitorSpec{DisplayName: m.Name, Type: m.Type, URL: deref(m.URL), IntervalSeconds: m.IntervalSeconds,
			Active: m.IsActive, Regions: m.EffectiveRegions, Tags: m.Tags, Key: deref(m.Key)},
		Status: UptimeMonitorStatus{State: m.CurrentStatus, LastCheckStatus: deref(m.LastStatus), LastCheckedAt: metaTime(m.LastCheckedAt),
			LastResponseTimeMs: m.LastResponseTimeMs, LastError: deref(m.LastError), UnderMaintenance: m.UnderMaintenance,
			Uptime24h: m.Uptime24h, Uptime30d: m.Uptime30d, RegionsVoting: ex.Voting, RegionsFailing: ex.Failing},
	}
	if m.OpenIncident != nil {
		um.Status.OpenIncident = m.OpenIncident.ID
		um.Status.OpenIncidentStartedAt = metaTime(&m.OpenIncident.StartedAt)
	}
	for _, v := range ex.Votes {
		if v.Vote == "pass" {
			um.Status.RegionsUp++
		}
	}
	setContentVersion(um)
	return um, nil
}

// MonitorExplanation is why a monitor is (or is not) in an incident, the
// REST API's explanation as an object (kind MonitorExplanation, the
// subresource uptimemonitors/explanation).
type MonitorExplanation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	// DisplayName is the monitor's name.
	DisplayName string `json:"displayName"`
	// IncidentID is the open incident, if any.
	IncidentID string `json:"incidentID,omitempty"`
	// State is the quorum's verdict.
	State string `json:"state"`
	// QuorumRule, RequiredFailing, Failing and Voting are the quorum: how
	// many of the voting regions fail and how many must.
	QuorumRule      string `json:"quorumRule"`
	RequiredFailing int    `json:"requiredFailing"`
	Failing         int    `json:"failing"`
	Voting          int    `json:"voting"`
	// AbstainingRegions have no recent verdict.
	AbstainingRegions []string `json:"abstainingRegions,omitempty"`
	// RegionVotes are each region's latest verdict.
	RegionVotes []RegionVote `json:"regionVotes,omitempty"`
	// FailureClass, AlertDecision and FaultVerdict classify the failure
	// and say whether an alert went out and whose fault it most likely is.
	FailureClass  string `json:"failureClass,omitempty"`
	AlertDecision string `json:"alertDecision,omitempty"`
	FaultVerdict  string `json:"faultVerdict,omitempty"`
	// Summary is one sentence; ContributingFindings the details.
	Summary              string   `json:"summary"`
	ContributingFindings []string `json:"contributingFindings,omitempty"`
}

// RegionVote is one region's latest verdict as the quorum saw it.
type RegionVote struct {
	Region    string      `json:"region"`
	Status    string      `json:"status"`
	Vote      string      `json:"vote"`
	ErrorType string      `json:"errorType,omitempty"`
	Error     string      `json:"error,omitempty"`
	CheckedAt metav1.Time `json:"checkedAt"`
	ISP       string      `json:"isp,omitempty"`
	// ScreenshotURL is the REST API path of the screenshot a browser check
	// took of its failure (GET with a key that may read the monitor).
	ScreenshotURL string `json:"screenshotURL,omitempty"`
}

func monitorExplanation(c *call, name string) (any, error) {
	var m restapi.Monitor
	if err := c.restJSON("read-only", http.MethodGet, "/monitors/"+url.PathEscape(name), nil, &m); err != nil {
		return nil, err
	}
	var ex restapi.Explanation
	if err := c.restJSON("read-only", http.MethodGet, "/monitors/"+url.PathEscape(name)+"/explanation", nil, &ex); err != nil {
		return nil, err
	}
	out := &MonitorExplanation{
		TypeMeta:    metav1.TypeMeta{Kind: "MonitorExplanation", APIVersion: Group + "/" + Version},
		ObjectMeta:  metav1.ObjectMeta{Name: m.ID, Namespace: c.ns, UID: types.UID(m.ID), CreationTimestamp: metav1.NewTime(parseTime(&m.CreatedAt))},
		DisplayName: m.Name, IncidentID: deref(ex.IncidentID), State: ex.State, QuorumRule: ex.QuorumRule,
		RequiredFailing: ex.RequiredFailing, Failing: ex.Failing, Voting: ex.Voting, AbstainingRegions: ex.Abstaining,
		FailureClass: ex.FailureClass, AlertDecision: ex.AlertDecision, FaultVerdict: string(ex.Fault),
		Summary: ex.Summary, ContributingFindings: ex.Findings,
	}
	for _, v := range ex.Votes {
		out.RegionVotes = append(out.RegionVotes, RegionVote{Region: v.Region, Status: v.Status, Vote: v.Vote, ErrorType: v.ErrorType,
			Error: v.Error, CheckedAt: metav1.NewTime(v.CheckedAt), ISP: v.ISP, ScreenshotURL: v.ScreenshotURL})
	}
	return out, nil
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
