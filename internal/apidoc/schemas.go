package apidoc

import "slices"

// M is a JSON object of the document.
type M = map[string]any

// Schema helpers (JSON Schema 2020-12, as OpenAPI 3.1 uses it).

func Ref(name string) M { return M{"$ref": "#/components/schemas/" + name} }

func typed(t, desc string) M {
	m := M{"type": t}
	if desc != "" {
		m["description"] = desc
	}
	return m
}

func Str(desc string) M     { return typed("string", desc) }
func Integer(desc string) M { return typed("integer", desc) }
func Number(desc string) M  { return typed("number", desc) }
func Boolean(desc string) M { return typed("boolean", desc) }
func UUID(desc string) M    { return With(Str(desc), "format", "uuid") }
func DateTime(desc string) M {
	return With(Str(desc), "format", "date-time")
}
func URI(desc string) M { return With(Str(desc), "format", "uri") }
func Email(desc string) M {
	return With(Str(desc), "format", "email")
}

// enum is a string restricted to vals.
func Enum(desc string, vals ...string) M {
	m := Str(desc)
	m["enum"] = toAny(vals)
	return m
}

func Arr(items M, desc string) M {
	m := typed("array", desc)
	m["items"] = items
	return m
}

// obj is an object with props; required lists the required ones.
func Obj(desc string, props M, required ...string) M {
	m := typed("object", desc)
	m["properties"] = props
	if len(required) > 0 {
		slices.Sort(required)
		m["required"] = toAny(required)
	}
	return m
}

// strictObj is obj with unknown properties rejected.
func StrictObj(desc string, props M, required ...string) M {
	return Strict(Obj(desc, props, required...))
}

// strict forbids properties other than those listed.
func Strict(m M) M { return With(m, "additionalProperties", false) }

// freeform is an object whose properties are not fixed.
func Freeform(desc string) M { return With(typed("object", desc), "additionalProperties", true) }

// anyValue is any JSON value. The empty schema {} says so, but validators
// that read a schema without a type by OpenAPI 3.0 rules refuse null for
// it, so null is listed as an alternative.
func AnyValue(desc string) M {
	m := M{"anyOf": []any{M{}, M{"type": "null"}}}
	if desc != "" {
		m["description"] = desc
	}
	return m
}

// null makes s also accept null.
func Null(s M) M {
	if t, ok := s["type"].(string); ok {
		c := With(s)
		c["type"] = []any{t, "null"}
		if e, ok := c["enum"].([]any); ok {
			c["enum"] = append(slices.Clone(e), nil)
		}
		return c
	}
	return M{"anyOf": []any{s, M{"type": "null"}}}
}

