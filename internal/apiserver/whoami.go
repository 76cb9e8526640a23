package apiserver

import (
	"net/http"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// Whoami is the response of GET /automation/whoami.
type Whoami struct {
	WorkspaceID            string       `json:"workspace_id"`
	UserEmail              *string      `json:"user_email"`
	AuthType               string       `json:"auth_type"`
	APIKeyAccess           string       `json:"api_key_access"`
	WorkspaceRole          string       `json:"workspace_role"`
	ReadOnly               bool         `json:"read_only"`
	CanManageAlertChannels bool         `json:"can_manage_alert_channels"`
	Plan                   string       `json:"plan"`
	Market                 *string      `json:"market"`
	Limits                 WhoamiLimits `json:"limits"`
}

// WhoamiLimits are the plan limits whoami reports; null means unlimited.
type WhoamiLimits struct {
	Monitors           *int32 `json:"monitors"`
	MinIntervalSeconds int32  `json:"min_interval_seconds"`
	ProbeLocations     *int32 `json:"probe_locations"`
	StatusPages        *int32 `json:"status_pages"`
}

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	c := CallerFrom(r.Context())
	plan, err := s.opts.Plans.ForNamespace(r.Context(), c.Namespace)
	if err != nil {
		writeError(w, http.StatusInternalServerError, CodeInternal, "could not read the workspace's plan")
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
	httpjson.Write(w, http.StatusOK, Whoami{
		WorkspaceID:            c.Namespace,
		AuthType:               authType,
		APIKeyAccess:           strings.ReplaceAll(string(c.Level), "-", "_"),
		WorkspaceRole:          role,
		ReadOnly:               c.Level == apikeys.ReadOnly,
		CanManageAlertChannels: c.Level == apikeys.Automation,
		Plan:                   plan.Name,
		Limits: WhoamiLimits{
			Monitors:           limit(plan.Spec.Limits.Monitors),
			MinIntervalSeconds: plans.MinIntervalSeconds(plan),
			ProbeLocations:     limit(plan.Spec.Limits.ProbeLocations),
			StatusPages:        limit(plan.Spec.Limits.StatusPages),
		},
	})
}
