package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/jsonpath"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig/schema"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
)

// Config limits of the specification: a monitor's type-specific config holds
// at most 50 keys and 32 KB as JSON.
const (
	maxConfigKeys  = 50
	maxConfigBytes = 32 * 1024
)

// ValidateMonitorSpec checks every rule of a monitor spec that needs no other
// object: URLs and hosts (against the address guard), the config of the
// monitor's type (and no config of another type), config size, cron
// expressions, regular expressions and JSON texts. Field paths are rooted at
// path so the REST layer can map them to its own names.
func ValidateMonitorSpec(ctx context.Context, s *monv1.MonitorSpec, guard HostChecker, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	t := s.Type
	if t == "" {
		t = monv1.MonitorHTTP
	}
	if len(s.Name) == 0 || len(s.Name) > 255 {
		errs = append(errs, field.Invalid(path.Child("name"), s.Name, "must be 1-255 characters"))
	} else if strings.ContainsFunc(s.Name, unicode.IsControl) {
		// ESC, BEL, CR and the like would rewrite the terminal of whoever
		// lists monitors (kubectl uptime, kubectl get).
		errs = append(errs, field.Invalid(path.Child("name"), strconv.QuoteToASCII(s.Name), "must not contain control characters"))
	}
	if s.IntervalSeconds != 0 && (s.IntervalSeconds < 15 || s.IntervalSeconds > 900) {
		errs = append(errs, field.Invalid(path.Child("intervalSeconds"), s.IntervalSeconds, "must be between 15 and 900"))
	}
	if len(s.Tags) > 20 {
		errs = append(errs, field.TooMany(path.Child("tags"), len(s.Tags), 20))
	}
	for i, tag := range s.Tags {
		if len(tag) < 1 || len(tag) > 32 {
			errs = append(errs, field.Invalid(path.Child("tags").Index(i), tag, "must be 1-32 characters"))
		}
	}
	if len(s.Regions) > 50 {
		errs = append(errs, field.TooMany(path.Child("regions"), len(s.Regions), 50))
	}
	errs = append(errs, ValidateEmails(s.NotificationEmails, path.Child("notificationEmails"))...)

	info, known := monv1.LookupMonitorType(t)
	if !known {
		return append(errs, field.NotSupported(path.Child("type"), t, monv1.MonitorTypeNames()))
	}
	switch {
	case info.URL != monv1.URLNone && s.URL == "":
		errs = append(errs, field.Required(path.Child("url"), fmt.Sprintf("required for %s monitors", t)))
	case info.URL != monv1.URLNone:
		errs = append(errs, validateTargetURL(ctx, s.URL, info.URL == monv1.URLHTTPS, guard, path.Child("url"))...)
	case s.URL != "":
		errs = append(errs, field.Forbidden(path.Child("url"), fmt.Sprintf("not used by %s monitors", t)))
	}

	want := info.Config
	for _, name := range monitorconfig.ConfigNames() {
		if name != want && monitorconfig.HasConfig(s, name) {
			errs = append(errs, field.Forbidden(path.Child(name), fmt.Sprintf("%s settings are not allowed for %s monitors", name, t)))
		}
	}
	if !monitorconfig.HasConfig(s, want) && monitorconfig.ConfigRequired(t) {
		// Without its config the type-specific rules below have nothing to check.
		return append(errs, field.Required(path.Child(want), fmt.Sprintf("required for %s monitors", t)))
	}

	// The bounds the config struct's markers declare (monitorconfig/schema
	// reads them from the CRD), then the rules markers cannot say.
	errs = append(errs, schema.Validate(s, path.Child(want))...)
	if cfg := monitorconfig.Config(s); cfg != nil {
		errs = append(errs, validateConfigSize(cfg, path.Child(want))...)
	}
	// Where the check connects (the fields its struct tags guard) and its
	// header lists, alike for every type; then the rules of the type that
	// neither markers nor tags say.
	only := monitorconfig.Only(s)
	for _, tg := range monitorconfig.Targets(&only, path) {
		errs = append(errs, validateTarget(ctx, tg, guard)...)
	}
	for _, l := range monitorconfig.HeaderListsAt(&only, path) {
		errs = append(errs, validateHeaders(*l.Headers, l.Field)...)
	}
	switch t {
	case monv1.MonitorHTTP, monv1.MonitorAPI:
		if s.HTTP != nil {
			errs = append(errs, validateHTTPConfig(s.HTTP, t == monv1.MonitorAPI, path.Child("http"))...)
		}
	case monv1.MonitorPort:
		errs = append(errs, validatePort(s.Port.Port, path.Child("port", "port"))...)
	case monv1.MonitorUDP:
		errs = append(errs, validatePort(s.UDP.Port, path.Child("udp", "port"))...)
		errs = append(errs, validateRegexp(s.UDP.ExpectedResponse, path.Child("udp", "expectedResponse"))...)
		if s.UDP.Payload != "" && s.UDP.PayloadHex != "" {
			errs = append(errs, field.Forbidden(path.Child("udp", "payloadHex"), "set payload or payloadHex, not both"))
		}
	case monv1.MonitorCron:
		errs = append(errs, validateCron(s.Cron, path.Child("cron"))...)
	case monv1.MonitorDNS:
		errs = append(errs, validateDNS(s.DNS, path.Child("dns"))...)
	case monv1.MonitorMultistep:
		errs = append(errs, validateMultistep(s.Multistep, path.Child("multistep"))...)
	case monv1.MonitorMCP:
		if s.MCP == nil {
			break
		}
		if tc := s.MCP.ToolCall; tc != nil && tc.ArgumentsJSON != "" {
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.ArgumentsJSON), &args); err != nil {
				errs = append(errs, field.Invalid(path.Child("mcp", "toolCall", "argumentsJSON"), tc.ArgumentsJSON, "must be a JSON object"))
			}
		}
	case monv1.MonitorWebSocket:
		errs = append(errs, validateAssertions(s.WebSocket.Assertions, path.Child("websocket", "assertions"))...)
	case monv1.MonitorBrowser:
		if s.Browser != nil {
			errs = append(errs, validateBrowser(s.Browser, path.Child("browser"))...)
		}
	}
	return errs
}