// with returns a copy of m with the key/value pairs kv set.
func With(m M, kv ...any) M {
	c := M{}
	for k, v := range m {
		c[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		c[kv[i].(string)] = kv[i+1]
	}
	return c
}

func Bounds(m M, min, max any) M {
	c := With(m)
	key := map[string][2]string{"string": {"minLength", "maxLength"}, "array": {"minItems", "maxItems"}}
	names := [2]string{"minimum", "maximum"}
	if t, ok := m["type"].(string); ok {
		if n, ok := key[t]; ok {
			names = n
		}
	}
	if min != nil {
		c[names[0]] = min
	}
	if max != nil {
		c[names[1]] = max
	}
	return c
}

func toAny[T any](v []T) []any {
	out := make([]any, len(v))
	for i := range v {
		out[i] = v[i]
	}
	return out
}

var (
	monitorTypes      = []string{"http", "api", "ping", "port", "udp", "cron", "dns", "multistep", "mcp"}
	monitorStates     = []string{"up", "down", "degraded", "blocked", "unknown", "pending", "paused", "maintenance"}
	CheckStates       = []string{"up", "down", "degraded", "blocked", "unknown"}
	IncidentStates    = []string{"ongoing", "resolved", "suppressed", "acknowledged"}
	draftPhases       = []string{"investigating", "identified", "monitoring", "resolved"}
	maintenanceStates = []string{"scheduled", "ongoing", "completed", "cancelled"}
	errorCodes        = []string{
		"VALIDATION_ERROR", "BAD_REQUEST", "USE_SIGNED_DEPLOY_HOOK", "PAYLOAD_TOO_LARGE", "NOT_FOUND", "UNAUTHORIZED",
		"API_KEY_DISABLED", "SESSION_AUTH_REQUIRED", "WORKSPACE_OWNER_REQUIRED", "READ_ONLY_ACCESS", "AUTOMATION_KEY_REQUIRED",
		"ALERT_ROUTING_NOT_ALLOWED", "WORKSPACE_ACCESS_DENIED", "FEATURE_NOT_AVAILABLE", "WHITE_LABEL_NOT_ENTITLED",
		"ENTITLEMENT_LIMIT_REACHED", "EMAIL_VERIFICATION_REQUIRED", "CORS_REJECTED", "INCIDENT_RESOLVED", "CONFLICT",
		"PLAN_CHANGED", "CONNECTION_LIMIT_REACHED", "PRUNE_CONFIRMATION_REQUIRED", "RATE_LIMITED", "CHANNEL_UNAVAILABLE",
		"INTERNAL_ERROR", "METHOD_NOT_ALLOWED", "NOT_IMPLEMENTED", "EXPIRY_UNAVAILABLE", "REGION_UNAVAILABLE",
		// 503 of an optional feature that this server does not run.
		"AI_UNAVAILABLE", "SITE_HEALTH_UNAVAILABLE", "THIRD_PARTY_UNAVAILABLE", "TELEMETRY_EXPORT_UNAVAILABLE",
	}
)

// handSchemas are the components.schemas not derived from Go types, each
// for a reason given where it is written: the error shapes (one Go
// ErrorBody, several documented shapes), the request headers of a monitor
// (a value is a string or a Secret reference), and the alert-channel
// connection body.
func handSchemas() M {
	headers := With(typed("object", "Header name to value; a value may be {\"secret_ref\": {\"name\", \"key\"}} naming a Secret of the workspace (owner level only; the Secret must opt in with the label monitoring.uptime-operator.io/credentials=true)."),
		"maxProperties", 50, "additionalProperties", M{"anyOf": []any{Str(""), Ref("SecretRef")}})
	return M{
		// Errors.
		"ErrorCode": Enum("Error codes of the API.", errorCodes...),
		"ValidationError": Obj("400 VALIDATION_ERROR.", M{
			"error":  With(Str(""), "const", "Validation failed"),
			"code":   With(Str(""), "const", "VALIDATION_ERROR"),
			"errors": Bounds(Arr(Ref("FieldError"), ""), 1, nil),
		}, "error", "code", "errors"),
		"FeatureError": Obj("403 FEATURE_NOT_AVAILABLE: the workspace's plan lacks a feature.", M{
			"error":         Str(""),
			"code":          With(Str(""), "const", "FEATURE_NOT_AVAILABLE"),
			"details":       Obj("", M{"feature": Str("The missing plan feature.")}),
			"plan":          Str("The workspace's plan."),
			"required_plan": Str("The cheapest plan with the feature."),
			"upgradePath":   Str("Command that moves the workspace to that plan."),
		}, "error", "code", "plan"),
		"EntitlementLimitError": Obj("403 ENTITLEMENT_LIMIT_REACHED: a plan limit is reached.", M{
			"error":   Str(""),
			"code":    With(Str(""), "const", "ENTITLEMENT_LIMIT_REACHED"),
			"details": Obj("", M{"resource": Str("e.g. monitors, status_pages."), "current": Integer(""), "limit": Integer("")}, "resource", "current", "limit"),
		}, "error", "code", "details"),
		"PlainTooMany": With(Str("Plain-text 429 body."), "const", "Too many requests, please try again later"),

		// Monitors. The bodies and config are restapi types; a request
		// header's value is a string or a Secret reference, which a Go
		// type (probeapi.Headers) decodes by hand.
		"SecretRef":      Obj("Reference to a Secret key of the workspace.", M{"secret_ref": Obj("", M{"name": Str(""), "key": Str("")}, "name", "key")}, "secret_ref"),
		"MonitorKey":     With(Bounds(Str("Monitoring-as-code key: letters, digits and . _ : / -, starting with a letter or digit."), 1, 128), "pattern", `^[A-Za-z0-9][A-Za-z0-9._:/-]*$`),
		"RequestHeaders": headers,
		// Connection stays hand-written: its fields depend on the channel
		// type in the path, and the handler reads it as a map by type.
		"Connection": Obj("Channel fields at top level (by type: webhook_url; integration_key; api_key and region us/eu; chat_id; repository and token; to as E.164), plus name and routing. Blank secret fields on edit keep the stored value.", M{
			"name": Bounds(Str("Default is the channel name."), nil, 60), "routing": Ref("Routing"),
			"webhook_url": URI(""), "integration_key": Str(""), "api_key": Str(""), "region": Enum("", "us", "eu"),
			"chat_id": Str(""), "repository": Str("owner/repo."), "token": Str(""), "to": Str("E.164 phone number."),
		}),
	}
}

// sharedResponses are components.responses.
func sharedResponses() M {
	jsonErr := func(desc string, schema M) M {
		return M{"description": desc, "content": M{"application/json": M{"schema": schema}}}
	}
	// page adds the HTML page a browser gets instead of the JSON error.
	page := func(r M) M {
		r["content"].(M)["text/html"] = M{"schema": Str("HTML page.")}
		return r
	}
	tooMany := jsonErr("Rate limited (RATE_LIMITED). Some limits answer with a plain-text body.", Ref("ErrorBody"))
	tooMany["content"].(M)["text/plain"] = M{"schema": Ref("PlainTooMany")}
	tooMany["headers"] = M{
		"Retry-After":         M{"$ref": "#/components/headers/Retry-After"},
		"RateLimit-Limit":     M{"$ref": "#/components/headers/RateLimit-Limit"},
		"RateLimit-Remaining": M{"$ref": "#/components/headers/RateLimit-Remaining"},
		"RateLimit-Reset":     M{"$ref": "#/components/headers/RateLimit-Reset"},
	}
	return M{
		"BadRequest": jsonErr("BAD_REQUEST (body not valid JSON), VALIDATION_ERROR with errors[{field, message}], or another rejected value.",
			M{"anyOf": []any{Ref("ValidationError"), Ref("ErrorBody")}}),
		"Unauthorized":    jsonErr("No key (`No token provided`), invalid key (`Invalid API key`), both without code; or 401 API_KEY_DISABLED.", Ref("ErrorBody")),
		"NotFound":        jsonErr("NOT_FOUND: absent in this workspace (ids of other workspaces are 404 too).", Ref("ErrorBody")),
		"Conflict":        jsonErr("Conflict (CONFLICT, INCIDENT_RESOLVED, PLAN_CHANGED, CONNECTION_LIMIT_REACHED).", Ref("ErrorBody")),
		"PayloadTooLarge": jsonErr("PAYLOAD_TOO_LARGE: body over 100 KB (2 MB for plan and apply).", Ref("ErrorBody")),
		"TooManyRequests": tooMany,
		"InternalError":   jsonErr("INTERNAL_ERROR.", Ref("ErrorBody")),
		"Unavailable":     jsonErr("Briefly unavailable (e.g. CHANNEL_UNAVAILABLE, EXPIRY_UNAVAILABLE, REGION_UNAVAILABLE), or an optional feature this server does not run (AI_UNAVAILABLE, SITE_HEALTH_UNAVAILABLE, THIRD_PARTY_UNAVAILABLE, TELEMETRY_EXPORT_UNAVAILABLE).", Ref("ErrorBody")),
		"NotImplemented":  jsonErr("NOT_IMPLEMENTED: an owner-only endpoint not modelled yet (only owners get here).", Ref("ErrorBody")),
		"NotFoundPage":    page(jsonErr("NOT_FOUND; a browser gets an HTML page saying the link is not valid.", Ref("ErrorBody"))),
		"UnavailablePage": page(jsonErr("Briefly unavailable; a browser gets an HTML page.", Ref("ErrorBody"))),
		"PruneConfirmationRequired": jsonErr("PRUNE_CONFIRMATION_REQUIRED: the apply would delete or replace monitors without expected_fingerprint or allow_prune_without_fingerprint.",
			Ref("ErrorBody")),
	}
}

func sharedHeaders() M {
	h := func(desc string) M { return M{"description": desc, "schema": Integer("")} }
	return M{
		"Retry-After":         h("Seconds to wait before retrying."),
		"RateLimit-Limit":     h("Requests allowed in the window."),
		"RateLimit-Remaining": h("Requests left in the window."),
		"RateLimit-Reset":     h("Seconds until the window resets."),
	}
}

func sharedParameters() M {
	return M{
		"X-Workspace-Id": M{
			"name": "X-Workspace-Id", "in": "header", "required": false, "schema": Str(""),
			"description": "Optional; when sent it must be the key's workspace, else 403 WORKSPACE_ACCESS_DENIED.",
		},
	}
}
