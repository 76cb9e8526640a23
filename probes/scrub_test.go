package probes

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// TestResultsDoNotCarryCredentials: a target that echoes the request
// headers cannot have a credential stored in the check's results (an
// assertion's actual value, the error message), whole or cut short by the
// 256-character truncation.
func TestResultsDoNotCarryCredentials(t *testing.T) {
	const token = "prod-billing-token-5f1c0e7a9b"
	var mu sync.Mutex
	var got []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"auth":  r.Header.Get("Authorization"),
			"long":  strings.Repeat("x", 240) + r.Header.Get("Authorization"), // cut by the truncation
			"token": strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
		})
	}))
	defer ts.Close()
	A := func(prop string) monv1.Assertion {
		return monv1.Assertion{Source: "json_body", Property: prop, Operator: "equals", Target: "nope"}
	}
	a := httpAssignment(ts.URL+"/echo", monv1.HTTPConfig{
		Headers:    probeapi.TextHeaders(map[string]string{"Authorization": "Bearer " + token}),
		Assertions: []monv1.Assertion{A("$.auth"), A("$.long"), A("$.token")},
	})
	a.Type = probeapi.TypeAPI
	res := run(t, a, testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	mu.Lock()
	if len(got) != 1 || got[0] != "Bearer "+token {
		t.Fatalf("the target got %q, want the credential (the check must still send it)", got)
	}
	mu.Unlock()
	all := res.ErrorMessage + string(res.Details)
	for _, part := range []string{token, token[:12], "prod-billing"} {
		if strings.Contains(all, part) {
			t.Fatalf("the result carries %q:\n%s\n%s", part, res.ErrorMessage, res.Details)
		}
	}
	if !strings.Contains(string(res.Details), "[REDACTED]") {
		t.Fatalf("details %s: want the echoed value shown as [REDACTED]", res.Details)
	}
}
