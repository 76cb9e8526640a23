// Command gen-openapi writes the OpenAPI 3.1 document of the REST API
// (internal/apiserver/openapi.json, embedded and served at GET /openapi.json,
// and its copy docs/openapi.json): the schemas of the answers are derived
// from their Go wire types in internal/restapi (wire.go lists them,
// reflect.go turns a type into a schema); schemas.go holds the schemas not
// yet declared in Go (request bodies, errors, monitor config) and
// operations.go one entry per served route. markdown.go renders the encoded document as the
// human-readable reference docs/api-reference.md. The output is
// deterministic (sorted keys, two-space indentation), so a stale document
// shows up as a diff.
//
// internal/apiserver/openapi_test.go fails when a route is served but not
// described here, or described but not served: add new routes to
// operations.go and run, from the repository root,
//
//	go run ./hack/gen-openapi
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	outs := flag.String("out", "internal/apiserver/openapi.json,docs/openapi.json", "comma-separated files to write")
	mdOut := flag.String("markdown", "docs/api-reference.md", "Markdown API reference to write (empty: none)")
	flag.Parse()
	b, err := render()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-openapi:", err)
		os.Exit(1)
	}
	files := map[string][]byte{}
	var order []string
	for _, p := range strings.Split(*outs, ",") {
		files[p] = b
		order = append(order, p)
	}
	if *mdOut != "" {
		md, err := renderMarkdown(b)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen-openapi:", err)
			os.Exit(1)
		}
		files[*mdOut] = md
		order = append(order, *mdOut)
	}
	for _, p := range order {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "gen-openapi:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(p, files[p], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen-openapi:", err)
			os.Exit(1)
		}
	}
}

// render builds the document and encodes it.
func render() ([]byte, error) {
	doc, err := document()
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
func document() (M, error) {
	schemas, err := schemas()
	if err != nil {
		return nil, err
	}
	paths := M{}
	ids := map[string]bool{}
	for _, o := range operations() {
		item, _ := paths[o.path].(M)
		if item == nil {
			item = M{}
			paths[o.path] = item
		}
		m := strings.ToLower(o.method)
		if _, dup := item[m]; dup {
			return nil, fmt.Errorf("%s %s described twice", o.method, o.path)
		}
		op := o.build()
		id := op["operationId"].(string)
		if ids[id] {
			return nil, fmt.Errorf("operationId %s used twice", id)
		}
		ids[id] = true
		item[m] = op
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
