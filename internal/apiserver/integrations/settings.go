package integrations

import (
	"net/http"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Alerting settings: readable with every key.

func (h *Handlers) listEscalationPolicies(w http.ResponseWriter, r *http.Request) {
	var list monv1.EscalationPolicyList
	if err := h.d.List(r.Context(), &list, core.CallerFrom(r.Context()).Namespace); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	out := []restapi.EscalationPolicy{}
	for _, p := range list.Items {
		steps := []restapi.EscalationPolicyStep{}
		for _, st := range p.Spec.Steps {
			var channels []string
			for _, ch := range st.Channels {
				channels = append(channels, ch.Name)
			}
			steps = append(steps, restapi.EscalationPolicyStep{DelayMinutes: st.DelayMinutes, Channels: core.NonNil(channels), Emails: core.NonNil(st.Emails)})
		}
		out = append(out, restapi.EscalationPolicy{ID: string(p.UID), Name: p.Name, Description: core.StrPtr(p.Spec.Description),
			Repeat: p.Spec.Repeat, Steps: steps, CreatedAt: core.ISOTime(p.CreationTimestamp.Time)})
	}
	httpjson.Write(w, http.StatusOK, out)
}

// emptyList answers settings the operator does not model (suppression
// windows beyond maintenance) with an empty list.
func emptyList(w http.ResponseWriter, _ *http.Request) { httpjson.Write(w, http.StatusOK, []any{}) }
