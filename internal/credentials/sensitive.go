package credentials

import (
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// What counts as a credential where a writer gives a value in plain text.
//
// Kubernetes' built-in `view` role reads every Monitor and AlertChannel the
// chart's aggregate roles give it, whole. So a credential must never sit
// in one of them as written: a header value is given as valueFrom (a
// Secret), a token-bearing chat or webhook URL as webhookURLFrom.
// Admission refuses such values new in a write, naming the Secret
// reference form; the REST API moves them into the object's own Secret
// before it writes. These functions are the one rule both apply (and the
// REST API's redaction of config keys).

// sensitiveFragments are the fragments of a header name, config key or URL
// parameter (lower case, without - _ .) that name a credential.
var sensitiveFragments = []string{"password", "passwd", "secret", "token", "apikey", "authorization", "xauth",
	"credential", "privatekey", "accesskey", "cookie", "bearer", "signature", "sessionid"}

// SensitiveName reports whether a header name, config key or URL query
// parameter names a credential: Authorization, Proxy-Authorization,
// Cookie, X-Api-Key, X-Auth-Key, anything with token, secret, password,
// signature, access key, private key or session id in it.
func SensitiveName(name string) bool {
	n := strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(name))
	for _, s := range sensitiveFragments {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// authSchemes are HTTP authentication schemes whose header value carries
// the credential itself.
var authSchemes = []string{"bearer ", "basic ", "token ", "digest ", "apikey ", "sharedkey "}

// templateRef is a multistep variable reference, {{name}}: its value is
// extracted from an earlier step's response at run time, not stored.
var templateRef = regexp.MustCompile(`\{\{[^{}]*\}\}`)

// SensitiveHeader reports whether a header with this name and literal
// value stores a credential: a value of the shape "<scheme> <credentials>"
// of an HTTP authentication scheme whatever the header is called, or any
// value of a header with a sensitive name (SensitiveName). A value made
// only of multistep variables ("Bearer {{token}}") stores none.
func SensitiveHeader(name, value string) bool {
	rest := strings.TrimSpace(templateRef.ReplaceAllString(value, ""))
	scheme := false
	for _, s := range authSchemes {
		if lower := strings.ToLower(rest); lower == strings.TrimSpace(s) || strings.HasPrefix(lower, s) {
			rest, scheme = strings.TrimSpace(rest[len(s)-1:]), true
			break
		}
	}
	if rest == "" {
		return false
	}
	return scheme || SensitiveName(name)
}

// TokenBearingURL reports whether raw carries a credential anyone who reads
// it could use: a user name or password, or a query parameter with a
// sensitive name (?token=, ?key=, ?sig=, ?code=…). URLs that do not parse
// are left to the URL validation.
func TokenBearingURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.User != nil {
		return true
	}
	for k := range u.Query() {
		switch strings.ToLower(k) {
		case "key", "sig", "code", "auth", "access_token", "api-key":
			return true
		}
		if SensitiveName(k) {
			return true
		}
	}
	return false
}

// ChannelURLIsSecret reports whether an AlertChannel's webhook URL of type
// t is a credential: every chat and automation URL is (Slack, Discord,
// Teams, Google Chat, Mattermost and Zapier hooks are bearer URLs: whoever
// has one posts to the channel), and a generic webhook's is when it
// carries a credential (TokenBearingURL).
func ChannelURLIsSecret(t monv1.AlertChannelType, raw string) bool {
	return t != monv1.ChannelWebhook || TokenBearingURL(raw)
}

// InlineHeader is a literal header value of a Monitor that is a credential.
type InlineHeader struct {
	// Path is the header's field path (…headers[i]).
	Path *field.Path
	// Name is the header name.
	Name string
	// Secret is true for an entry of a step's secrets, a header false.
	Secret bool
}

// NewInlineCredentials lists the literal header values of spec that carry
// a credential (SensitiveHeader) and that was (the stored spec, nil on
// create) did not hold in the same list under the same name with the same
// value: a stored value left as it was is not the writer's doing, and
// refusing it would block every other change of that Monitor (finalizers,
// labels) until someone moves it.
func NewInlineCredentials(spec, was *monv1.MonitorSpec) []InlineHeader {
	old := map[string]bool{}
	if was != nil {
		for _, l := range headerLists(was) {
			for _, h := range l.headers {
				if h.Value != nil {
					old[l.prefix+"\x00"+strings.ToLower(h.Name)+"\x00"+*h.Value] = true
				}
			}
		}
	}
	var out []InlineHeader
	for _, l := range headerLists(spec) {
		for i, h := range l.headers {
			if h.Value == nil || *h.Value == "" || (!l.secret && !SensitiveHeader(h.Name, *h.Value)) {
				continue
			}
			if old[l.prefix+"\x00"+strings.ToLower(h.Name)+"\x00"+*h.Value] {
				continue
			}
			out = append(out, InlineHeader{Path: l.path.Index(i), Name: h.Name, Secret: l.secret})
		}
	}
	return out
}

// InlineBody is a multistep step's request body that holds a credential
// in plain text.
type InlineBody struct {
	// Path is the body's field path (spec.multistep.steps[i].body).
	Path *field.Path
	// Field is the name of the body field that holds the credential.
	Field string
}

// NewInlineBodies lists the multistep step bodies of spec that hold a
// credential in plain text (BodyCredential) and that was (the stored spec,
// nil on create) did not hold as the same step's body: as for headers, a
// stored body left as it was is not the writer's doing.
func NewInlineBodies(spec, was *monv1.MonitorSpec) []InlineBody {
	if spec.Multistep == nil {
		return nil
	}
	var out []InlineBody
	for i, st := range spec.Multistep.Steps {
		name, ok := BodyCredential(st.Body)
		if !ok {
			continue
		}
		if was != nil && was.Multistep != nil && i < len(was.Multistep.Steps) && was.Multistep.Steps[i].Body == st.Body {
			continue
		}
		out = append(out, InlineBody{Path: field.NewPath("spec", "multistep", "steps").Index(i).Child("body"), Field: name})
	}
	return out
}

// Body fields, in the three shapes login requests take: a JSON member
// ("password": "…", or a number), an XML element (<password>…</password>)
// and a form field (password=…).
var (
	jsonMember = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:\s*(?:"((?:[^"\\]|\\.)*)"|(-?[0-9][0-9.eE+-]*))`)
	xmlElement = regexp.MustCompile(`<([A-Za-z_][\w.-]*)(?:\s[^>]*)?>([^<]*)</([A-Za-z_][\w.-]*)>`)
)

