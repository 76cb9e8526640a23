package probes

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/jsonpath"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// maxSteps bounds the steps of a multistep monitor.
const maxSteps = 20

// varRef matches {{ name }} references to extracted variables.
var varRef = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}`)

// stepResult is one step as reported in details.
type stepResult struct {
	Name           string            `json:"name"`
	URL            string            `json:"url"`
	StatusCode     int               `json:"status_code,omitempty"`
	ResponseTimeMs int64             `json:"response_time_ms"`
	Passed         bool              `json:"passed"`
	Error          string            `json:"error,omitempty"`
	Assertions     []assertionResult `json:"assertions,omitempty"`
}

// multistepDetails is Result.Details of multistep checks.
type multistepDetails struct {
	Steps []stepResult `json:"steps"`
	// Extracted lists the names (never the values) of extracted variables.
	Extracted []string `json:"extracted,omitempty"`
}

func init() { register(checkMultistep, monv1.MonitorMultistep) }

// checkMultistep runs HTTP steps in order with a shared cookie jar. Values
// extracted from a step's JSON body or headers replace {{variable}} in the
// URL, headers and body of later steps (verbatim, without escaping). The
// first failing step ends the run as down; later steps are not run.
func checkMultistep(ctx context.Context, a *probeapi.Assignment, env *Env) probeapi.Result {
	var steps []monv1.MultistepStep
	if a.Config.Multistep != nil {
		steps = a.Config.Multistep.Steps
	}
	if len(steps) == 0 || len(steps) > maxSteps {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, fmt.Errorf("1-%d steps are required", maxSteps))
	}
	session := &httpSession{env: env, maxRedirects: maxRedirects(nil), jar: newJar()}
	vars := map[string]string{}
	var d multistepDetails
	res := probeapi.Result{Status: probeapi.StatusUp}
	start := time.Now()
	for i, st := range steps {
		name := st.Name
		if name == "" {
			name = fmt.Sprintf("step %d", i+1)
		}
		sr, out, err := runStep(ctx, session, st, a.Bound(i), vars, 0, env.Region)
		sr.Name = name
		d.Steps = append(d.Steps, sr)
		if out != nil {
			code := out.StatusCode
			res.StatusCode = &code
			res.TLS = out.TLS
		}
		if err != nil || !sr.Passed {
			if err != nil {
				res = fromError(err)
				if res.Status == probeapi.StatusDown && res.ErrorType != probeapi.ErrorCredentialOrigin {
					res.ErrorType = probeapi.ErrorStep
				}
			} else {
				res.Status, res.ErrorType = probeapi.StatusDown, probeapi.ErrorStep
			}
			res.ErrorMessage = fmt.Sprintf("step %d (%s): %s", i+1, truncateString(name, 64), sr.Error)
			break
		}
	}
	for k := range vars {
		d.Extracted = append(d.Extracted, k)
	}
	res.ResponseTimeMs = ms(time.Since(start))
	res.Details = details(d)
	return res
}

// runStep performs one step, evaluates it and extracts its variables.
func runStep(ctx context.Context, session *httpSession, st monv1.MultistepStep, bound map[string]string, vars map[string]string, maxBytes int64, region string) (stepResult, *httpOutcome, error) {
	// The step's secrets stand for {{name}} in its headers and body only,
	// never in its URL, and bind what holds them to their origin.
	secrets := probeapi.HeaderText(st.Secrets)
	subst := func(s string, secret func(name string)) string {
		return varRef.ReplaceAllStringFunc(s, func(m string) string {
			name := varRef.FindStringSubmatch(m)[1]
			if v, ok := secrets[name]; ok && secret != nil {
				secret(name)
				return v
			}
			if v, ok := vars[name]; ok {
				return v
			}
			return m
		})
	}
	headers := make(map[string]string, len(st.Headers))
	for k, v := range probeapi.HeaderText(st.Headers) {
		headers[k] = subst(v, func(name string) {
			bound = withBound(bound, k, bound[probeapi.SecretVariable(name)])
		})
	}
	var bodyBound *string
	body := subst(st.Body, func(name string) {
		origin := bound[probeapi.SecretVariable(name)]
		bodyBound = &origin
	})
	url := subst(st.URL, nil)
	// Details keep the URL as written: substituted values (tokens, ids
	// taken from earlier responses) are never stored.
	sr := stepResult{URL: truncateString(st.URL, 256)}
	out, err := session.fetch(ctx, httpRequest{Method: string(st.Method), URL: url, Headers: headers, Body: body, MaxBytes: maxBytes, Region: region, Bound: bound, BodyBound: bodyBound})
	if out != nil {
		sr.ResponseTimeMs = ms(out.Elapsed)
	}
	if err != nil {
		if errors.Is(err, errTooManyRedirects) {
			err = fmt.Errorf("%w", err)
		}
		sr.Error = redactVars(err.Error(), vars)
		return sr, out, err
	}
	sr.StatusCode = out.StatusCode
	if !statusOK(out.StatusCode, st.ExpectedStatusCodes) {
		sr.Error = fmt.Sprintf("unexpected status code %d", out.StatusCode)
		return sr, out, nil
	}
	var msg string
	sr.Assertions, msg = evaluateAssertions(st.Assertions, &out.response)
	if msg != "" {
		sr.Error = msg
		return sr, out, nil
	}
	for _, ex := range st.Extract {
		v, ok, err := extract(ex, &out.response)
		if err != nil || !ok {
			sr.Error = fmt.Sprintf("extract %s: value not found", truncateString(ex.Variable, 64))
			return sr, out, nil
		}
		vars[ex.Variable] = v
	}
	sr.Passed = true
	return sr, out, nil
}

// redactVars replaces the values of vars in s (an error that may quote the
// request URL) with their {{name}} placeholders, longest first. Values
// shorter than minRedacted (ids, counts) are left: replacing "7" would
// garble every number in the message, and they are not credentials.
func redactVars(s string, vars map[string]string) string {
	const minRedacted = 6
	names := make([]string, 0, len(vars))
	for k, v := range vars {
		if len(v) >= minRedacted {
			names = append(names, k)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return len(vars[b]) - len(vars[a]) })
	for _, k := range names {
		s = strings.ReplaceAll(s, vars[k], "{{"+k+"}}")
	}
	return s
}

// extract reads a variable's value from a response.
func extract(ex monv1.Extraction, r *response) (string, bool, error) {
	switch ex.Source {
	case probeapi.SourceHeader:
		v := r.Header.Get(ex.Property)
		return v, v != "", nil
	case probeapi.SourceJSONBody, "":
		doc, err := r.json()
		if err != nil {
			return "", false, err
		}
		v, ok, err := jsonpath.Eval(doc, ex.Property)
		if err != nil || !ok {
			return "", false, err
		}
		return jsonpath.Text(v), true, nil
	default:
		return "", false, fmt.Errorf("unknown extract source %q", truncateString(ex.Source, 32))
	}
}

// withBound returns bound with header bound to origin too, copied first:
// bound is the assignment's, shared by every run.
func withBound(bound map[string]string, header, origin string) map[string]string {
	out := make(map[string]string, len(bound)+1)
	maps.Copy(out, bound)
	out[header] = origin
	return out
}