// validateBrowser checks that each fill step's credential is one of the
// config's credentials.
func validateBrowser(c *monv1.BrowserConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for _, cr := range c.Credentials {
		names[cr.Name] = true
	}
	for i, st := range c.Steps {
		p := path.Child("steps").Index(i)
		if st.Credential != "" && !names[st.Credential] {
			errs = append(errs, field.Invalid(p.Child("credential"), st.Credential, "must name an entry of credentials"))
		}
	}
	return errs
}

// validateTarget holds a field that names where the check connects (a
// monitorconfig.Target) to the shape its guard tag declares and its host to
// the address guard.
func validateTarget(ctx context.Context, tg monitorconfig.Target, guard HostChecker) field.ErrorList {
	switch tg.Guard {
	case monitorconfig.GuardHost:
		return validateHost(ctx, tg.Value, guard, tg.Field)
	case monitorconfig.GuardHostPort:
		host, port, err := net.SplitHostPort(tg.Value)
		if p, perr := strconv.Atoi(port); err != nil || perr != nil || p < 1 || p > 65535 {
			return field.ErrorList{field.Invalid(tg.Field, tg.Value, "must be host:port with a port 1-65535")}
		}
		return validateHost(ctx, host, guard, tg.Field)
	case monitorconfig.GuardHTTPURL:
		if strings.Contains(tg.Value, "{{") {
			// A URL with variables (a multi-step step's) is checked once
			// they are substituted, at run time.
			return nil
		}
		return validateURL(ctx, tg.Value, guard, tg.Field, "http", "https")
	case monitorconfig.GuardWSURL:
		return validateURL(ctx, tg.Value, guard, tg.Field, "ws", "wss")
	}
	return nil
}

// HostChecker is the part of the address guard admission uses.
type HostChecker interface {
	CheckHost(ctx context.Context, host string) error
}

// validateTargetURL checks that raw is an absolute http(s) URL without
// credentials whose host is allowed by the address guard. Names that do not
// resolve here are accepted: probes resolve them, and the dial-time guard is
// the enforcement point.
func validateTargetURL(ctx context.Context, raw string, httpsOnly bool, guard HostChecker, path *field.Path) field.ErrorList {
	if u, err := url.Parse(raw); httpsOnly && err == nil && u.Host != "" && u.Scheme == "http" {
		return field.ErrorList{field.Invalid(path, raw, "must be an https:// URL")}
	}
	return validateURL(ctx, raw, guard, path, "http", "https")
}

// validateURL checks that raw is an absolute URL of one of schemes without
// credentials whose host the address guard allows.
func validateURL(ctx context.Context, raw string, guard HostChecker, path *field.Path, schemes ...string) field.ErrorList {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !slices.Contains(schemes, u.Scheme) {
		return field.ErrorList{field.Invalid(path, raw, "must be a valid "+strings.Join(schemes, ":// or ")+":// URL")}
	}
	if u.User != nil {
		return field.ErrorList{field.Invalid(path, RedactURL(u), "must not contain a username or password")}
	}
	return validateHost(ctx, u.Hostname(), guard, path)
}

