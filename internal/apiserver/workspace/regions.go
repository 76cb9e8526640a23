package workspace

import (
	"net/http"
	"slices"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

func probeRegionObject(pr *monv1.ProbeRegion) restapi.ProbeRegion {
	code := monitor.RegionCode(pr)
	name := pr.Spec.DisplayName
	if name == "" {
		name = pr.Spec.City
	}
	if name == "" {
		name = code
	}
	return restapi.ProbeRegion{Code: code, Name: name, City: core.StrPtr(pr.Spec.City), Country: core.StrPtr(pr.Spec.Country),
		Continent: core.StrPtr(string(pr.Spec.Continent)), ISP: core.StrPtr(pr.Spec.ISP), Online: pr.Status.Online,
		Agents: pr.Status.OnlineAgents, Monitors: pr.Status.Monitors, LastContact: core.MetaTimePtr(pr.Status.LastContact)}
}

// listRegions answers GET /regions: every probe region (ProbeRegions are
// cluster-wide) with its location and live state, sorted by code. Not part
// of the specification; the MCP tool service_list_regions reads it.
func (h *Handlers) listRegions(w http.ResponseWriter, r *http.Request) {
	var list monv1.ProbeRegionList
	if err := h.d.Client.List(r.Context(), &list); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out := make([]restapi.ProbeRegion, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil {
			out = append(out, probeRegionObject(&list.Items[i]))
		}
	}
	slices.SortFunc(out, func(a, b restapi.ProbeRegion) int { return strings.Compare(a.Code, b.Code) })
	httpjson.Write(w, http.StatusOK, out)
}
