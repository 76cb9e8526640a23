package monitors

import (
	"encoding/json"
	"net/http"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// stepResultJSON is one step of a multistep check, as the probe reports it in the
// check's details (probes/multistep.go).
func stepRun(c store.Check) restapi.StepRun {
	var d struct {
		Steps []struct {
			Name           string            `json:"name"`
			URL            string            `json:"url"`
			StatusCode     int               `json:"status_code"`
			ResponseTimeMs int64             `json:"response_time_ms"`
			Passed         bool              `json:"passed"`
			Error          string            `json:"error"`
			Assertions     []json.RawMessage `json:"assertions"`
		} `json:"steps"`
		Extracted []string `json:"extracted"`
	}
	if len(c.Details) > 0 {
		_ = json.Unmarshal(c.Details, &d)
	}
	out := restapi.StepRun{Check: core.CheckRecord(c), Steps: []restapi.StepResult{}, Extracted: core.NonNil(d.Extracted)}
	for i, st := range d.Steps {
		var code *int
		if st.StatusCode != 0 {
			code = &st.StatusCode
		}
		out.Steps = append(out.Steps, restapi.StepResult{Index: i, Name: st.Name, URL: st.URL, StatusCode: code,
			ResponseTimeMs: st.ResponseTimeMs, Passed: st.Passed, Error: core.StrPtr(st.Error), Assertions: core.NonNil(st.Assertions)})
	}
	return out
}

// stepRuns answers GET /monitors/:id/step-runs: the latest checks of a
// multistep monitor with their per-step results, newest first. Query as
// check history: limit (1-100, default 10), before (cursor), region.
func (h *history) stepRuns(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	if core.TypeOrDefault(m.Spec.Type) != monv1.MonitorMultistep {
		core.WriteValidation(w, core.FieldErr("type", "step runs exist only for multistep monitors"))
		return
	}
	q, errs := checksPage(r, m, 10, 100)
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	items, next, err := h.st.ListChecks(r.Context(), q)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	runs := make([]restapi.StepRun, 0, len(items))
	for _, c := range items {
		runs = append(runs, stepRun(c))
	}
	httpjson.Write(w, http.StatusOK, restapi.StepRuns{MonitorID: string(m.UID), Items: runs, NextBefore: core.ISOTimePtr(next)})
}
