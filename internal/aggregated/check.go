package aggregated

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// ChecksResource is "run a check now" as a resource: creating an
// UptimeCheck runs a check of its monitor in each of the monitor's regions
// (the REST API's POST /monitors/:id/run-check per region, at level
// standard) and answers the object with the verdicts. Nothing is stored
// but the check records the REST API keeps; there is nothing to get or
// list afterwards (the monitor's history is in uptimemonitors and the REST
// API).
const ChecksResource = "uptimechecks"

// UptimeCheck is a check run now (kind UptimeCheck of
// api.uptime-operator.io/v1).
type UptimeCheck struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              UptimeCheckSpec   `json:"spec"`
	Status            UptimeCheckStatus `json:"status,omitempty"`
}

// UptimeCheckSpec names what to check.
type UptimeCheckSpec struct {
	// Monitor is the monitor's REST id (an uptimemonitors name) or its
	// display name, which must then be unique in the workspace.
	Monitor string `json:"monitor"`
}

// UptimeCheckStatus is the outcome, filled in by create.
type UptimeCheckStatus struct {
	// MonitorID, DisplayName and URL identify the monitor checked.
	MonitorID   string `json:"monitorID,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	URL         string `json:"url,omitempty"`
	// Verdict is up when every region reported up, else failed.
	Verdict string `json:"verdict,omitempty"`
	// Results are the verdicts, one per region.
	Results []CheckRegionResult `json:"results,omitempty"`
}

// CheckRegionResult is one region's check.
type CheckRegionResult struct {
	// Region is the region's code.
	Region string `json:"region"`
	// Status is the check's status (up, down, degraded, …), or error when
	// the check could not run there (Error says why).
	Status         string       `json:"status"`
	StatusCode     *int         `json:"statusCode,omitempty"`
	ResponseTimeMs int64        `json:"responseTimeMs"`
	CheckedAt      *metav1.Time `json:"checkedAt,omitempty"`
	Error          string       `json:"error,omitempty"`
}

// Check verdicts of UptimeCheckStatus.Verdict.
const (
	VerdictUp     = "up"
	VerdictFailed = "failed"
)

func (c *UptimeCheck) objectMeta() *metav1.ObjectMeta { return &c.ObjectMeta }

func (c *UptimeCheck) fieldSet() fields.Set {
	return metaFields(&c.ObjectMeta, fields.Set{"spec.monitor": c.Spec.Monitor, "status.verdict": c.Status.Verdict})
}

var checkColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "The check's name."},
	{Name: "Monitor", Type: "string", Description: "The monitor's name."},
	{Name: "Verdict", Type: "string", Description: "up when every region reported up."},
	{Name: "Regions", Type: "string", Description: "Each region's status."},
}

func (c *UptimeCheck) row() []any {
	var regions []string
	for _, r := range c.Status.Results {
		regions = append(regions, orDash(r.Region)+"="+r.Status)
	}
	return []any{c.Name, c.Status.DisplayName, c.Status.Verdict, strings.Join(regions, ",")}
}

var checksResource = &resource{
	name: ChecksResource, singular: "uptimecheck", kind: "UptimeCheck",
	verbs: metav1.Verbs{"create"}, columns: checkColumns, fields: []string{"spec.monitor", "status.verdict"},
	create: createCheck,
}

// createCheck runs the check the body asks for.
func createCheck(c *call, body []byte) (object, error) {
	var chk UptimeCheck
	if err := json.Unmarshal(body, &chk); err != nil {
		return nil, &restError{code: http.StatusBadRequest, message: "the body is not an UptimeCheck: " + err.Error()}
	}
	if chk.Kind != "" && chk.Kind != "UptimeCheck" {
		return nil, &restError{code: http.StatusBadRequest, message: fmt.Sprintf("kind %q is not UptimeCheck", chk.Kind)}
	}
	if strings.TrimSpace(chk.Spec.Monitor) == "" {
		return nil, &restError{code: http.StatusUnprocessableEntity, message: "spec.monitor is required: a monitor's id or name"}
	}
	if chk.Namespace != "" && chk.Namespace != c.ns {
		return nil, &restError{code: http.StatusBadRequest, message: fmt.Sprintf("metadata.namespace %q does not match the request's namespace %q", chk.Namespace, c.ns)}
	}
	m, err := c.findMonitor(chk.Spec.Monitor)
	if err != nil {
		return nil, err
	}
	var regions struct {
		Regions []string `json:"regions"`
	}
	if err := c.restJSON("read-only", http.MethodGet, "/monitors/"+url.PathEscape(m.ID)+"/regions", nil, &regions); err != nil {
		return nil, err
	}
	if len(regions.Regions) == 0 {
		regions.Regions = []string{""} // the default region the REST API picks
	}
	now := time.Now()
	if chk.Name == "" {
		prefix := chk.GenerateName
		if prefix == "" {
			prefix = "check-"
		}
		chk.Name = prefix + utilrand.String(5)
	}
	chk.TypeMeta = metav1.TypeMeta{Kind: "UptimeCheck", APIVersion: Group + "/" + Version}
	chk.Namespace, chk.CreationTimestamp, chk.UID = c.ns, metav1.NewTime(now), types.UID(utilrand.String(16))
	chk.Status = UptimeCheckStatus{MonitorID: m.ID, DisplayName: m.Name, URL: deref(m.URL), Verdict: VerdictUp}
	for _, region := range regions.Regions {
		var res restapi.CheckResult
		err := c.restJSON("standard", http.MethodPost, "/monitors/"+url.PathEscape(m.ID)+"/run-check", map[string]any{"region": region}, &res)
		var re *restError
		switch {
		case errors.As(err, &re) && (re.code == http.StatusForbidden || re.code == http.StatusTooManyRequests):
			// Refused as a whole (the level, the rate limit): no verdict.
			return nil, err
		case err != nil:
			chk.Status.Results = append(chk.Status.Results, CheckRegionResult{Region: region, Status: "error", Error: err.Error()})
			chk.Status.Verdict = VerdictFailed
			continue
		}
		if res.Region == "" {
			res.Region = region
		}
		chk.Status.Results = append(chk.Status.Results, CheckRegionResult{Region: res.Region, Status: res.Status, StatusCode: res.StatusCode,
			ResponseTimeMs: res.ResponseTimeMs, CheckedAt: metaTime(&res.CheckedAt), Error: deref(res.ErrorMessage)})
		if res.Status != "up" {
			chk.Status.Verdict = VerdictFailed
		}
	}
	setContentVersion(&chk)
	return &chk, nil
}

// findMonitor finds a monitor of c's namespace by REST id or, failing
// that, by its display name (case-insensitive), which must be unique.
func (c *call) findMonitor(ref string) (*restapi.Monitor, error) {
	var m restapi.Monitor
	err := c.restJSON("read-only", http.MethodGet, "/monitors/"+url.PathEscape(ref), nil, &m)
	var re *restError
	if err == nil {
		return &m, nil
	}
	if !errors.As(err, &re) || (re.code != http.StatusNotFound && re.code != http.StatusBadRequest && re.code != http.StatusUnprocessableEntity) {
		return nil, err
	}
	var list []restapi.Monitor
	if err := c.restJSON("read-only", http.MethodGet, "/monitors", nil, &list); err != nil {
		return nil, err
	}
	var found []*restapi.Monitor
	for i := range list {
		if strings.EqualFold(list[i].Name, ref) {
			found = append(found, &list[i])
		}
	}
	switch len(found) {
	case 0:
		return nil, &restError{code: http.StatusNotFound, message: fmt.Sprintf("%s.%s %q not found (give a monitor's id or name)", MonitorsResource, Group, ref)}
	case 1:
		return found[0], nil
	}
	return nil, &restError{code: http.StatusConflict, message: fmt.Sprintf("%d monitors are named %q: give the id", len(found), ref)}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
