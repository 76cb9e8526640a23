package apiserver

import (
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/apidoc"
)

// The document's written parts: what the API says of itself (info,
// servers, tags), its error shapes and the shared responses every
// operation refers to by name (apidoc's builder adds them to each
// operation by access level), and the few schemas no Go type declares.

// M is a JSON object of the document.
type M = apidoc.M

// openAPIBase is the document's fixed part (apidoc.API.Base); config are
// the components derived elsewhere (the monitor config, from the Monitor
// CRD).
func openAPIBase(config M) M {
	return M{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
		"info": M{
			"title":   "uptime-operator REST API",
			"version": "1.0.0",
			"description": strings.Join([]string{
				"The REST API of uptime-operator, a self-hosted uptime-monitoring service running as a Kubernetes operator.",
				"Request and response bodies are JSON; IDs are UUIDs (the `metadata.uid` of the custom resource or the store record).",
				"",
				"Two front doors serve the same routes: the direct listener, authenticated with `Authorization: Bearer sk_…` API keys,",
				"and the aggregated API `/apis/api.uptime-operator.io/v1/namespaces/{namespace}/…` behind kube-apiserver, where the",
				"Kubernetes user's RBAC (ClusterRoles `uptime-operator-viewer`, `-editor`, `-automation`, `-owner`) gives the access level.",
				"",
				"Access levels (`x-access` on every operation): `public` needs no key; `any-key` allows reads with every key and writes",
				"with Standard or Automation keys (read-only keys get 403 `READ_ONLY_ACCESS`); `read-only-write` allows every key whatever",
				"the method; `automation` needs an Automation key (403 `AUTOMATION_KEY_REQUIRED`); `owner` needs the workspace owner",
				"(API keys get 403 `WORKSPACE_OWNER_REQUIRED`); `session` endpoints of the human account never accept API keys",
				"(403 `SESSION_AUTH_REQUIRED`). `x-plan-feature` names the plan feature an operation needs (403 `FEATURE_NOT_AVAILABLE`).",
				"",
				"Every authenticated request counts against its key's 1200 requests per minute and carries `RateLimit-Limit`,",
				"`RateLimit-Remaining` and `RateLimit-Reset`; routes with their own limits say so in `x-rate-limit`. A 429 carries",
				"`Retry-After`; some 429 bodies are the plain text `Too many requests, please try again later`. Plan-limit failures are",
				"403, never 429. Request bodies are limited to 100 KB (2 MB for monitoring-as-code plan and apply).",
			}, "\n"),
			"license": M{"name": "Apache-2.0", "identifier": "Apache-2.0"},
		},
		"servers": []any{
			M{"url": "/", "description": "Direct listener (Authorization: Bearer sk_…)."},
			M{
				"url":         "/apis/api.uptime-operator.io/v1/namespaces/{namespace}",
				"description": "Aggregated API behind kube-apiserver; the namespace is the workspace.",
				"variables":   M{"namespace": M{"default": "default", "description": "Workspace (Kubernetes namespace)."}},
			},
		},
		"security": []any{M{"apiKey": []any{}}},
		"tags":     openAPITags(),
		"components": M{
			"securitySchemes": M{
				"apiKey": M{
					"type":         "http",
					"scheme":       "bearer",
					"bearerFormat": "sk_ API key",
					"description":  "An API key `sk_…` in `Authorization: Bearer <key>`. Missing key: 401 `No token provided`; unknown key: 401 `Invalid API key`; disabled key: 401 `API_KEY_DISABLED`. `X-Workspace-Id`, when sent, must name the key's workspace (else 403 `WORKSPACE_ACCESS_DENIED`).",
				},
			},
			"schemas":    handSchemas(config),
			"responses":  sharedResponses(),
			"headers":    sharedHeaders(),
			"parameters": sharedParameters(),
		},
	}
}

