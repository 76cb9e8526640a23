package probes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

func TestMultistep(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "abc"})
		w.Header().Set("X-Request-Id", "req-9")
		fmt.Fprint(w, `{"token":"tok-123","user":{"id":7}}`)
	})
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("sid")
		if err != nil || c.Value != "abc" || r.Header.Get("Authorization") != "Bearer tok-123" || r.Header.Get("X-Trace") != "req-9" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, `{"id":%s,"name":"ada"}`, r.PathValue("id"))
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()

	steps := []monv1.MultistepStep{
		{Name: "login", Method: "POST", URL: ts.URL + "/login", Body: `{"u":"a"}`, Extract: []monv1.Extraction{
			{Variable: "token", Source: "json_body", Property: "$.token"},
			{Variable: "uid", Source: "json_body", Property: "$.user.id"},
			{Variable: "rid", Source: "header", Property: "X-Request-Id"},
		}},
		{Name: "profile", URL: ts.URL + "/users/{{uid}}", Headers: probeapi.TextHeaders(map[string]string{"Authorization": "Bearer {{ token }}", "X-Trace": "{{rid}}"}),
			Assertions: []monv1.Assertion{{Source: "json_body", Property: "$.name", Operator: "equals", Target: "ada"}}},
	}
	a := probeapi.Assignment{Type: probeapi.TypeMultistep, TimeoutMs: 5000, Config: monv1.MonitorSpec{Multistep: &monv1.MultistepConfig{Steps: steps}}}
	res := run(t, a, testEnv())
	wantStatus(t, res, probeapi.StatusUp)
	var d multistepDetails
	json.Unmarshal(res.Details, &d)
	if len(d.Steps) != 2 || !d.Steps[1].Passed {
		t.Fatalf("details %+v", d)
	}
	// Details name variables but never hold their values.
	if d.Steps[1].URL != ts.URL+"/users/{{uid}}" || strings.Contains(string(res.Details), "tok-123") {
		t.Fatalf("details leak extracted values: %s", res.Details)
	}
	if got := redactVars(`Get "http://x/users/7?t=tok-123": refused`, map[string]string{"uid": "7", "token": "tok-123"}); got != `Get "http://x/users/7?t={{token}}": refused` {
		t.Fatalf("redacted error = %s", got)
	}

	// A failing assertion in step 2 fails the run and names the step.
	a.Config.Multistep.Steps[1].Assertions[0].Target = "bob"
	res = run(t, a, testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorStep {
		t.Fatalf("error type %q", res.ErrorType)
	}

	// A failing first step stops the run.
	a.Config.Multistep.Steps[0].ExpectedStatusCodes = []int32{201}
	res = run(t, a, testEnv())
	json.Unmarshal(res.Details, &d)
	wantStatus(t, res, probeapi.StatusDown)
	if len(d.Steps) != 1 {
		t.Fatalf("ran %d steps", len(d.Steps))
	}
}
