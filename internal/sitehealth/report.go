package sitehealth

import (
	"context"
	"encoding/json"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Report is a run with its summary and issues, as the REST API shows it.
type Report struct {
	store.HealthRun
	// Summary replaces the raw stored document.
	Summary *Summary            `json:"summary"`
	Issues  []store.HealthIssue `json:"issues"`
}

// LoadReport reads run runID with its issues; ErrNotFound when missing.
func LoadReport(ctx context.Context, st ReportStore, runID string) (Report, error) {
	run, err := st.GetHealthRun(ctx, runID)
	if err != nil {
		return Report{}, err
	}
	issues, err := st.ListHealthIssues(ctx, runID)
	if err != nil {
		return Report{}, err
	}
	return Report{HealthRun: run, Summary: DecodeSummary(run), Issues: issues}, nil
}

// DecodeSummary decodes the summary stored with run, nil when it has none.
func DecodeSummary(run store.HealthRun) *Summary {
	if len(run.Summary) == 0 {
		return nil
	}
	var s Summary
	if json.Unmarshal(run.Summary, &s) != nil {
		return nil
	}
	return &s
}

// MarshalJSON drops the raw summary in favour of the decoded one.
func (r Report) MarshalJSON() ([]byte, error) {
	run := r.HealthRun
	run.Summary = nil
	type plain struct {
		store.HealthRun
		Summary *Summary            `json:"summary"`
		Issues  []store.HealthIssue `json:"issues"`
	}
	return json.Marshal(plain{HealthRun: run, Summary: r.Summary, Issues: r.Issues})
}
