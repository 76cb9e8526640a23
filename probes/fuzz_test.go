package probes

import (
	"net/http"
	"testing"
	"time"

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
		res := evaluateAssertion(probeapi.Assertion{Source: src, Property: prop, Operator: op, Target: probeapi.Scalar(target)}, r)
		if res.Passed && res.Message != "" {
			t.Fatalf("passed with message %q", res.Message)
		}
		if src == probeapi.SourceHeader && res.Actual != "" {
			t.Fatalf("header value reported")
		}
	})
}
