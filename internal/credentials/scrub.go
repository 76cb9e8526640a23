package credentials

import (
	"bytes"
	"encoding/json"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// minScrubLen is the shortest header value scrubbed from results: shorter
// values are no secret worth the name, and replacing "1" or "on" in every
// message would make results unreadable.
const minScrubLen = 8

// Values lists the header values of an assignment (resolved from Secrets
// or literal) that a check result must not carry: an echoing target could
// otherwise have a credential stored in an assertion's actual value or an
// error message, where every reader of check history sees it. A value of
// the form "<scheme> <token>" (Bearer, Basic) gives its token too.
func Values(a *probeapi.Assignment) []string {
	var out []string
	add := func(hs []monv1.HTTPHeader) {
		for _, h := range hs {
			if h.Value == nil {
				continue
			}
			v := strings.TrimSpace(*h.Value)
			if len(v) < minScrubLen {
				continue
			}
			out = append(out, v)
			if _, token, ok := strings.Cut(v, " "); ok && len(strings.TrimSpace(token)) >= minScrubLen {
				out = append(out, strings.TrimSpace(token))
			}
		}
	}
	for _, l := range monitorconfig.HeaderLists(&a.Config) {
		add(*l.Headers)
	}
	return out
}

// ScrubResult replaces every occurrence of values in res's error message
// and details by [REDACTED], including a value cut short where a text was
// truncated.
func ScrubResult(res *probeapi.Result, values []string) {
	if len(values) == 0 {
		return
	}
	res.ErrorMessage = scrub(res.ErrorMessage, values)
	if len(res.Details) == 0 {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(res.Details))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return
	}
	if out, changed := scrubValue(v, values); changed {
		if raw, err := json.Marshal(out); err == nil {
			res.Details = raw
		}
	}
}

func scrubValue(v any, values []string) (any, bool) {
	switch t := v.(type) {
	case string:
		s := scrub(t, values)
		return s, s != t
	case map[string]any:
		changed := false
		for k, x := range t {
			if y, c := scrubValue(x, values); c {
				t[k], changed = y, true
			}
		}
		return t, changed
	case []any:
		changed := false
		for i, x := range t {
			if y, c := scrubValue(x, values); c {
				t[i], changed = y, true
			}
		}
		return t, changed
	}
	return v, false
}

// scrub replaces the values in s, and a value's beginning (at least
// minScrubLen bytes) where s ends, as a truncated text does (with or
// without an ellipsis).
func scrub(s string, values []string) string {
	for _, v := range values {
		s = strings.ReplaceAll(s, v, Redacted)
	}
	body, ell := strings.CutSuffix(s, "…")
	for _, v := range values {
		for n := len(v) - 1; n >= minScrubLen; n-- {
			if strings.HasSuffix(body, v[:n]) {
				body = body[:len(body)-n] + Redacted
				break
			}
		}
	}
	if ell {
		return body + "…"
	}
	return body
}