func openAPITags() []any {
	var out []any
	for _, t := range [][2]string{
		{"Meta", "Health and the API description."},
		{"Public", "Heartbeat URLs and public status pages; no API key."},
		{"Whoami", "The caller's identity, access level and plan."},
		{"Monitoring as code", "Keyed monitors, plan and apply."},
		{"Monitors", "Monitors, check history and per-monitor operations."},
		{"Stats", "Statistics of one monitor (1000 requests per minute per IP)."},
		{"Monitor groups", "Groups of monitors."},
		{"Incidents", "Incidents, notes, postmortems, escalation."},
		{"Runbooks", "Runbooks and their use on incidents."},
		{"Deploy events", "Deployments for incident correlation."},
		{"Maintenance", "Maintenance windows."},
		{"Status pages", "Status pages managed with a key."},
		{"Alert channels", "Integrations: alert channels and their connections."},
		{"Alert recipients and settings", "Alert recipients and read-only alerting settings."},
		{"Reliability", "Reliability overview, dependencies and SLO targets."},
		{"Domain and DNS", "Certificate and domain expiry, DNS answer acceptance."},
		{"AI incident assist", "AI-generated incident summaries, postmortems and status updates."},
		{"Website health", "Crawls and audits of websites: broken links, mixed content, slow pages, performance."},
		{"Third-party status", "Following the status pages of third-party providers."},
		{"Telemetry export", "Export of check results as OpenTelemetry spans and metrics."},
		{"Account", "Endpoints of the human account; API keys get 403 SESSION_AUTH_REQUIRED."},
	} {
		out = append(out, M{"name": t[0], "description": t[1]})
	}
	return out
}

// handSchemas are the components.schemas not derived from Go types, each
// for a reason given where it is written: the error shapes (one Go
// ErrorBody, several documented shapes), the request headers of a monitor
// (a value is a string or a Secret reference), and the alert-channel
// connection body.
func handSchemas(config M) M {
	headers := apidoc.With(M{"type": "object", "description": "Header name to value; a value may be {\"secret_ref\": {\"name\", \"key\"}} naming a Secret of the workspace (owner level only; the Secret must opt in with the label monitoring.uptime-operator.io/credentials=true)."},
		"maxProperties", 50, "additionalProperties", M{"anyOf": []any{apidoc.Str(""), apidoc.Ref("SecretRef")}})
	s := M{
		// Errors.
		"ErrorCode": apidoc.Enum("Error codes of the API.", errorCodes...),
		"ValidationError": apidoc.Obj("400 VALIDATION_ERROR.", M{
			"error":  apidoc.With(apidoc.Str(""), "const", "Validation failed"),
			"code":   apidoc.With(apidoc.Str(""), "const", "VALIDATION_ERROR"),
			"errors": apidoc.Bounds(apidoc.Arr(apidoc.Ref("FieldError"), ""), 1, nil),
		}, "error", "code", "errors"),
		"FeatureError": apidoc.Obj("403 FEATURE_NOT_AVAILABLE: the workspace's plan lacks a feature.", M{
			"error":         apidoc.Str(""),
			"code":          apidoc.With(apidoc.Str(""), "const", "FEATURE_NOT_AVAILABLE"),
			"details":       apidoc.Obj("", M{"feature": apidoc.Str("The missing plan feature.")}),
			"plan":          apidoc.Str("The workspace's plan."),
			"required_plan": apidoc.Str("The cheapest plan with the feature."),
			"upgradePath":   apidoc.Str("Command that moves the workspace to that plan."),
		}, "error", "code", "plan"),
		"EntitlementLimitError": apidoc.Obj("403 ENTITLEMENT_LIMIT_REACHED: a plan limit is reached.", M{
			"error":   apidoc.Str(""),
			"code":    apidoc.With(apidoc.Str(""), "const", "ENTITLEMENT_LIMIT_REACHED"),
			"details": apidoc.Obj("", M{"resource": apidoc.Str("e.g. monitors, status_pages."), "current": apidoc.Integer(""), "limit": apidoc.Integer("")}, "resource", "current", "limit"),
		}, "error", "code", "details"),
		"PlainTooMany": apidoc.With(apidoc.Str("Plain-text 429 body."), "const", "Too many requests, please try again later"),

		// Monitors. The bodies and config are restapi types; a request
		// header's value is a string or a Secret reference, which a Go
		// type (probeapi.Headers) decodes by hand.
		"SecretRef":      apidoc.Obj("Reference to a Secret key of the workspace.", M{"secret_ref": apidoc.Obj("", M{"name": apidoc.Str(""), "key": apidoc.Str("")}, "name", "key")}, "secret_ref"),
		"MonitorKey":     apidoc.With(apidoc.Bounds(apidoc.Str("Monitoring-as-code key: letters, digits and . _ : / -, starting with a letter or digit."), 1, 128), "pattern", `^[A-Za-z0-9][A-Za-z0-9._:/-]*$`),
		"RequestHeaders": headers,
		// Connection stays hand-written: its fields depend on the channel
		// type in the path, and the handler reads it as a map by type.
		"Connection": apidoc.Obj("Channel fields at top level (by type: webhook_url; integration_key; api_key and region us/eu; chat_id; repository and token; to as E.164), plus name and routing. Blank secret fields on edit keep the stored value.", M{
			"name": apidoc.Bounds(apidoc.Str("Default is the channel name."), nil, 60), "routing": apidoc.Ref("Routing"),
			"webhook_url": apidoc.URI(""), "integration_key": apidoc.Str(""), "api_key": apidoc.Str(""), "region": apidoc.Enum("", "us", "eu"),
			"chat_id": apidoc.Str(""), "repository": apidoc.Str("owner/repo."), "token": apidoc.Str(""), "to": apidoc.Str("E.164 phone number."),
		}),
	}
	for name, c := range config {
		s[name] = c
	}
	return s
}

