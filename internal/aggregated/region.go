package aggregated

import (
	"net/http"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// RegionsResource is the probe regions as a namespaced resource: what the
// REST API's GET /regions answers in a workspace. ProbeRegion objects are
// cluster-scoped and stay with cluster administrators; this read-only view
// lets the built-in view role of a namespace see which regions are offline.
const RegionsResource = "uptimeregions"

// UptimeRegion is a probe region as a workspace sees it (kind UptimeRegion
// of api.uptime-operator.io/v1); its name is the region's code.
type UptimeRegion struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              UptimeRegionSpec   `json:"spec"`
	Status            UptimeRegionStatus `json:"status"`
}

// UptimeRegionSpec is where the region checks from.
type UptimeRegionSpec struct {
	DisplayName string `json:"displayName"`
	City        string `json:"city,omitempty"`
	Country     string `json:"country,omitempty"`
	Continent   string `json:"continent,omitempty"`
	ISP         string `json:"isp,omitempty"`
}

// UptimeRegionStatus is the region's live state.
type UptimeRegionStatus struct {
	// Online is true while an agent of the region is connected.
	Online bool `json:"online"`
	// Agents is how many agents are connected.
	Agents int32 `json:"agents"`
	// Monitors is how many monitors (of every workspace) the region checks;
	// a region checking none may sit idle, scaled to zero.
	Monitors int32 `json:"monitors"`
	// LastContact is the latest heartbeat of an agent.
	LastContact *metav1.Time `json:"lastContact,omitempty"`
}

func (r *UptimeRegion) objectMeta() *metav1.ObjectMeta { return &r.ObjectMeta }

func (r *UptimeRegion) fieldSet() fields.Set {
	return metaFields(&r.ObjectMeta, fields.Set{"status.online": strconv.FormatBool(r.Status.Online)})
}

var regionColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "The region's code."},
	{Name: "Display Name", Type: "string", Description: "The region's label."},
	{Name: "Online", Type: "boolean", Description: "Whether an agent is connected."},
	{Name: "Agents", Type: "integer", Description: "Connected agents."},
	{Name: "Monitors", Type: "integer", Description: "Monitors the region checks (every workspace)."},
	{Name: "Last Contact", Type: "string", Description: "How long ago an agent last reported."},
}

func (r *UptimeRegion) row() []any {
	last := "<none>"
	if r.Status.LastContact != nil {
		last = duration.HumanDuration(time.Since(r.Status.LastContact.Time)) + " ago"
	}
	return []any{r.Name, r.Spec.DisplayName, r.Status.Online, r.Status.Agents, r.Status.Monitors, last}
}

var regionsResource = &resource{
	name: RegionsResource, singular: "uptimeregion", kind: "UptimeRegion",
	verbs: metav1.Verbs{"get", "list", "watch"}, columns: regionColumns, fields: []string{"status.online"},
	list: func(c *call) ([]object, error) {
		var list []restapi.ProbeRegion
		if err := c.restJSON("read-only", http.MethodGet, "/regions", nil, &list); err != nil {
			return nil, err
		}
		out := make([]object, 0, len(list))
		for _, p := range list {
			r := &UptimeRegion{
				TypeMeta:   metav1.TypeMeta{Kind: "UptimeRegion", APIVersion: Group + "/" + Version},
				ObjectMeta: metav1.ObjectMeta{Name: p.Code, Namespace: c.ns},
				Spec: UptimeRegionSpec{DisplayName: p.Name, City: deref(p.City), Country: deref(p.Country),
					Continent: deref(p.Continent), ISP: deref(p.ISP)},
				Status: UptimeRegionStatus{Online: p.Online, Agents: p.Agents, Monitors: p.Monitors, LastContact: metaTime(p.LastContact)},
			}
			setContentVersion(r)
			out = append(out, r)
		}
		return out, nil
	},
}
