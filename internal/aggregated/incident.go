package aggregated

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Incident is a workspace's incident as a Kubernetes object of the
// aggregated API (kind Incident of api.uptime-operator.io/v1), the way
// metrics-server serves PodMetrics: read from the REST API's incident
// record, never stored as an object. Its name and UID are the incident's
// id; its namespace is the workspace.
type Incident struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	// Spec names the monitor the incident is about.
	Spec IncidentSpec `json:"spec"`
	// Status is the incident's course: open or resolved, who confirmed it,
	// who acknowledged it.
	Status IncidentStatus `json:"status"`
}

// IncidentSpec is what an incident is about.
type IncidentSpec struct {
	// Monitor is the monitor whose checks opened the incident.
	Monitor IncidentMonitor `json:"monitor"`
}

// IncidentMonitor identifies a monitor by REST id and display name.
type IncidentMonitor struct {
	// ID is the monitor's REST id (the Monitor object's UID).
	ID string `json:"id"`
	// Name is the monitor's display name.
	Name string `json:"name"`
	// URL is the monitor's target.
	URL string `json:"url,omitempty"`
	// Type is the monitor's check type.
	Type string `json:"type,omitempty"`
}

// Incident states of IncidentStatus.State, the values of the field selector
// status.state.
const (
	StateOpen     = "open"
	StateResolved = "resolved"
)

// IncidentStatus mirrors the REST incident record (spec/rest-api.md,
// "Incident list item") in Kubernetes field naming.
type IncidentStatus struct {
	// State is open until the incident is resolved.
	State string `json:"state"`
	// StartedAt is when the incident opened.
	StartedAt metav1.Time `json:"startedAt"`
	// ResolvedAt is when it was resolved, automatically or by hand.
	ResolvedAt *metav1.Time `json:"resolvedAt,omitempty"`
	// DurationSeconds is how long it lasted, or has lasted so far.
	DurationSeconds int64 `json:"durationSeconds"`
	// Confirmations is how many regions confirmed the failure.
	Confirmations int `json:"confirmations"`
	// ConfirmingRegions are the codes of the regions that confirmed it.
	ConfirmingRegions []string `json:"confirmingRegions,omitempty"`
	// ConfirmingRegionNames are their display labels.
	ConfirmingRegionNames []string `json:"confirmingRegionNames,omitempty"`
	// RegionsTotal is how many regions check the monitor.
	RegionsTotal int `json:"regionsTotal"`
	// AcknowledgedAt is when someone acknowledged the incident.
	AcknowledgedAt *metav1.Time `json:"acknowledgedAt,omitempty"`
	// AcknowledgedBy is who did.
	AcknowledgedBy string `json:"acknowledgedBy,omitempty"`
	// AlertSuppressed is true when no alert went out (maintenance, a
	// dependency down, flapping) and SuppressionReason says why.
	AlertSuppressed   bool   `json:"alertSuppressed,omitempty"`
	SuppressionReason string `json:"suppressionReason,omitempty"`
	// Flapping is true when the monitor flaps.
	Flapping bool `json:"flapping,omitempty"`
	// SnoozedUntil is the end of a snooze.
	SnoozedUntil *metav1.Time `json:"snoozedUntil,omitempty"`
	// ResolvedManually is true when a person resolved it.
	ResolvedManually bool `json:"resolvedManually,omitempty"`
	// IssueURL links an issue opened for the incident.
	IssueURL string `json:"issueURL,omitempty"`
	// Cause, Postmortem and Notes come with a single incident (get), not
	// with lists.
	Cause      string         `json:"cause,omitempty"`
	Postmortem string         `json:"postmortem,omitempty"`
	Notes      []IncidentNote `json:"notes,omitempty"`
}

// IncidentNote is a timeline note of an incident.
type IncidentNote struct {
	ID        string      `json:"id"`
	Body      string      `json:"body"`
	Public    bool        `json:"public,omitempty"`
	Author    string      `json:"author,omitempty"`
	CreatedAt metav1.Time `json:"createdAt"`
}

// IncidentList is a list of incidents (kind IncidentList).
type IncidentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []Incident `json:"items"`
}

// MonitorIDLabel carries the monitor's REST id on every incident, for label
// selectors (`kubectl get incidents -l api.uptime-operator.io/monitor-id=…`).
const MonitorIDLabel = Group + "/monitor-id"

