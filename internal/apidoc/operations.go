package apidoc

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Access is who may call an operation (x-access).
type Access string

// The access levels of the document; the REST core maps its own onto them.
const (
	Public        Access = "public"
	AnyKey        Access = "any-key"
	ReadOnlyWrite Access = "read-only-write"
	AutomationKey Access = "automation"
	OwnerOnly     Access = "owner"
	SessionOnly   Access = "session"
)

// Param is a query parameter.
type Param struct {
	Name, Desc string
	Schema     M
	Required   bool
}

// Q is an optional query parameter.
func Q(name string, schema M, desc string) Param {
	return Param{Name: name, Schema: schema, Desc: desc}
}

// IntQ is an optional integer query parameter with bounds and a default.
func IntQ(name string, min, max, def int, desc string) Param {
	return Q(name, With(Bounds(Integer(""), min, max), "default", def), desc)
}

// ListOf is a JSON array of item.
func ListOf(item M) M { return Arr(item, "") }

// Op documents one route: what the route table of the REST core does not
// know by itself. Method, Path, Access, Feature and Limit are filled in by
// the router from the registration, so they are written once, there.
//
// Body and Resp are either a Go value whose type is the wire type (a
// struct, or a slice of structs: its schema is derived by reflection and
// becomes a component) or a hand-written schema (M) for the answers that
// have no Go type yet.
type Op struct {
	Method string
	// Path is the OpenAPI path; the router derives it from the chi pattern.
	// A pattern ending in * (the rest of the path) needs Path to name the
	// parameter ("/automation/monitors/{key}").
	Path         string
	Tag, Summary string
	Desc         string
	Access       Access
	Feature      string  // plan feature (x-plan-feature; 403 FEATURE_NOT_AVAILABLE)
	Limit        string  // route rate limit (x-rate-limit), said by the route's limiters
	Query        []Param // query parameters
	Body         any     // JSON request body; nil: none
	BodyOptional bool
	Status       int    // success status; default 200
	AlsoStatus   []int  // further success statuses with the same body (201 created / 200 updated, 207)
	Resp         any    // success body; nil with 204
	RespType     string // success content type; default application/json
	JSONResp     any    // with RespType text/html or text/csv: the JSON success body (a Go value or a schema, as Resp) of requests that accept application/json
	MoreContent  M      // further media types of the success answer: media type → schema
	HTMLErrors   bool   // a browser page: its 404 and 503 are HTML pages too (JSON to JSON requests)
	RespHeaders  M
	Extra        []int // further error statuses: 409, 428, 501, 503
	Entitlement  bool  // plan limits (403 ENTITLEMENT_LIMIT_REACHED)
	NoNotFound   bool  // a path parameter that cannot be 404
	// PathParamSchema overrides the schemas of path parameters by name.
	PathParamSchema M
}

// schema is the schema of a Body or Resp: a hand-written M as it is, a Go
// value's from its type.
func (c *components) schema(v any) (M, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case M:
		return v, nil
	}
	return c.ref(v)
}

var pathParamRE = regexp.MustCompile(`\{([^}]+)\}`)

// pathParam returns the schema of a path parameter by its name.
func pathParam(name string) (M, string) {
	switch name {
	case "id", "monitorId", "connectionId", "runbookId", "noteId", "draftId":
		return UUID(""), ""
	case "key":
		return Ref("MonitorKey"), "Monitor key, URL-encoded (may contain `/`, also sent unencoded: the key is the rest of the path)."
	case "slug":
		return Str(""), "Status page slug."
	case "token":
		return Str(""), "Token of the URL: the credential of a heartbeat URL, or the single-use token of a confirmation link."
	case "type":
		return Str(""), "Channel type: the lower-case channel product name, or webhook, sms, voice, whatsapp."
	case "stepId":
		return Str(""), "Runbook step id."
	case "path":
		return Str(""), "Rest of the path."
	case "email":
		return Email(""), "The recipient's email address (URL-encoded or not)."
	case "runId":
		return UUID(""), "Website health run id."
	case "providerId":
		return Str(""), "Third-party provider id from the catalog."
	case "statusPageId":
		return UUID(""), "Status page id."
	case "rest":
		return Enum("", "history", "badge.svg", "feed.xml"), "What of the page: its 90-day history (JSON), its SVG badge or its Atom feed."
	}
	return Str(""), ""
}

func (o Op) operationID() string {
	var b strings.Builder
	b.WriteString(strings.ToLower(o.Method))
	up := true
	for _, r := range o.Path {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			if up && r >= 'a' && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			up = false
		default:
			up = true
		}
	}
	return b.String()
}

func content(typ string, schema M) M { return M{typ: M{"schema": schema}} }

func respRef(name string) M { return M{"$ref": "#/components/responses/" + name} }