// RedactURL is u without its user information, fit for an error message.
func RedactURL(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// validateHost refuses hosts that are not names or addresses, and names or
// addresses the guard blocks.
func validateHost(ctx context.Context, host string, guard HostChecker, path *field.Path) field.ErrorList {
	if host == "" {
		return field.ErrorList{field.Required(path, "a hostname or IP address is required")}
	}
	if net.ParseIP(host) == nil && !hostnameRE.MatchString(host) {
		return field.ErrorList{field.Invalid(path, host, "must be a hostname or IP address")}
	}
	if guard == nil {
		return nil
	}
	lower := strings.ToLower(host)
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		if err := guard.CheckHost(ctx, "127.0.0.1"); err != nil {
			return field.ErrorList{field.Invalid(path, host, PrivateAddressMessage)}
		}
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := guard.CheckHost(rctx, host); err != nil && IsBlocked(err) {
		return field.ErrorList{field.Invalid(path, host, PrivateAddressMessage)}
	}
	return nil
}

// PrivateAddressMessage is the specification's rejection text for targets
// that resolve to private or local addresses.
const PrivateAddressMessage = "This address isn't reachable from the internet"

// UnresolvableHostMessage is the rejection text for a webhook endpoint whose
// host does not resolve (spec/webhooks.md, connection-time rejections).
const UnresolvableHostMessage = "This host could not be resolved"

var hostnameRE = regexp.MustCompile(`^([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*\.?$`)

func validatePort(p int32, path *field.Path) field.ErrorList {
	if p < 1 || p > 65535 {
		return field.ErrorList{field.Invalid(path, p, "must be between 1 and 65535")}
	}
	return nil
}

func validateHTTPConfig(c *monv1.HTTPConfig, isAPI bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.MaxResponseTimeMs != nil && c.DegradedResponseTimeMs != nil && *c.DegradedResponseTimeMs >= *c.MaxResponseTimeMs {
		errs = append(errs, field.Invalid(path.Child("degradedResponseTimeMs"), *c.DegradedResponseTimeMs, "must be lower than maxResponseTimeMs"))
	}
	if len(c.Assertions) > 0 && !isAPI {
		errs = append(errs, field.Forbidden(path.Child("assertions"), "assertions are only allowed for api monitors"))
	}
	errs = append(errs, validateAssertions(c.Assertions, path.Child("assertions"))...)
	return errs
}

func validateHeaders(hs []monv1.HTTPHeader, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, h := range hs {
		if (h.Value == nil) == (h.ValueFrom == nil) {
			errs = append(errs, field.Invalid(path.Index(i), h.Name, "exactly one of value and valueFrom is required"))
		}
		if ref := h.ValueFrom; ref != nil {
			// The Secret may be created later (the Configured condition
			// reports a missing one), but the reference must be one.
			p := path.Index(i).Child("valueFrom")
			for _, msg := range validation.IsDNS1123Subdomain(ref.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
			}
			for _, msg := range validation.IsConfigMapKey(ref.Key) {
				errs = append(errs, field.Invalid(p.Child("key"), ref.Key, msg))
			}
		}
	}
	return errs
}

func validateAssertions(as []monv1.Assertion, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, a := range as {
		p := path.Index(i)
		if (a.Source == "header" || a.Source == "json_body") && a.Property == "" {
			errs = append(errs, field.Required(p.Child("property"), "required for header and json_body assertions"))
		}
		if a.Source == "json_body" && a.Property != "" {
			if err := jsonpath.Validate(a.Property); err != nil {
				errs = append(errs, field.Invalid(p.Child("property"), a.Property, err.Error()))
			}
		}
		if a.Operator == "matches" {
			errs = append(errs, validateRegexp(a.Target, p.Child("target"))...)
		}
		numeric := a.Operator == "greater_than" || a.Operator == "less_than" || a.Operator == "greater_or_equal" || a.Operator == "less_or_equal"
		if numeric && !isNumber(a.Target) {
			errs = append(errs, field.Invalid(p.Child("target"), a.Target, "must be a number for "+string(a.Operator)))
		}
		// An empty target makes sense only as "the body equals (or does
		// not equal) nothing"; contains "" always holds and matches "" too.
		emptyBodyCheck := a.Source == "body" && (a.Operator == "equals" || a.Operator == "not_equals")
		if a.Operator != "exists" && a.Operator != "not_exists" && a.Target == "" && !emptyBodyCheck {
			errs = append(errs, field.Required(p.Child("target"), "required for "+string(a.Operator)))
		}
	}
	return errs
}

func isNumber(s string) bool {
	var f float64
	_, err := fmt.Sscan(s, &f)
	return err == nil
}

func validateRegexp(expr string, path *field.Path) field.ErrorList {
	if expr == "" {
		return nil
	}
	if _, err := regexp.Compile(expr); err != nil {
		return field.ErrorList{field.Invalid(path, expr, "must be a valid regular expression: "+err.Error())}
	}
	return nil
}

func validateCron(c *monv1.CronConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.CronExpression == "" {
		errs = append(errs, field.Required(path.Child("cronExpression"), "required for cron monitors"))
	} else if _, err := ParseCron(c.CronExpression); err != nil {
		errs = append(errs, field.Invalid(path.Child("cronExpression"), c.CronExpression, "must be a valid cron expression: "+err.Error()))
	}
	errs = append(errs, ValidateTimeZone(c.TimeZone, path.Child("timeZone"))...)
	return errs
}

// ValidateTimeZone checks an optional IANA time zone name.
func ValidateTimeZone(tz string, path *field.Path) field.ErrorList {
	if tz == "" {
		return nil
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return field.ErrorList{field.Invalid(path, tz, "must be an IANA time zone such as Europe/Berlin")}
	}
	return nil
}

func validateDNS(c *monv1.DNSConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	name := strings.TrimSuffix(c.Name, ".")
	if !hostnameRE.MatchString(name) {
		errs = append(errs, field.Invalid(path.Child("name"), c.Name, "must be a domain name"))
	}
	if c.Resolver != "" {
		host := c.Resolver
		if h, _, err := net.SplitHostPort(c.Resolver); err == nil {
			host = h
		}
		if net.ParseIP(host) == nil && !hostnameRE.MatchString(host) {
			errs = append(errs, field.Invalid(path.Child("resolver"), c.Resolver, "must be host or host:port"))
		}
	}
	if c.MatchMode == "exact" || c.MatchMode == "all" {
		if len(c.ExpectedValues) == 0 {
			errs = append(errs, field.Required(path.Child("expectedValues"), "required for match mode "+string(c.MatchMode)))
		}
	}
	return errs
}

func validateMultistep(c *monv1.MultistepConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(c.Steps) == 0 {
		errs = append(errs, field.Required(path.Child("steps"), "at least one step is required"))
	}
	defined := map[string]bool{}
	for i, st := range c.Steps {
		p := path.Child("steps").Index(i)
		// A step's secrets stand for {{name}} in its headers and body, never
		// in its URL (which results show as written).
		secrets := map[string]bool{}
		for j, sec := range st.Secrets {
			sp := p.Child("secrets").Index(j)
			switch {
			case !variableRE.MatchString(sec.Name):
				errs = append(errs, field.Invalid(sp.Child("name"), sec.Name, "must be a variable name: a letter or _ then letters, digits or _"))
			case secrets[sec.Name]:
				errs = append(errs, field.Duplicate(sp.Child("name"), sec.Name))
			}
			secrets[sec.Name] = true
		}
		for _, v := range templateVars(st.URL) {
			if secrets[v] && !defined[v] {
				errs = append(errs, field.Invalid(p.Child("url"), v, fmt.Sprintf("secret %q may be used in the step's headers and body, not in its url (results show the url)", v)))
			} else if !defined[v] {
				errs = append(errs, field.Invalid(p, v, fmt.Sprintf("variable %q is not extracted by an earlier step", v)))
			}
		}
		templated := st.Body
		for _, h := range st.Headers {
			if h.Value != nil {
				templated += *h.Value
			}
		}
		for _, v := range templateVars(templated) {
			if !defined[v] && !secrets[v] {
				errs = append(errs, field.Invalid(p, v, fmt.Sprintf("variable %q is not extracted by an earlier step nor one of the step's secrets", v)))
			}
		}
		errs = append(errs, validateAssertions(st.Assertions, p.Child("assertions"))...)
		for j, ex := range st.Extract {
			if ex.Source != "header" {
				if err := jsonpath.Validate(ex.Property); err != nil {
					errs = append(errs, field.Invalid(p.Child("extract").Index(j).Child("property"), ex.Property, err.Error()))
				}
			}
			defined[ex.Variable] = true
		}
	}
	return errs
}

var (
	templateVarRE = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)
	variableRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func templateVars(s string) []string {
	var out []string
	for _, m := range templateVarRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// validateConfigSize enforces the specification's config limits: at most 50
// keys and 32 KB when the type's config is written as JSON.
func validateConfigSize(cfg any, path *field.Path) field.ErrorList {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return field.ErrorList{field.InternalError(path, err)}
	}
	var errs field.ErrorList
	if len(raw) > maxConfigBytes {
		errs = append(errs, field.TooLong(path, "", maxConfigBytes))
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) == nil && len(keys) > maxConfigKeys {
		errs = append(errs, field.TooMany(path, len(keys), maxConfigKeys))
	}
	return errs
}

// ValidateEmails checks that every entry is a bare email address.
func ValidateEmails(emails []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range emails {
		if a, err := mail.ParseAddress(e); err != nil || a.Address != e {
			errs = append(errs, field.Invalid(path.Index(i), e, "must be an email address"))
		}
	}
	return errs
}

// IsBlocked reports whether err is the address guard's refusal (rather than,
// say, a name that does not resolve).
func IsBlocked(err error) bool {
	var b *netguard.BlockedError
	return errors.As(err, &b)
}