// BodyCredential reports whether a request body holds a credential in
// plain text, and in which field: a JSON member, XML element or form field
// whose name is a credential's (SensitiveName) with a literal value. A
// value made only of {{variables}} holds none ("password": "{{pw}}" with
// pw among the step's secrets is the way to send one). It reads the body
// by pattern, not by parsing, since {{variables}} may stand where JSON
// allows no text.
func BodyCredential(body string) (string, bool) {
	if strings.TrimSpace(body) == "" {
		return "", false
	}
	literal := func(v string) bool { return strings.TrimSpace(templateRef.ReplaceAllString(v, "")) != "" }
	for _, m := range jsonMember.FindAllStringSubmatch(body, -1) {
		if SensitiveName(m[1]) && literal(m[2]+m[3]) {
			return m[1], true
		}
	}
	for _, m := range xmlElement.FindAllStringSubmatch(body, -1) {
		if m[1] == m[3] && SensitiveName(m[1]) && literal(m[2]) {
			return m[1], true
		}
	}
	if t := strings.TrimSpace(body); !strings.ContainsAny(t[:1], "{[<") {
		if q, err := url.ParseQuery(templateRef.ReplaceAllStringFunc(t, url.QueryEscape)); err == nil {
			for _, k := range slices.Sorted(maps.Keys(q)) {
				for _, v := range q[k] {
					if SensitiveName(k) && literal(v) {
						return k, true
					}
				}
			}
		}
	}
	return "", false
}