// build turns o into an OpenAPI operation object.
func (r *components) build(o Op) (M, error) {
	body, err := r.schema(o.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", o.Method, o.Path, err)
	}
	resp, err := r.schema(o.Resp)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", o.Method, o.Path, err)
	}
	jsonResp, err := r.schema(o.JSONResp)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", o.Method, o.Path, err)
	}
	out := M{
		"operationId": o.operationID(),
		"summary":     o.Summary,
		"tags":        []any{o.Tag},
		"x-access":    string(o.Access),
	}
	if o.Desc != "" {
		out["description"] = o.Desc
	}
	if o.Feature != "" {
		out["x-plan-feature"] = o.Feature
	}
	if o.Limit != "" {
		out["x-rate-limit"] = o.Limit
	}
	write := o.Method != "GET" && o.Method != "HEAD"

	var params []any
	names := pathParamRE.FindAllStringSubmatch(o.Path, -1)
	for _, n := range names {
		s, d := pathParam(n[1])
		if o.PathParamSchema != nil {
			if v, ok := o.PathParamSchema[n[1]].(M); ok {
				s = v
			}
		}
		p := M{"name": n[1], "in": "path", "required": true, "schema": s}
		if d != "" {
			p["description"] = d
		}
		params = append(params, p)
	}
	for _, p := range o.Query {
		m := M{"name": p.Name, "in": "query", "required": p.Required, "schema": p.Schema}
		if p.Desc != "" {
			m["description"] = p.Desc
		}
		params = append(params, m)
	}
	if o.Access != Public {
		params = append(params, M{"$ref": "#/components/parameters/X-Workspace-Id"})
	}
	if len(params) > 0 {
		out["parameters"] = params
	}
	if o.Body != nil {
		out["requestBody"] = M{"required": !o.BodyOptional, "content": content("application/json", body)}
	}

	responses := M{}
	status := o.Status
	if status == 0 {
		status = 200
	}
	switch {
	case o.Access == SessionOnly:
		// No success: API keys are always refused.
	case status == 204:
		responses["204"] = M{"description": "Done; no body."}
	default:
		typ := o.RespType
		if typ == "" {
			typ = "application/json"
		}
		success := M{"description": o.Summary + "."}
		if resp != nil {
			success["content"] = content(typ, resp)
		}
		if jsonResp != nil {
			success["content"].(M)["application/json"] = M{"schema": jsonResp}
		}
		for typ, schema := range o.MoreContent {
			success["content"].(M)[typ] = M{"schema": schema}
		}
		if o.RespHeaders != nil {
			success["headers"] = o.RespHeaders
		}
		responses[strconv.Itoa(status)] = success
		for _, st := range o.AlsoStatus {
			responses[strconv.Itoa(st)] = success
		}
	}

	if o.Access == Public {
		out["security"] = []any{}
		responses["429"] = respRef("TooManyRequests")
		if len(names) > 0 {
			responses["404"] = respRef("NotFound")
		}
		if len(o.Query) > 0 || o.Body != nil {
			responses["400"] = respRef("BadRequest")
		}
		for _, s := range o.Extra {
			addExtra(responses, s)
			if o.HTMLErrors && (s == 404 || s == 503) {
				responses[strconv.Itoa(s)] = respRef(map[int]string{404: "NotFoundPage", 503: "UnavailablePage"}[s])
			}
		}
		out["responses"] = responses
		return out, nil
	}

	responses["401"] = respRef("Unauthorized")
	codes := []string{"WORKSPACE_ACCESS_DENIED (X-Workspace-Id names another workspace)", "CORS_REJECTED (browser origin not allowed)"}
	schemas := []any{Ref("ErrorBody")}
	switch o.Access {
	case AnyKey:
		if write {
			codes = append(codes, "READ_ONLY_ACCESS (read-only key)")
		}
	case AutomationKey:
		codes = append(codes, "READ_ONLY_ACCESS (read-only key)", "AUTOMATION_KEY_REQUIRED (needs an Automation key)")
	case OwnerOnly:
		codes = append(codes, "WORKSPACE_OWNER_REQUIRED (every API key; owner only)")
	case SessionOnly:
		codes = append(codes, "SESSION_AUTH_REQUIRED (needs a dashboard session; API keys are never accepted)")
	}
	if o.Feature != "" {
		codes = append(codes, "FEATURE_NOT_AVAILABLE (the plan lacks "+o.Feature+")")
		schemas = append(schemas, Ref("FeatureError"))
	}
	if o.Entitlement {
		codes = append(codes, "ENTITLEMENT_LIMIT_REACHED (plan limit)")
		schemas = append(schemas, Ref("EntitlementLimitError"))
	}
	forbidden := M{"description": "Forbidden: " + strings.Join(codes, "; ") + "."}
	if len(schemas) == 1 {
		forbidden["content"] = content("application/json", schemas[0].(M))
	} else {
		forbidden["content"] = content("application/json", M{"anyOf": schemas})
	}
	responses["403"] = forbidden
	responses["429"] = respRef("TooManyRequests")
	responses["500"] = respRef("InternalError")
	if o.Access != SessionOnly {
		if len(names) > 0 && !o.NoNotFound {
			responses["404"] = respRef("NotFound")
		}
		if o.Body != nil || len(o.Query) > 0 || len(names) > 0 {
			responses["400"] = respRef("BadRequest")
		}
		if o.Body != nil || write {
			responses["413"] = respRef("PayloadTooLarge")
		}
	}
	for _, s := range o.Extra {
		addExtra(responses, s)
	}
	out["responses"] = responses
	return out, nil
}

func addExtra(responses M, s int) {
	name := map[int]string{400: "BadRequest", 404: "NotFound", 409: "Conflict", 428: "PruneConfirmationRequired", 501: "NotImplemented", 503: "Unavailable"}[s]
	if name != "" {
		responses[strconv.Itoa(s)] = respRef(name)
	}
}