// incidentFrom converts a REST incident detail (or list item, with the
// detail fields empty) into the Kubernetes object of namespace ns.
func incidentFrom(ns string, d restapi.IncidentDetail) Incident {
	started := parseTime(&d.StartedAt)
	inc := Incident{
		TypeMeta: metav1.TypeMeta{Kind: "Incident", APIVersion: Group + "/" + Version},
		ObjectMeta: metav1.ObjectMeta{
			Name: d.ID, Namespace: ns, UID: types.UID(d.ID), CreationTimestamp: metav1.NewTime(started),
			Labels: map[string]string{MonitorIDLabel: d.MonitorID},
		},
		Spec: IncidentSpec{Monitor: IncidentMonitor{ID: d.MonitorID, Name: d.MonitorName, URL: d.MonitorURL, Type: d.MonitorType}},
		Status: IncidentStatus{
			State: StateOpen, StartedAt: metav1.NewTime(started), ResolvedAt: metaTime(d.ResolvedAt),
			DurationSeconds: d.DurationSeconds, Confirmations: d.Confirmations,
			ConfirmingRegions: d.ConfirmingRegions, ConfirmingRegionNames: d.ConfirmingRegionNames, RegionsTotal: d.RegionsTotal,
			AcknowledgedAt: metaTime(d.AcknowledgedAt), AcknowledgedBy: deref(d.AcknowledgedByName),
			AlertSuppressed: d.AlertSuppressed, SuppressionReason: deref(d.SuppressionReason), Flapping: d.IsFlapping,
			SnoozedUntil: metaTime(d.SnoozedUntil), ResolvedManually: d.ResolvedManually, IssueURL: deref(d.CodeHostIssueURL),
			Cause: deref(d.Cause), Postmortem: deref(d.Postmortem),
		},
	}
	if d.ResolvedAt != nil {
		inc.Status.State = StateResolved
	}
	for _, n := range d.Notes {
		inc.Status.Notes = append(inc.Status.Notes, IncidentNote{ID: n.ID, Body: n.Body, Public: n.Public, Author: deref(n.Author), CreatedAt: metav1.NewTime(parseTime(&n.CreatedAt))})
	}
	inc.ResourceVersion = strconv.FormatInt(resourceVersion(started, d), 10)
	return inc
}

// resourceVersion of an incident is the time of its latest change in
// microseconds since the epoch: the latest of opening, acknowledgement and
// resolution. The store keeps these times, so every replica of the manager
// computes the same version and a watch can resume from a list's version on
// any replica (see listVersion).
func resourceVersion(started time.Time, d restapi.IncidentDetail) int64 {
	latest := started
	for _, s := range []*string{d.AcknowledgedAt, d.ResolvedAt} {
		if t := parseTime(s); t.After(latest) {
			latest = t
		}
	}
	return latest.UnixMicro()
}

// changeKey is what a watch compares to tell a change: the object without
// its ever-growing duration.
func (inc *Incident) changeKey() string {
	c := *inc
	c.Status.DurationSeconds = 0
	raw, _ := json.Marshal(&c)
	return string(raw)
}

func (inc *Incident) objectMeta() *metav1.ObjectMeta { return &inc.ObjectMeta }
func (inc *Incident) row() []any                     { return tableRow(inc) }
func (inc *Incident) fieldSet() fields.Set           { return incidentFields(inc) }

// incidentFields are the fields a field selector may name, with their
// values for inc.
func incidentFields(inc *Incident) fields.Set {
	return fields.Set{
		"metadata.name":       inc.Name,
		"metadata.namespace":  inc.Namespace,
		"status.state":        inc.Status.State,
		"status.acknowledged": strconv.FormatBool(inc.Status.AcknowledgedAt != nil),
		"spec.monitor.id":     inc.Spec.Monitor.ID,
		"spec.monitor.name":   inc.Spec.Monitor.Name,
	}
}

// parseFieldSelector parses a fieldSelector query value and refuses fields
// incidents do not have, as kube-apiserver does.
func parseFieldSelector(s string) (fields.Selector, error) {
	sel, err := fields.ParseSelector(s)
	if err != nil {
		return nil, err
	}
	known := incidentFields(&Incident{})
	for _, req := range sel.Requirements() {
		if _, ok := known[req.Field]; !ok {
			return nil, fmt.Errorf("field label not supported: %s", req.Field)
		}
	}
	return sel, nil
}

// incidentColumns are the columns of `kubectl get incidents`.
var incidentColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "The incident's id."},
	{Name: "Monitor", Type: "string", Description: "The monitor's display name."},
	{Name: "State", Type: "string", Description: "open or resolved."},
	{Name: "Started", Type: "string", Format: "date-time", Description: "When the incident opened (UTC)."},
	{Name: "Duration", Type: "string", Description: "How long it lasted, or has lasted so far."},
	{Name: "Confirmed By", Type: "string", Description: "The regions that confirmed the failure, of all the monitor's regions."},
	{Name: "Acknowledged", Type: "string", Description: "Who acknowledged the incident."},
	{Name: "URL", Type: "string", Priority: 1, Description: "The monitor's target (-o wide)."},
}

// tableRow renders inc as a row of incidentColumns.
func tableRow(inc *Incident) []any {
	confirmed := "<none>"
	if len(inc.Status.ConfirmingRegions) > 0 {
		confirmed = strings.Join(inc.Status.ConfirmingRegions, ",")
	}
	if inc.Status.RegionsTotal > 0 {
		confirmed += fmt.Sprintf(" (%d/%d)", inc.Status.Confirmations, inc.Status.RegionsTotal)
	}
	acked := "<none>"
	if inc.Status.AcknowledgedAt != nil {
		acked = inc.Status.AcknowledgedBy
		if acked == "" {
			acked = "yes"
		}
	}
	return []any{
		inc.Name, inc.Spec.Monitor.Name, inc.Status.State, inc.Status.StartedAt.UTC().Format(time.RFC3339),
		duration.HumanDuration(time.Duration(inc.Status.DurationSeconds) * time.Second), confirmed, acked, inc.Spec.Monitor.URL,
	}
}

func parseTime(s *string) time.Time {
	if s == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func metaTime(s *string) *metav1.Time {
	if s == nil {
		return nil
	}
	t := metav1.NewTime(parseTime(s))
	return &t
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
