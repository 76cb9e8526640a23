package apidoc

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
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
}

var pathParamRE = regexp.MustCompile(`\{([^}]+)\}`)

// operationID is the method and the words of the path in camel case:
// GET /monitors/{id}/checks is getMonitorsIdChecks.
func (o Op) operationID() string {
	id := strings.ToLower(o.Method)
	for _, w := range strings.FieldsFunc(o.Path, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		id += strings.ToUpper(w[:1]) + w[1:]
	}
	return id
}

// setIf sets m[k] to a value that is not empty.
func setIf(m M, k, v string) {
	if v != "" {
		m[k] = v
	}
}

// param is a path or query parameter object.
func param(name, in string, required bool, schema M, desc string) M {
	p := M{"name": name, "in": in, "required": required, "schema": schema}
	setIf(p, "description", desc)
	return p
}

func content(typ string, schema M) M { return M{typ: M{"schema": schema}} }

func respRef(name string) M { return M{"$ref": "#/components/responses/" + name} }

// build turns o into an OpenAPI operation object.
func (r *components) build(o Op, pathParams map[string]Param) (M, error) {
	var schemas [3]M // of the body, the answer and the JSON answer
	for i, v := range []any{o.Body, o.Resp, o.JSONResp} {
		var err error
		if schemas[i], err = r.schema(v); err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.Method, o.Path, err)
		}
	}
	body, resp, jsonResp := schemas[0], schemas[1], schemas[2]
	out := M{
		"operationId": o.operationID(),
		"summary":     o.Summary,
		"tags":        []any{o.Tag},
		"x-access":    string(o.Access),
	}
	setIf(out, "description", o.Desc)
	setIf(out, "x-plan-feature", o.Feature)
	setIf(out, "x-rate-limit", o.Limit)
	write := o.Method != "GET" && o.Method != "HEAD"

	var params []any
	names := pathParamRE.FindAllStringSubmatch(o.Path, -1)
	for _, n := range names {
		p := pathParams[n[1]]
		if p.Schema == nil {
			p.Schema = Str("")
		}
		params = append(params, param(n[1], "path", true, p.Schema, p.Desc))
	}
	for _, p := range o.Query {
		params = append(params, param(p.Name, "query", p.Required, p.Schema, p.Desc))
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
	status := cmp.Or(o.Status, 200)
	switch {
	case o.Access == SessionOnly:
		// No success: API keys are always refused.
	case status == 204:
		responses["204"] = M{"description": "Done; no body."}
	default:
		typ := cmp.Or(o.RespType, "application/json")
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
	shapes := []any{Ref("ErrorBody")}
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
		shapes = append(shapes, Ref("FeatureError"))
	}
	if o.Entitlement {
		codes = append(codes, "ENTITLEMENT_LIMIT_REACHED (plan limit)")
		shapes = append(shapes, Ref("EntitlementLimitError"))
	}
	shape := M{"anyOf": shapes}
	if len(shapes) == 1 {
		shape = shapes[0].(M)
	}
	responses["403"] = M{"description": "Forbidden: " + strings.Join(codes, "; ") + ".", "content": content("application/json", shape)}
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