// sharedResponses are components.responses.
func sharedResponses() M {
	jsonErr := func(desc string, schema M) M {
		return M{"description": desc, "content": M{"application/json": M{"schema": schema}}}
	}
	// page adds the HTML page a browser gets instead of the JSON error.
	page := func(r M) M {
		r["content"].(M)["text/html"] = M{"schema": apidoc.Str("HTML page.")}
		return r
	}
	tooMany := jsonErr("Rate limited (RATE_LIMITED). Some limits answer with a plain-text body.", apidoc.Ref("ErrorBody"))
	tooMany["content"].(M)["text/plain"] = M{"schema": apidoc.Ref("PlainTooMany")}
	tooMany["headers"] = M{
		"Retry-After":         M{"$ref": "#/components/headers/Retry-After"},
		"RateLimit-Limit":     M{"$ref": "#/components/headers/RateLimit-Limit"},
		"RateLimit-Remaining": M{"$ref": "#/components/headers/RateLimit-Remaining"},
		"RateLimit-Reset":     M{"$ref": "#/components/headers/RateLimit-Reset"},
	}
	return M{
		"BadRequest": jsonErr("BAD_REQUEST (body not valid JSON), VALIDATION_ERROR with errors[{field, message}], or another rejected value.",
			M{"anyOf": []any{apidoc.Ref("ValidationError"), apidoc.Ref("ErrorBody")}}),
		"Unauthorized":    jsonErr("No key (`No token provided`), invalid key (`Invalid API key`), both without code; or 401 API_KEY_DISABLED.", apidoc.Ref("ErrorBody")),
		"NotFound":        jsonErr("NOT_FOUND: absent in this workspace (ids of other workspaces are 404 too).", apidoc.Ref("ErrorBody")),
		"Conflict":        jsonErr("Conflict (CONFLICT, INCIDENT_RESOLVED, PLAN_CHANGED, CONNECTION_LIMIT_REACHED).", apidoc.Ref("ErrorBody")),
		"PayloadTooLarge": jsonErr("PAYLOAD_TOO_LARGE: body over 100 KB (2 MB for plan and apply).", apidoc.Ref("ErrorBody")),
		"TooManyRequests": tooMany,
		"InternalError":   jsonErr("INTERNAL_ERROR.", apidoc.Ref("ErrorBody")),
		"Unavailable":     jsonErr("Briefly unavailable (e.g. CHANNEL_UNAVAILABLE, EXPIRY_UNAVAILABLE, REGION_UNAVAILABLE), or an optional feature this server does not run (AI_UNAVAILABLE, SITE_HEALTH_UNAVAILABLE, THIRD_PARTY_UNAVAILABLE, TELEMETRY_EXPORT_UNAVAILABLE).", apidoc.Ref("ErrorBody")),
		"NotImplemented":  jsonErr("NOT_IMPLEMENTED: an owner-only endpoint not modelled yet (only owners get here).", apidoc.Ref("ErrorBody")),
		"NotFoundPage":    page(jsonErr("NOT_FOUND; a browser gets an HTML page saying the link is not valid.", apidoc.Ref("ErrorBody"))),
		"UnavailablePage": page(jsonErr("Briefly unavailable; a browser gets an HTML page.", apidoc.Ref("ErrorBody"))),
		"PruneConfirmationRequired": jsonErr("PRUNE_CONFIRMATION_REQUIRED: the apply would delete or replace monitors without expected_fingerprint or allow_prune_without_fingerprint.",
			apidoc.Ref("ErrorBody")),
	}
}

