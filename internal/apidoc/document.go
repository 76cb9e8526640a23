package apidoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// API is what the document is built from: the routes as the REST core
// declared them, and the wire types to describe even when no route names
// them directly (those reached only from hand-written schemas).
type API struct {
	Ops []Op
	// Types are further wire types (values) whose schemas become components.
	Types []any
	// Names name the components of Go types whose own names say too little
	// in the API's one namespace of schemas.
	Names map[reflect.Type]string
	// Schemas are components derived elsewhere (the monitor config, from
	// the Monitor CRD: internal/monitorconfig/schema).
	Schemas M
}

// Build returns the OpenAPI 3.1 document of api, encoded deterministically
// (sorted keys, two-space indentation), so a stale copy shows up as a diff.
// The doc comments of the wire types are read from the module's sources,
// found from the working directory up.
func Build(api API) ([]byte, error) {
	doc, err := document(api)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// document assembles the OpenAPI object.
func document(api API) (M, error) {
	r := newComponents(api.Names)
	// The listed types first: of two types of the same name, the first
	// reached keeps the bare name.
	for _, v := range api.Types {
		if _, err := r.ref(v); err != nil {
			return nil, err
		}
	}
	paths := M{}
	ids := map[string]bool{}
	for _, o := range api.Ops {
		if o.Summary == "" || o.Tag == "" {
			return nil, fmt.Errorf("%s %s is not documented: declare its tag and summary where it is registered", o.Method, o.Path)
		}
		item, _ := paths[o.Path].(M)
		if item == nil {
			item = M{}
			paths[o.Path] = item
		}
		m := strings.ToLower(o.Method)
		if _, dup := item[m]; dup {
			return nil, fmt.Errorf("%s %s described twice", o.Method, o.Path)
		}
		op, err := r.build(o)
		if err != nil {
			return nil, err
		}
		id := op["operationId"].(string)
		if ids[id] {
			return nil, fmt.Errorf("operationId %s used twice", id)
		}
		ids[id] = true
		item[m] = op
	}
	schemas, err := r.components(api.Schemas)
	if err != nil {
		return nil, err
	}
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
		"tags":     tags(),
		"paths":    paths,
		"components": M{
			"securitySchemes": M{
				"apiKey": M{
					"type":         "http",
					"scheme":       "bearer",
					"bearerFormat": "sk_ API key",
					"description":  "An API key `sk_…` in `Authorization: Bearer <key>`. Missing key: 401 `No token provided`; unknown key: 401 `Invalid API key`; disabled key: 401 `API_KEY_DISABLED`. `X-Workspace-Id`, when sent, must name the key's workspace (else 403 `WORKSPACE_ACCESS_DENIED`).",
				},
			},
			"schemas":    schemas,
			"responses":  sharedResponses(),
			"headers":    sharedHeaders(),
			"parameters": sharedParameters(),
		},
	}, nil
}

func tags() []any {
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

// components are the document's components.schemas: those derived from Go
// types and the hand-written ones (handSchemas).
func (r *components) components(derived M) (M, error) {
	out, err := r.schemas()
	if err != nil {
		return nil, err
	}
	hand := handSchemas()
	for name, s := range derived {
		hand[name] = s
	}
	for name, s := range hand {
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("schema %s is both derived from a Go type and written by hand", name)
		}
		out[name] = s
	}
	return out, nil
}

// namedEnums are the value lists an `openapi:"enum=@name"` tag names.
var namedEnums = map[string][]string{
	"monitorTypes":  monitorTypes,
	"monitorStates": monitorStates,
	"checkStates":   CheckStates,
	"draftPhases":   draftPhases,
}
