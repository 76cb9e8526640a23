package probes

import (
	"net/http"
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

func FuzzAssertion(f *testing.F) {
	f.Add("json_body", "$.a", "equals", "1", []byte(`{"a":1}`), 200)
	f.Add("header", "X-A", "matches", "^(a|b)+$", []byte(``), 404)
	f.Add("body", "", "contains", "ok", []byte(`ok`), 500)
	f.Add("response_time", "", "less_or_equal", "1e3", []byte(``), 200)
	f.Add("status_code", "", "greater_than", "abc", []byte(``), 200)
	f.Fuzz(func(t *testing.T, src, prop, op, target string, body []byte, code int) {
		r := &response{StatusCode: code, Header: http.Header{"X-A": {"secret-abab"}}, Body: body, Elapsed: 5 * time.Millisecond}
		res := evaluateAssertion(monv1.Assertion{Source: monv1.AssertionSource(src), Property: prop, Operator: monv1.AssertionOperator(op), Target: target}, r)
		if res.Passed && res.Message != "" {
			t.Fatalf("passed with message %q", res.Message)
		}
		if src == probeapi.SourceHeader && res.Actual != "" {
			t.Fatalf("header value reported")
		}
	})
}