func sharedHeaders() M {
	h := func(desc string) M { return M{"description": desc, "schema": apidoc.Integer("")} }
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
			"name": "X-Workspace-Id", "in": "header", "required": false, "schema": apidoc.Str(""),
			"description": "Optional; when sent it must be the key's workspace, else 403 WORKSPACE_ACCESS_DENIED.",
		},
	}
}

// errorCodes are the error codes of the API (the ErrorCode schema).
var errorCodes = []string{
	"VALIDATION_ERROR", "BAD_REQUEST", "USE_SIGNED_DEPLOY_HOOK", "PAYLOAD_TOO_LARGE", "NOT_FOUND", "UNAUTHORIZED",
	"API_KEY_DISABLED", "SESSION_AUTH_REQUIRED", "WORKSPACE_OWNER_REQUIRED", "READ_ONLY_ACCESS", "AUTOMATION_KEY_REQUIRED",
	"ALERT_ROUTING_NOT_ALLOWED", "WORKSPACE_ACCESS_DENIED", "FEATURE_NOT_AVAILABLE", "WHITE_LABEL_NOT_ENTITLED",
	"ENTITLEMENT_LIMIT_REACHED", "EMAIL_VERIFICATION_REQUIRED", "CORS_REJECTED", "INCIDENT_RESOLVED", "CONFLICT",
	"PLAN_CHANGED", "CONNECTION_LIMIT_REACHED", "PRUNE_CONFIRMATION_REQUIRED", "RATE_LIMITED", "CHANNEL_UNAVAILABLE",
	"INTERNAL_ERROR", "METHOD_NOT_ALLOWED", "NOT_IMPLEMENTED", "EXPIRY_UNAVAILABLE", "REGION_UNAVAILABLE",
	// 503 of an optional feature that this server does not run.
	"AI_UNAVAILABLE", "SITE_HEALTH_UNAVAILABLE", "THIRD_PARTY_UNAVAILABLE", "TELEMETRY_EXPORT_UNAVAILABLE",
}

// openAPIPathParams describe the path parameters of every route by name.
var openAPIPathParams = map[string]apidoc.Param{
	"id": {Schema: apidoc.UUID("")}, "monitorId": {Schema: apidoc.UUID("")}, "connectionId": {Schema: apidoc.UUID("")},
	"runbookId": {Schema: apidoc.UUID("")}, "noteId": {Schema: apidoc.UUID("")}, "draftId": {Schema: apidoc.UUID("")},
	"key":          {Schema: apidoc.Ref("MonitorKey"), Desc: "Monitor key, URL-encoded (may contain `/`, also sent unencoded: the key is the rest of the path)."},
	"slug":         {Schema: apidoc.Str(""), Desc: "Status page slug."},
	"token":        {Schema: apidoc.Str(""), Desc: "Token of the URL: the credential of a heartbeat URL, or the single-use token of a confirmation link."},
	"type":         {Schema: apidoc.Str(""), Desc: "Channel type: the lower-case channel product name, or webhook, sms, voice, whatsapp."},
	"stepId":       {Schema: apidoc.Str(""), Desc: "Runbook step id."},
	"path":         {Schema: apidoc.Str(""), Desc: "Rest of the path."},
	"email":        {Schema: apidoc.Email(""), Desc: "The recipient's email address (URL-encoded or not)."},
	"runId":        {Schema: apidoc.UUID(""), Desc: "Website health run id."},
	"providerId":   {Schema: apidoc.Str(""), Desc: "Third-party provider id from the catalog."},
	"statusPageId": {Schema: apidoc.UUID(""), Desc: "Status page id."},
	"rest":         {Schema: apidoc.Enum("", "history", "badge.svg", "feed.xml"), Desc: "What of the page: its 90-day history (JSON), its SVG badge or its Atom feed."},
}
