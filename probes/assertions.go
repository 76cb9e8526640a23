package probes

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/jsonpath"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// maxAssertions bounds the assertions evaluated per response.
const maxAssertions = 50

// maxRegexLen bounds the patterns of the matches operator.
const maxRegexLen = 1000

// response is what assertions and extraction look at.
type response struct {
	StatusCode int
	Header     http.Header
	Body       []byte
	Elapsed    time.Duration

	doc    any
	docErr error
	parsed bool
}

// json returns the body decoded as JSON, decoding it once.
func (r *response) json() (any, error) {
	if !r.parsed {
		r.parsed = true
		r.doc, r.docErr = jsonpath.Decode(r.Body)
	}
	return r.doc, r.docErr
}

// assertionResult is one evaluated assertion as reported in details.
type assertionResult struct {
	Source   string `json:"source"`
	Property string `json:"property,omitempty"`
	Operator string `json:"operator"`
	Target   string `json:"target,omitempty"`
	// Actual is omitted for headers, which may carry secrets.
	Actual  string `json:"actual,omitempty"`
	Passed  bool   `json:"passed"`
	Message string `json:"message,omitempty"`
}

// evaluateAssertions evaluates every assertion (at most maxAssertions) and
// returns the results and the first failure message, if any.
func evaluateAssertions(as []monv1.Assertion, r *response) ([]assertionResult, string) {
	if len(as) > maxAssertions {
		as = as[:maxAssertions]
	}
	out := make([]assertionResult, 0, len(as))
	first := ""
	for i, a := range as {
		res := evaluateAssertion(a, r)
		out = append(out, res)
		if !res.Passed && first == "" {
			first = fmt.Sprintf("assertion %d (%s %s): %s", i+1, a.Source, a.Operator, res.Message)
		}
	}
	return out, first
}

// evaluateAssertion evaluates one assertion against a response.
func evaluateAssertion(a monv1.Assertion, r *response) assertionResult {
	res := assertionResult{Source: string(a.Source), Property: a.Property, Operator: string(a.Operator), Target: truncateString(string(a.Target), 256)}
	actual, exists, err := assertionActual(a, r)
	if err != nil {
		res.Message = err.Error()
		return res
	}
	if a.Source != probeapi.SourceHeader {
		res.Actual = truncateString(actual, 256)
	}
	res.Passed, err = compare(string(a.Operator), actual, exists, string(a.Target))
	switch {
	case err != nil:
		res.Message = err.Error()
	case !res.Passed && a.Source == probeapi.SourceHeader:
		res.Message = fmt.Sprintf("header %s does not satisfy %s", truncateString(a.Property, 64), a.Operator)
	case !res.Passed:
		res.Message = fmt.Sprintf("got %q, want %s %q", truncateString(actual, 64), a.Operator, truncateString(string(a.Target), 64))
	}
	return res
}

// assertionActual extracts the value an assertion looks at.
func assertionActual(a monv1.Assertion, r *response) (string, bool, error) {
	switch a.Source {
	case probeapi.SourceStatusCode:
		return strconv.Itoa(r.StatusCode), true, nil
	case probeapi.SourceResponseTime:
		return strconv.FormatInt(r.Elapsed.Milliseconds(), 10), true, nil
	case probeapi.SourceBody:
		return string(r.Body), true, nil
	case probeapi.SourceHeader:
		if a.Property == "" {
			return "", false, fmt.Errorf("header assertion needs a property")
		}
		vs, ok := r.Header[http.CanonicalHeaderKey(a.Property)]
		return strings.Join(vs, ", "), ok, nil
	case probeapi.SourceJSONBody:
		doc, err := r.json()
		if err != nil {
			return "", false, fmt.Errorf("body is not json")
		}
		v, ok, err := jsonpath.Eval(doc, a.Property)
		if err != nil {
			return "", false, err
		}
		if !ok {
			return "", false, nil
		}
		return jsonpath.Text(v), true, nil
	default:
		return "", false, fmt.Errorf("unknown assertion source %q", truncateString(string(a.Source), 32))
	}
}

// compare applies an operator. Equality is numeric when both sides are
// numbers (so "200" equals "200.0"), else textual; ordering operators need
// numbers.
func compare(op, actual string, exists bool, target string) (bool, error) {
	switch op {
	case probeapi.OpExists:
		return exists, nil
	case probeapi.OpNotExists:
		return !exists, nil
	}
	if !exists {
		if op == probeapi.OpNotEquals || op == probeapi.OpNotContains {
			return true, nil
		}
		return false, fmt.Errorf("value does not exist")
	}
	switch op {
	case probeapi.OpEquals:
		return equal(actual, target), nil
	case probeapi.OpNotEquals:
		return !equal(actual, target), nil
	case probeapi.OpContains:
		return strings.Contains(actual, target), nil
	case probeapi.OpNotContains:
		return !strings.Contains(actual, target), nil
	case probeapi.OpMatches:
		if len(target) > maxRegexLen {
			return false, fmt.Errorf("pattern longer than %d characters", maxRegexLen)
		}
		re, err := regexp.Compile(target)
		if err != nil {
			return false, fmt.Errorf("invalid pattern: %w", err)
		}
		return re.MatchString(actual), nil
	case probeapi.OpGreaterThan, probeapi.OpLessThan, probeapi.OpGreaterOrEqual, probeapi.OpLessOrEqual:
		a, err1 := strconv.ParseFloat(strings.TrimSpace(actual), 64)
		t, err2 := strconv.ParseFloat(strings.TrimSpace(target), 64)
		if err1 != nil || err2 != nil {
			return false, fmt.Errorf("%s needs numbers", op)
		}
		switch op {
		case probeapi.OpGreaterThan:
			return a > t, nil
		case probeapi.OpLessThan:
			return a < t, nil
		case probeapi.OpGreaterOrEqual:
			return a >= t, nil
		default:
			return a <= t, nil
		}
	default:
		return false, fmt.Errorf("unknown operator %q", truncateString(op, 32))
	}
}

func equal(a, b string) bool {
	if a == b {
		return true
	}
	x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	return err1 == nil && err2 == nil && x == y
}
