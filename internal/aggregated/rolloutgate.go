package aggregated

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// RolloutGatesResource is the rollout gate as a resource: what the REST
// API's GET /monitors/:id/gate and /reliability/slo-targets/:id/gate
// answer, for Argo Rollouts, Flagger and anyone whose Kubernetes RBAC is
// the built-in view role (the chart's aggregate-to-view role grants get on
// it). Only get is served: a gate is read by name when a rollout asks.
const RolloutGatesResource = "rolloutgates"

// gateQueryParams are the query parameters a get passes on to the REST
// gate (validated there).
var gateQueryParams = []string{"windows", "max_burn_rate", "min_error_budget"}

// RolloutGate is a gate's answer as an object (kind RolloutGate of
// api.uptime-operator.io/v1): the REST answer's fields at the top level,
// so the same JSON path (`{$.decision}`) reads both doors. Its name is the
// name it was asked by.
type RolloutGate struct {
	metav1.TypeMeta     `json:",inline"`
	metav1.ObjectMeta   `json:"metadata"`
	restapi.RolloutGate `json:",inline"`
}

func (g *RolloutGate) objectMeta() *metav1.ObjectMeta { return &g.ObjectMeta }

func (g *RolloutGate) fieldSet() fields.Set {
	return metaFields(&g.ObjectMeta, fields.Set{"decision": g.Decision})
}

var rolloutGateColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "The name the gate was asked by."},
	{Name: "Monitor", Type: "string", Description: "The monitor's name."},
	{Name: "Decision", Type: "string", Description: "go or stop."},
	{Name: "Budget Left", Type: "string", Description: "Error budget left, percent (no SLO: <none>)."},
	{Name: "Burn Rate Fast", Type: "string", Description: "The lower burn rate of 1h and 5m."},
	{Name: "Open Incident", Type: "string", Description: "The open incident's id."},
	{Name: "Stopped By", Type: "string", Description: "The codes of the rules that stop the rollout."},
}

func (g *RolloutGate) row() []any {
	budget, fast := "<none>", "<none>"
	if s := g.SLO; s != nil {
		if s.ErrorBudgetRemaining != nil {
			budget = fmt.Sprintf("%.2f%%", *s.ErrorBudgetRemaining)
		}
		if s.BurnRateFast != nil {
			fast = fmt.Sprintf("%.2f", *s.BurnRateFast)
		}
	}
	var stops []string
	for _, r := range g.Reasons {
		if !r.OK {
			stops = append(stops, r.Code)
		}
	}
	incident := ""
	if g.OpenIncidentID != nil {
		incident = *g.OpenIncidentID
	}
	return []any{g.Name, g.MonitorName, g.Decision, budget, fast, orNone(incident), orNone(strings.Join(stops, ","))}
}

var rolloutGatesResource = &resource{
	name: RolloutGatesResource, singular: "rolloutgate", kind: "RolloutGate",
	verbs: metav1.Verbs{"get"}, columns: rolloutGateColumns,
	list: func(*call) ([]object, error) { return nil, nil },
	get:  getRolloutGate,
}

// getRolloutGate answers the gate named name: a monitor's REST id (an
// uptimemonitors name), an SLO target's id, or the name of a Monitor
// object with an SLO (what a GitOps repository knows), in that order.
func getRolloutGate(c *call, name string) (object, error) {
	q := url.Values{}
	for _, p := range gateQueryParams {
		if v, ok := c.r.URL.Query()[p]; ok {
			q[p] = v
		}
	}
	query := ""
	if len(q) > 0 {
		query = "?" + q.Encode()
	}
	var g restapi.RolloutGate
	err := c.restJSON("read-only", http.MethodGet, "/monitors/"+url.PathEscape(name)+"/gate"+query, nil, &g)
	if !isStatus(err, http.StatusNotFound) {
		return gateObject(c, name, &g, err)
	}
	// A plan without the SLO feature has no SLO targets (403): the name
	// stays not found.
	serr := c.restJSON("read-only", http.MethodGet, "/reliability/slo-targets/"+url.PathEscape(name)+"/gate"+query, nil, &g)
	if !isStatus(serr, http.StatusNotFound) {
		if isStatus(serr, http.StatusForbidden) {
			return nil, err
		}
		return gateObject(c, name, &g, serr)
	}
	var slos []restapi.SLOTarget
	if lerr := c.restJSON("read-only", http.MethodGet, "/reliability/slo-targets", nil, &slos); lerr != nil {
		return nil, lerr
	}
	for _, s := range slos {
		if s.MonitorName == name && s.MonitorID != nil {
			err = c.restJSON("read-only", http.MethodGet, "/monitors/"+url.PathEscape(*s.MonitorID)+"/gate"+query, nil, &g)
			return gateObject(c, name, &g, err)
		}
	}
	return nil, err
}

// gateObject wraps the REST answer g (unless err) as the object name.
func gateObject(c *call, name string, g *restapi.RolloutGate, err error) (object, error) {
	if err != nil {
		return nil, err
	}
	return &RolloutGate{
		TypeMeta:    metav1.TypeMeta{Kind: "RolloutGate", APIVersion: Group + "/" + Version},
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: c.ns, UID: types.UID(g.MonitorID)},
		RolloutGate: *g,
	}, nil
}

// isStatus tells whether err is a REST answer of status code.
func isStatus(err error, code int) bool {
	re, ok := err.(*restError)
	return ok && re.code == code
}
