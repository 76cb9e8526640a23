package workspace

import (
	"net/http"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

func (h *Handlers) whoami(w http.ResponseWriter, r *http.Request) {
	c := core.CallerFrom(r.Context())
	plan, err := h.d.Plans.ForNamespace(r.Context(), c.Namespace)
	if err != nil {
		core.WriteError(w, http.StatusInternalServerError, core.CodeInternal, "could not read the workspace's plan")
		return
	}
	limit := func(v int32) *int32 {
		if v == 0 {
			return nil
		}
		return &v
	}
	role := "member"
	if c.Owner {
		role = "owner"
	}
	authType := "api_key"
	if c.Key == nil {
		authType = "kubernetes"
	}
	httpjson.Write(w, http.StatusOK, restapi.Whoami{
		WorkspaceID:            c.Namespace,
		AuthType:               authType,
		APIKeyAccess:           strings.ReplaceAll(string(c.Level), "-", "_"),
		WorkspaceRole:          role,
		ReadOnly:               c.Level == apikeys.ReadOnly,
		CanManageAlertChannels: c.Level == apikeys.Automation,
		Plan:                   plan.Name,
		Limits: restapi.WhoamiLimits{
			Monitors:           limit(plan.Spec.Limits.Monitors),
			MinIntervalSeconds: plans.MinIntervalSeconds(plan),
			ProbeLocations:     limit(plan.Spec.Limits.ProbeLocations),
			StatusPages:        limit(plan.Spec.Limits.StatusPages),
		},
	})
}
