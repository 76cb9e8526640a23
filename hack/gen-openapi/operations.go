package main

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// access is who may call an operation (x-access).
type access string

const (
	public        access = "public"
	anyKey        access = "any-key"
	readOnlyWrite access = "read-only-write"
	automationKey access = "automation"
	ownerOnly     access = "owner"
	sessionOnly   access = "session"
)

// param is a query parameter.
type param struct {
	name, desc string
	schema     M
	required   bool
}

func q(name string, schema M, desc string) param {
	return param{name: name, schema: schema, desc: desc}
}

// op describes one route.
type op struct {
	method, path    string
	tag, summary    string
	desc            string
	access          access
	feature         string  // plan feature (x-plan-feature; 403 FEATURE_NOT_AVAILABLE)
	limit           string  // route rate limit (x-rate-limit)
	query           []param // query parameters
	body            M       // JSON request body; nil: none
	bodyOptional    bool
	status          int    // success status; default 200
	alsoStatus      []int  // further success statuses with the same body (201 created / 200 updated, 207)
	resp            M      // success body; nil with 204
	respType        string // success content type; default application/json
	jsonResp        M      // with respType text/html: the JSON success body of requests that accept application/json
	moreContent     M      // further media types of the success answer: media type → schema
	htmlErrors      bool   // a browser page: its 404 and 503 are HTML pages too (JSON to JSON requests)
	respHeaders     M
	extra           []int // further error statuses: 409, 428, 501, 503
	entitlement     bool  // plan limits (403 ENTITLEMENT_LIMIT_REACHED)
	noNotFound      bool  // a path parameter that cannot be 404
	pathParamSchema M     // overrides for path parameters
}

var pathParamRE = regexp.MustCompile(`\{([^}]+)\}`)

// pathParam returns the schema of a path parameter by its name.
func pathParam(name string) (M, string) {
	switch name {
	case "id", "monitorId", "connectionId", "runbookId", "noteId", "draftId":
		return uuid(""), ""
	case "key":
		return ref("MonitorKey"), "Monitor key, URL-encoded (may contain `/`, also sent unencoded: the key is the rest of the path)."
	case "slug":
		return str(""), "Status page slug."
	case "token":
		return str(""), "Token of the URL: the credential of a heartbeat URL, or the single-use token of a confirmation link."
	case "type":
		return str(""), "Channel type: the lower-case channel product name, or webhook, sms, voice, whatsapp."
	case "stepId":
		return str(""), "Runbook step id."
	case "path":
		return str(""), "Rest of the path."
	case "email":
		return email(""), "The recipient's email address (URL-encoded or not)."
	case "runId":
		return uuid(""), "Website health run id."
	case "providerId":
		return str(""), "Third-party provider id from the catalog."
	case "statusPageId":
		return uuid(""), "Status page id."
	case "rest":
		return enum("", "history", "badge.svg", "feed.xml"), "What of the page: its 90-day history (JSON), its SVG badge or its Atom feed."
	}
	return str(""), ""
}

func (o op) operationID() string {
	var b strings.Builder
	b.WriteString(strings.ToLower(o.method))
	up := true
	for _, r := range o.path {
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
func (o op) build() M {
	out := M{
		"operationId": o.operationID(),
		"summary":     o.summary,
		"tags":        []any{o.tag},
		"x-access":    string(o.access),
	}
	if o.desc != "" {
		out["description"] = o.desc
	}
	if o.feature != "" {
		out["x-plan-feature"] = o.feature
	}
	if o.limit != "" {
		out["x-rate-limit"] = o.limit
	}
	write := o.method != "GET" && o.method != "HEAD"

	var params []any
	names := pathParamRE.FindAllStringSubmatch(o.path, -1)
	for _, n := range names {
		s, d := pathParam(n[1])
		if o.pathParamSchema != nil {
			if v, ok := o.pathParamSchema[n[1]].(M); ok {
				s = v
			}
		}
		p := M{"name": n[1], "in": "path", "required": true, "schema": s}
		if d != "" {
			p["description"] = d
		}
		params = append(params, p)
	}
	for _, p := range o.query {
		m := M{"name": p.name, "in": "query", "required": p.required, "schema": p.schema}
		if p.desc != "" {
			m["description"] = p.desc
		}
		params = append(params, m)
	}
	if o.access != public {
		params = append(params, M{"$ref": "#/components/parameters/X-Workspace-Id"})
	}
	if len(params) > 0 {
		out["parameters"] = params
	}
	if o.body != nil {
		out["requestBody"] = M{"required": !o.bodyOptional, "content": content("application/json", o.body)}
	}

	responses := M{}
	status := o.status
	if status == 0 {
		status = 200
	}
	switch {
	case o.access == sessionOnly:
		// No success: API keys are always refused.
	case status == 204:
		responses["204"] = M{"description": "Done; no body."}
	default:
		typ := o.respType
		if typ == "" {
			typ = "application/json"
		}
		r := M{"description": o.summary + "."}
		if o.resp != nil {
			r["content"] = content(typ, o.resp)
		}
		if o.jsonResp != nil {
			r["content"].(M)["application/json"] = M{"schema": o.jsonResp}
		}
		for typ, schema := range o.moreContent {
			r["content"].(M)[typ] = M{"schema": schema}
		}
		if o.respHeaders != nil {
			r["headers"] = o.respHeaders
		}
		responses[strconv.Itoa(status)] = r
		for _, st := range o.alsoStatus {
			responses[strconv.Itoa(st)] = r
		}
	}

	if o.access == public {
		out["security"] = []any{}
		responses["429"] = respRef("TooManyRequests")
		if len(names) > 0 {
			responses["404"] = respRef("NotFound")
		}
		if len(o.query) > 0 || o.body != nil {
			responses["400"] = respRef("BadRequest")
		}
		for _, s := range o.extra {
			addExtra(responses, s)
			if o.htmlErrors && (s == 404 || s == 503) {
				responses[strconv.Itoa(s)] = respRef(map[int]string{404: "NotFoundPage", 503: "UnavailablePage"}[s])
			}
		}
		out["responses"] = responses
		return out
	}

	responses["401"] = respRef("Unauthorized")
	codes := []string{"WORKSPACE_ACCESS_DENIED (X-Workspace-Id names another workspace)", "CORS_REJECTED (browser origin not allowed)"}
	schemas := []any{ref("ErrorBody")}
	switch o.access {
	case anyKey:
		if write {
			codes = append(codes, "READ_ONLY_ACCESS (read-only key)")
		}
	case automationKey:
		codes = append(codes, "READ_ONLY_ACCESS (read-only key)", "AUTOMATION_KEY_REQUIRED (needs an Automation key)")
	case ownerOnly:
		codes = append(codes, "WORKSPACE_OWNER_REQUIRED (every API key; owner only)")
	case sessionOnly:
		codes = append(codes, "SESSION_AUTH_REQUIRED (needs a dashboard session; API keys are never accepted)")
	}
	if o.feature != "" {
		codes = append(codes, "FEATURE_NOT_AVAILABLE (the plan lacks "+o.feature+")")
		schemas = append(schemas, ref("FeatureError"))
	}
	if o.entitlement {
		codes = append(codes, "ENTITLEMENT_LIMIT_REACHED (plan limit)")
		schemas = append(schemas, ref("EntitlementLimitError"))
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
	if o.access != sessionOnly {
		if len(names) > 0 && !o.noNotFound {
			responses["404"] = respRef("NotFound")
		}
		if o.body != nil || len(o.query) > 0 || len(names) > 0 {
			responses["400"] = respRef("BadRequest")
		}
		if o.body != nil || write {
			responses["413"] = respRef("PayloadTooLarge")
		}
	}
	for _, s := range o.extra {
		addExtra(responses, s)
	}
	out["responses"] = responses
	return out
}

func addExtra(responses M, s int) {
	name := map[int]string{400: "BadRequest", 404: "NotFound", 409: "Conflict", 428: "PruneConfirmationRequired", 501: "NotImplemented", 503: "Unavailable"}[s]
	if name != "" {
		responses[strconv.Itoa(s)] = respRef(name)
	}
}

// Query parameters used by several routes.
var (
	tzParams = []param{
		q("tzOffsetMinutes", bounds(integer(""), -840, 840), "Offset of the local time zone from UTC in minutes."),
		q("timeZone", str(""), "IANA time zone (instead of tzOffsetMinutes)."),
	}
	regionParam = q("region", str(""), "Probe region code.")
	listOf      = func(item M) M { return arr(item, "") }
)

func intQ(name string, min, max, def int, desc string) param {
	return q(name, with(bounds(integer(""), min, max), "default", def), desc)
}

// operations lists every route the server serves.
func operations() []op {
	get, post, put, patch, del, head := "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"
	monitorWrites := "monitor writes: 120 per 15 minutes per IP (plain-text 429)"
	runCheck := "30 per 5 minutes per workspace (plain-text 429)"
	export := "20 per 15 minutes per workspace (plain-text 429)"
	stats := "1000 per minute per IP (plain-text 429)"
	keyed := "600 per 15 minutes per workspace"
	drafts := "30 per 10 minutes per workspace"
	checkStatus := enum("", append(slices.Clone(checkStates), "problem")...)
	csv := with(str("CSV with a header row."), "contentMediaType", "text/csv")
	truncated := M{"X-Export-Truncated": M{"description": "true when the 50,000-row cap cut the export (the newest rows are returned).", "schema": enum("", "true")}}

	ops := []op{
		// Meta.
		{method: get, path: "/healthz", tag: "Meta", summary: "Liveness of the API", access: public, resp: with(str(""), "const", "ok"), respType: "text/plain"},
		{method: get, path: "/openapi.json", tag: "Meta", summary: "This OpenAPI document", access: public, resp: freeform("OpenAPI 3.1 document.")},

		// Public.
		{method: get, path: "/status/{slug}", tag: "Public", summary: "Published status page as JSON", access: public, limit: "60 per minute per IP", resp: freeform("The published page: title, monitors with status, incidents, maintenance.")},
		{method: get, path: "/status/{slug}/{rest}", tag: "Public", summary: "Status page history, badge or feed", access: public, limit: "60 per minute per IP",
			desc:            "`history`: daily uptime per monitor (JSON; `days` up to 90). `badge.svg`: status badge (image/svg+xml). `feed.xml`: Atom feed of incidents and maintenance (application/atom+xml; unavailable for private pages).",
			pathParamSchema: M{"rest": enum("", "history", "badge.svg", "feed.xml")},
			query:           []param{q("days", bounds(integer(""), 1, 90), "history only.")},
			resp:            freeform("history: daily uptime per monitor."),
			moreContent:     M{"image/svg+xml": str("badge.svg: the status badge."), "application/atom+xml": str("feed.xml: the Atom feed.")}},
		{method: get, path: "/s/{slug}", tag: "Public", summary: "Status page as HTML", access: public, limit: "60 per minute per IP", resp: str("HTML page."), respType: "text/html"},
		{method: post, path: "/s/{slug}/login", tag: "Public", summary: "Password sign-in form of a private page", access: public, limit: "60 per minute per IP", resp: str("HTML page or redirect."), respType: "text/html", extra: []int{400}},
		{method: post, path: "/s/{slug}/subscribe", tag: "Public", summary: "Subscribe to a page's updates (form)", access: public, limit: "60 per minute per IP", resp: str("HTML page."), respType: "text/html", extra: []int{400}},
		{method: get, path: "/s/{slug}/confirm", tag: "Public", summary: "Subscription confirmation page", access: public, limit: "60 per minute per IP", query: []param{q("token", str(""), "Confirmation token.")},
			desc: "The link of a subscription confirmation message. Shows a button that POSTs to the same URL; fetching the link confirms nothing.", resp: str("HTML page."), respType: "text/html"},
		{method: post, path: "/s/{slug}/confirm", tag: "Public", summary: "Confirm a subscription", access: public, limit: "60 per minute per IP", query: []param{q("token", str(""), "Confirmation token.")},
			desc: "Confirms the pending subscriber of the token, once, within 48 hours; 404 for an unknown, used or expired token. JSON requests get {\"status\":\"confirmed\"}.", resp: str("HTML page."), respType: "text/html",
			jsonResp: obj("", M{"status": enum("", "confirmed")}, "status")},
		{method: get, path: "/s/{slug}/unsubscribe", tag: "Public", summary: "Unsubscribe page", access: public, limit: "60 per minute per IP", query: []param{q("token", str(""), "Subscription token.")}, resp: str("HTML page."), respType: "text/html"},
		{method: post, path: "/s/{slug}/unsubscribe", tag: "Public", summary: "Unsubscribe (form)", access: public, limit: "60 per minute per IP", resp: str("HTML page."), respType: "text/html", extra: []int{400}},
		{method: get, path: "/recipients/confirm/{token}", tag: "Public", summary: "Alert recipient confirmation page", access: public,
			desc: "The link of a confirmation email. Shows a button that POSTs to the same URL; fetching the link confirms nothing.", resp: str("HTML page."), respType: "text/html"},
		{method: post, path: "/recipients/confirm/{token}", tag: "Public", summary: "Confirm an alert recipient", access: public, limit: "30 per 15 minutes per IP (plain-text 429)",
			desc: "Confirms the address the link was sent to. A used, replaced or expired (7 days) link answers 404. Browsers get HTML pages (the 404 and 503 included); a request that accepts application/json (or sends a JSON body) gets {\"status\":\"confirmed\",\"email\"} and the JSON error shape.",
			resp: str("HTML page."), respType: "text/html", jsonResp: obj("", M{"status": enum("", "confirmed"), "email": email("")}, "status", "email"), extra: []int{404, 503}, htmlErrors: true},
	}
	for _, m := range []string{get, post, head} {
		ops = append(ops, op{method: m, path: "/heartbeat/{token}", tag: "Public", summary: "Heartbeat ping (" + m + ")", access: public,
			limit: "60 per minute per URL; 600 failed requests per minute per IP (plain-text 429)",
			desc:  "Records a heartbeat of a cron monitor. Request bodies are ignored. Pings of a paused monitor are ignored but answered 200.",
			query: []param{
				q("status", str(""), "fail, failure, failed, down, error, err report failure; ok and similar values or none report success."),
				q("duration_ms", bounds(integer(""), 0, 604800000), "Run time of the job."),
			},
			resp: with(str(""), "const", "OK"), respType: "text/plain"})
	}

	ops = append(ops, []op{
		{method: get, path: "/automation/whoami", tag: "Whoami", summary: "The caller's workspace, access level and plan", access: anyKey, resp: ref("Whoami")},

		// Monitoring as code.
		{method: post, path: "/automation/monitors/plan", tag: "Monitoring as code", summary: "Preview an apply; writes nothing", access: readOnlyWrite,
			limit: "120 per 15 minutes per workspace; body up to 2 MB", body: ref("PlanRequest"), resp: ref("Plan")},
		{method: post, path: "/automation/monitors/apply", tag: "Monitoring as code", summary: "Apply monitor specs", access: anyKey,
			desc:  "200 when every change applied, 207 when some failed. A spec setting config.notification_emails needs an Automation key (403 ALERT_ROUTING_NOT_ALLOWED).",
			limit: "30 per 15 minutes per workspace; body up to 2 MB", body: ref("PlanRequest"), resp: ref("ApplyResult"), alsoStatus: []int{207}, extra: []int{409, 428}, entitlement: true},
		{method: put, path: "/automation/monitors/by-id/{id}/key", tag: "Monitoring as code", summary: "Assign or remove a monitor's key", access: anyKey, limit: keyed,
			body: strict(obj("", M{"key": null(ref("MonitorKey"))}, "key")), resp: ref("Monitor"), extra: []int{409}},
		{method: get, path: "/automation/monitors/{key}", tag: "Monitoring as code", summary: "Monitor by key", access: anyKey, resp: ref("Monitor")},
		{method: put, path: "/automation/monitors/{key}", tag: "Monitoring as code", summary: "Create or update a monitor by key", access: anyKey, limit: keyed,
			desc: "201 when created, 200 when updated (also when a changed type replaced the monitor). config.notification_emails needs an Automation key (403 ALERT_ROUTING_NOT_ALLOWED).",
			body: ref("MonitorSpec"), resp: ref("Monitor"), alsoStatus: []int{201}, entitlement: true, noNotFound: true},
		{method: del, path: "/automation/monitors/{key}", tag: "Monitoring as code", summary: "Delete a monitor by key, with its history", access: anyKey, limit: keyed, status: 204},

		// Monitors.
		{method: get, path: "/monitors", tag: "Monitors", summary: "All monitors, newest first (not paginated)", access: anyKey,
			query: []param{q("tag", str(""), "Only monitors with this tag.")}, resp: listOf(ref("Monitor"))},
		{method: get, path: "/monitors/summary", tag: "Monitors", summary: "Counts by status, open incidents, 24 h uptime", access: anyKey, resp: ref("MonitorSummary")},
		{method: post, path: "/monitors", tag: "Monitors", summary: "Create a monitor", access: anyKey, limit: monitorWrites,
			desc: "config.notification_emails is ignored when sent with an API key.",
			body: ref("MonitorCreate"), status: 201, resp: ref("Monitor"), entitlement: true},
		{method: post, path: "/monitors/bulk", tag: "Monitors", summary: "Bulk pause, resume, delete, tag or move monitors", access: anyKey, limit: monitorWrites, body: ref("BulkRequest"), resp: ref("BulkResult")},
		{method: post, path: "/monitors/test", tag: "Monitors", summary: "One-off check of a definition; nothing saved", access: anyKey, limit: runCheck,
			query: []param{regionParam}, body: ref("MonitorCreate"), resp: ref("CheckResult")},
		{method: get, path: "/monitors/{id}", tag: "Monitors", summary: "A monitor with 24 h and 30 d uptime", access: anyKey, resp: ref("Monitor")},
		{method: put, path: "/monitors/{id}", tag: "Monitors", summary: "Update a monitor (only sent fields change)", access: anyKey, limit: monitorWrites, body: ref("MonitorUpdate"), resp: ref("Monitor")},
		{method: del, path: "/monitors/{id}", tag: "Monitors", summary: "Delete a monitor and its history", access: anyKey, limit: monitorWrites, status: 204},
		{method: post, path: "/monitors/{id}/pause", tag: "Monitors", summary: "Pause a monitor", access: anyKey, limit: monitorWrites, resp: ref("Monitor")},
		{method: post, path: "/monitors/{id}/resume", tag: "Monitors", summary: "Resume a monitor (checked right away)", access: anyKey, limit: monitorWrites, resp: ref("Monitor")},
		{method: post, path: "/monitors/{id}/reset-stats", tag: "Monitors", summary: "Clear a monitor's statistics", access: anyKey, limit: monitorWrites, resp: ref("Success")},
		{method: post, path: "/monitors/{id}/run-check", tag: "Monitors", summary: "Run a check of a saved monitor now", access: anyKey, limit: runCheck, query: []param{regionParam}, resp: ref("CheckResult"), extra: []int{503}},
		{method: get, path: "/monitors/{id}/checks", tag: "Monitors", summary: "Check history (cursor pagination)", access: anyKey,
			query: []param{
				intQ("limit", 1, 500, 50, ""),
				q("before", str(""), "UTC timestamp YYYY-MM-DDTHH:MM:SS[.ffffff][Z]; returns older checks. Pass next_before unchanged."),
				regionParam, q("status", checkStatus, "problem = anything not up."),
			}, resp: ref("CheckPage")},
		{method: get, path: "/monitors/{id}/checks.csv", tag: "Monitors", summary: "Check history as CSV (at most 50,000 rows)", access: anyKey, limit: export,
			query: []param{q("from", dateTime(""), ""), q("to", dateTime(""), ""), regionParam, q("status", checkStatus, "")},
			resp:  csv, respType: "text/csv", respHeaders: truncated},
		{method: get, path: "/monitors/{id}/regions", tag: "Monitors", summary: "The monitor's probe regions", access: anyKey, resp: ref("Regions")},
		{method: put, path: "/monitors/{id}/regions", tag: "Monitors", summary: "Set the monitor's probe regions", access: anyKey, limit: monitorWrites,
			body: obj("", M{"regions": bounds(arr(str(""), ""), 1, 50)}, "regions"), resp: ref("Regions"), entitlement: true},
		{method: get, path: "/monitors/{id}/explanation", tag: "Monitors", summary: "Explanation of the open incident, or the per-region state against the quorum", access: anyKey, resp: ref("Explanation")},
		{method: get, path: "/monitors/{id}/flakiness", tag: "Monitors", summary: "7-day and 30-day flakiness score 0-100 with reasons", access: anyKey,
			resp: obj("The flakiness of the last 7 and 30 days.", M{
				"monitor_id": uuid(""), "computed_at": dateTime(""), "7d": ref("FlakinessWindow"), "30d": ref("FlakinessWindow"),
			}, "monitor_id", "computed_at", "7d", "30d")},
		{method: post, path: "/monitors/{id}/heartbeat/rotate", tag: "Monitors", summary: "New heartbeat URL for a cron monitor; the old one stops at once", access: anyKey, limit: monitorWrites,
			resp: ref("HeartbeatURL")},
		{method: post, path: "/monitors/{id}/cron-heartbeat", tag: "Monitors", summary: "Record a heartbeat with the API key", access: anyKey,
			body: ref("CronHeartbeat"), bodyOptional: true, resp: ref("HeartbeatRecorded")},
		{method: get, path: "/monitors/{id}/dns-records", tag: "Monitors", summary: "DNS records and recent changes of a DNS monitor", access: anyKey,
			query: []param{intQ("limit", 1, 1000, 50, "")}, resp: ref("DNSRecords")},
		{method: get, path: "/monitors/{id}/notification-recipients", tag: "Monitors", summary: "Recipients of the monitor's alert emails", access: anyKey,
			resp: obj("", M{"recipients": arr(obj("", M{"email": email(""), "source": str("")}, "email", "source"), "")}, "recipients")},

		{method: post, path: "/monitors/{id}/test-notification", tag: "Monitors", summary: "Send a test alert email", access: anyKey,
			limit: "10 per 15 minutes per workspace (plain-text 429)",
			desc:  "The email must be a recipient of the monitor or a workspace member; default is the first recipient.",
			body:  obj("", M{"email": email("")}), bodyOptional: true,
			resp: obj("", M{"success": boolean(""), "email": email(""), "message": str("")}, "success", "email"), extra: []int{503}},
		{method: get, path: "/monitors/{id}/step-runs", tag: "Monitors", summary: "Per-step results of a multi-step monitor's checks, newest first", access: anyKey,
			query: []param{intQ("limit", 1, 100, 10, ""), q("before", str(""), "As for check history."), regionParam},
			resp: obj("", M{
				"monitor_id": uuid(""),
				"items": arr(obj("A check with its steps.", M{
					"steps": arr(obj("", M{
						"index": integer(""), "name": str(""), "url": str(""), "status_code": null(integer("")), "response_time_ms": integer(""),
						"passed": boolean(""), "error": null(str("")), "assertions": arr(freeform(""), ""),
					}, "index", "name", "passed"), ""),
					"extracted": arr(str(""), "Names of extracted variables."),
				}), ""),
				"next_before": null(str("")),
			}, "monitor_id", "items", "next_before")},
		{method: get, path: "/monitors/discover-subdomains", tag: "Monitors", summary: "Subdomains that could be monitored", access: anyKey, limit: export,
			desc:  "Resolves a fixed list of common names under the domain with the operator's resolver (certificate-transparency logs are not used) and returns those resolving to addresses a monitor may target.",
			query: []param{{name: "domain", schema: str("Hostname of at least two labels."), required: true}},
			resp: obj("", M{
				"domain": str(""), "subdomains": arr(obj("", M{"hostname": str(""), "addresses": arr(str(""), ""), "suggested_url": uri("")}, "hostname", "addresses", "suggested_url"), ""),
				"names_checked": integer(""), "wildcard_dns": boolean(""), "timed_out": boolean(""), "sources": arr(str(""), ""),
				"certificate_transparency": boolean(""), "note": str(""),
			}, "domain", "subdomains")},
		{method: get, path: "/regions", tag: "Monitors", summary: "Probe regions", access: anyKey,
			resp: listOf(ref("ProbeRegion"))},

		// Domain and DNS.
		{method: get, path: "/monitors/{id}/domain-ssl", tag: "Domain and DNS", summary: "Certificate and domain expiry as last recorded", access: anyKey, resp: ref("ExpiryDetails"), extra: []int{503}},
		{method: post, path: "/monitors/{id}/domain-ssl/refresh", tag: "Domain and DNS", summary: "Re-check certificate and domain expiry now", access: anyKey, limit: export,
			resp: M{"allOf": []any{ref("ExpiryDetails"), obj("", M{"refresh_error": null(str("Why fetching the certificate failed."))}, "refresh_error")}}, extra: []int{503}},
		{method: post, path: "/monitors/{id}/dns-records/accept", tag: "Domain and DNS", summary: "Accept the current DNS answer as the new expected value", access: anyKey,
			limit: "120 per 15 minutes per IP", body: freeform("Optional: the answers to accept."), bodyOptional: true, resp: ref("DNSAccepted"), extra: []int{409}},

		// Stats.
		{method: get, path: "/stats/{id}/stats", tag: "Stats", summary: "Uptime summary", access: anyKey, limit: stats, query: []param{q("days", with(bounds(integer("Up to the plan's history."), 1, 730), "default", 30), "")}, resp: ref("Stats")},
		{method: get, path: "/stats/{id}/checks", tag: "Stats", summary: "Recent checks", access: anyKey, limit: stats, query: []param{intQ("limit", 1, 5000, 100, ""), regionParam}, resp: ref("CheckList")},
		{method: get, path: "/stats/{id}/incidents", tag: "Stats", summary: "Incident history", access: anyKey, limit: stats, query: []param{intQ("limit", 1, 500, 50, "")}, resp: ref("IncidentList")},
		{method: get, path: "/stats/{id}/response-time-chart", tag: "Stats", summary: "Response times over time", access: anyKey, limit: stats,
			query: append([]param{intQ("days", 1, 730, 7, ""), regionParam}, tzParams...),
			resp:  ref("ResponseTimeChart")},
		{method: get, path: "/stats/{id}/response-series", tag: "Stats", summary: "Response time series", access: anyKey, limit: stats,
			query: []param{q("range", with(enum("", "1h", "6h", "24h", "7d", "30d"), "default", "24h"), ""), regionParam},
			resp:  ref("ResponseSeries")},
		{method: get, path: "/stats/{id}/uptime-history", tag: "Stats", summary: "Daily uptime", access: anyKey, limit: stats,
			query: append([]param{intQ("days", 1, 730, 90, "Up to the plan's history.")}, tzParams...), resp: ref("Days")},
		{method: get, path: "/stats/{id}/24h-bars", tag: "Stats", summary: "Daily status bars", access: anyKey, limit: stats,
			query: append([]param{intQ("days", 1, 730, 90, ""), q("endDate", with(str(""), "format", "date"), "Last day (YYYY-MM-DD).")}, tzParams...),
			resp:  ref("Days")},
		{method: get, path: "/stats/{id}/region-statuses", tag: "Stats", summary: "Latest status per region", access: anyKey, limit: stats, resp: ref("RegionStatuses")},
		{method: get, path: "/stats/{id}/pause-windows", tag: "Stats", summary: "When the monitor was paused", access: anyKey, limit: stats,
			query: []param{intQ("hours", 1, 8760, 720, "")}, resp: ref("PauseWindows")},

		// Monitor groups.
		{method: get, path: "/monitor-groups", tag: "Monitor groups", summary: "Monitor groups", access: anyKey, resp: listOf(ref("MonitorGroup"))},
		{method: post, path: "/monitor-groups", tag: "Monitor groups", summary: "Create a group", access: anyKey, body: ref("MonitorGroupBody"), status: 201, resp: ref("MonitorGroup")},
		{method: get, path: "/monitor-groups/{id}/summary", tag: "Monitor groups", summary: "Status summary of the group's monitors", access: anyKey,
			resp: ref("GroupSummary")},
		{method: put, path: "/monitor-groups/{id}", tag: "Monitor groups", summary: "Rename a group", access: anyKey, body: ref("MonitorGroupBody"), resp: ref("MonitorGroup")},
		{method: del, path: "/monitor-groups/{id}", tag: "Monitor groups", summary: "Delete a group (its monitors leave it)", access: anyKey, status: 204},

		// Incidents.
		{method: get, path: "/incidents", tag: "Incidents", summary: "Incidents (page pagination)", access: anyKey, query: incidentFilters(true), resp: ref("IncidentPage")},
		{method: post, path: "/incidents", tag: "Incidents", summary: "Open a manual incident", access: anyKey, desc: "409 when the monitor already has an open incident.",
			body: obj("", M{"monitor_id": uuid("")}, "monitor_id"), status: 201, resp: ref("IncidentDetail"), extra: []int{409}},
		{method: get, path: "/incidents/export", tag: "Incidents", summary: "Incidents as CSV, or JSON with format=json", access: anyKey, limit: export,
			query: append(incidentFilters(false), q("format", enum("", "csv", "json"), "Default csv.")),
			resp:  str("CSV: one row per incident, a header row first."), respType: "text/csv", respHeaders: truncated,
			jsonResp: ref("IncidentList")},
		{method: get, path: "/incidents/{id}", tag: "Incidents", summary: "Incident details", access: anyKey, resp: ref("IncidentDetail")},
		{method: get, path: "/incidents/{id}/explanation", tag: "Incidents", summary: "Region votes, quorum rule, failure class, alert decision, fault verdict, findings", access: anyKey, resp: ref("Explanation")},
		{method: get, path: "/incidents/{id}/replay-timeline", tag: "Incidents", summary: "Timeline of checks, alerts and notes", access: anyKey,
			query: []param{intQ("limit", 1, 1000, 200, ""), q("cursor", str(""), "next_cursor of the previous page.")}, resp: ref("TimelinePage")},
		{method: post, path: "/incidents/{id}/acknowledge", tag: "Incidents", summary: "Acknowledge (stops escalation)", access: anyKey, resp: ref("Incident")},
		{method: post, path: "/incidents/{id}/resolve", tag: "Incidents", summary: "Resolve manually", access: anyKey, desc: "409 INCIDENT_RESOLVED when already resolved.",
			body: ref("ResolveBody"), bodyOptional: true, resp: ref("Incident"), extra: []int{409}},
		{method: post, path: "/incidents/{id}/snooze", tag: "Incidents", summary: "Snooze alerts of an incident", access: ownerOnly, body: ref("SnoozeBody"), resp: ref("Incident"), extra: []int{409}},
		{method: del, path: "/incidents/{id}/snooze", tag: "Incidents", summary: "Unsnooze", access: anyKey, resp: ref("Incident")},
		{method: get, path: "/incidents/{id}/escalation", tag: "Incidents", summary: "Escalation status", access: anyKey, resp: ref("Escalation")},
		{method: post, path: "/incidents/{id}/escalation/acknowledge", tag: "Incidents", summary: "Acknowledge (stops escalation)", access: anyKey, resp: ref("Incident")},
		{method: get, path: "/incidents/{id}/notes", tag: "Incidents", summary: "Notes of an incident", access: anyKey, resp: listOf(ref("Note"))},
		{method: post, path: "/incidents/{id}/notes", tag: "Incidents", summary: "Add a note", access: anyKey, body: ref("NoteBody"), status: 201, resp: ref("Note")},
		{method: del, path: "/incidents/{id}/notes/{noteId}", tag: "Incidents", summary: "Delete a note", access: anyKey, status: 204},
		{method: put, path: "/incidents/{id}/postmortem", tag: "Incidents", summary: "Set the postmortem", access: anyKey, body: ref("Postmortem"),
			resp: ref("IncidentPostmortem")},

		// Runbooks.
		{method: post, path: "/incidents/{id}/runbook", tag: "Runbooks", summary: "Attach a runbook to an incident", access: anyKey,
			body: obj("", M{"runbook_id": uuid("Default: the matching active runbook.")}), bodyOptional: true, resp: ref("AttachedRunbook")},
		{method: patch, path: "/incidents/{id}/runbook-steps/{stepId}", tag: "Runbooks", summary: "Complete or reopen a runbook step", access: anyKey,
			body: obj("", M{"is_completed": boolean("")}, "is_completed"), resp: ref("AttachedRunbook")},
		{method: get, path: "/incidents/runbooks", tag: "Runbooks", summary: "Runbooks", access: anyKey, resp: listOf(ref("Runbook"))},
		{method: post, path: "/incidents/runbooks", tag: "Runbooks", summary: "Create a runbook", access: anyKey, body: ref("RunbookBody"), status: 201, resp: ref("Runbook")},
		{method: put, path: "/incidents/runbooks/{runbookId}", tag: "Runbooks", summary: "Replace a runbook", access: anyKey, body: ref("RunbookBody"), resp: ref("Runbook")},
		{method: del, path: "/incidents/runbooks/{runbookId}", tag: "Runbooks", summary: "Delete a runbook", access: anyKey, status: 204},

		// Deploy events.
		{method: get, path: "/incidents/deploy-events", tag: "Deploy events", summary: "Recent deploy events", access: anyKey, feature: "deploy-events",
			query: []param{intQ("limit", 1, 100, 20, "")}, resp: obj("", M{"events": arr(ref("DeployEvent"), "")}, "events")},
		{method: post, path: "/incidents/deploy-events", tag: "Deploy events", summary: "Record a deploy", access: anyKey, feature: "deploy-events",
			desc: "A code-hosting deploy payload (source naming a code-hosting service) is 400 USE_SIGNED_DEPLOY_HOOK.",
			body: ref("DeployEventBody"), status: 201, resp: ref("DeployEvent")},
		{method: get, path: "/incidents/deploy-events/config", tag: "Deploy events", summary: "Signed deploy webhook settings", access: anyKey, feature: "deploy-events",
			resp: obj("", M{"enabled": boolean(""), "webhook_url": null(uri("")), "signature": str("")}, "enabled", "webhook_url", "signature")},

		// Maintenance.
		{method: get, path: "/maintenance", tag: "Maintenance", summary: "Maintenance windows", access: anyKey, resp: listOf(ref("MaintenanceWindow"))},
		{method: post, path: "/maintenance", tag: "Maintenance", summary: "Create a maintenance window", access: ownerOnly, body: ref("MaintenanceBody"), status: 201, resp: ref("MaintenanceWindow")},
		{method: put, path: "/maintenance/{id}", tag: "Maintenance", summary: "Change a maintenance window", access: ownerOnly, body: ref("MaintenanceBody"), resp: ref("MaintenanceWindow")},
		{method: patch, path: "/maintenance/{id}", tag: "Maintenance", summary: "Change a maintenance window", access: ownerOnly, body: ref("MaintenanceBody"), resp: ref("MaintenanceWindow")},
		{method: del, path: "/maintenance/{id}", tag: "Maintenance", summary: "Delete a maintenance window", access: ownerOnly, status: 204},

		// Status pages.
		{method: get, path: "/status/pages/me", tag: "Status pages", summary: "Your status pages", access: anyKey, resp: listOf(ref("StatusPage"))},
		{method: get, path: "/status/pages/overview", tag: "Status pages", summary: "Pages with current state", access: anyKey, resp: listOf(ref("StatusPage"))},
		{method: post, path: "/status/pages", tag: "Status pages", summary: "Create a status page", access: anyKey, feature: "status-pages", body: ref("StatusPageCreate"), status: 201, resp: ref("StatusPage"), entitlement: true},
		{method: get, path: "/status/pages/monitor/{monitorId}", tag: "Status pages", summary: "The pages a monitor is on", access: anyKey, resp: listOf(ref("StatusPage"))},
		{method: get, path: "/status/pages/{id}", tag: "Status pages", summary: "A status page with its monitors", access: anyKey, resp: ref("StatusPage")},
		{method: patch, path: "/status/pages/{id}", tag: "Status pages", summary: "Update a status page", access: anyKey, feature: "status-pages",
			desc: "hide_powered_by and favicon_url need white-label (403 WHITE_LABEL_NOT_ENTITLED).", body: ref("StatusPageUpdate"), resp: ref("StatusPage")},
		{method: del, path: "/status/pages/{id}", tag: "Status pages", summary: "Delete a status page", access: anyKey, status: 204},
		{method: put, path: "/status/pages/{id}/monitors", tag: "Status pages", summary: "Set the page's monitors (up to 500)", access: anyKey, feature: "status-pages", body: ref("PageMonitors"), resp: ref("StatusPage")},
		{method: post, path: "/status/pages/{id}/monitors", tag: "Status pages", summary: "Add a monitor to the page", access: anyKey, feature: "status-pages", body: ref("PageMonitorAdd"), resp: ref("StatusPage")},
		{method: del, path: "/status/pages/{id}/monitors/{monitorId}", tag: "Status pages", summary: "Remove a monitor from the page", access: anyKey, status: 204},
		{method: get, path: "/status/pages/{id}/access", tag: "Status pages", summary: "Who can view the page", access: anyKey, resp: ref("PageAccessState")},
		{method: put, path: "/status/pages/{id}/access", tag: "Status pages", summary: "Change who can view the page", access: ownerOnly, body: ref("PageAccess"), resp: ref("PageAccessState"), extra: []int{409}},
		{method: post, path: "/status/pages/{id}/access/revoke-sessions", tag: "Status pages", summary: "Sign out visitors of a private page", access: ownerOnly, resp: ref("PageAccessState")},
		{method: put, path: "/status/pages/{id}/domain", tag: "Status pages", summary: "Set the custom domain", access: ownerOnly, body: ref("PageDomain"), resp: ref("PageDomain")},
		{method: get, path: "/status/pages/{id}/subscribers", tag: "Status pages", summary: "Subscribers by channel", access: anyKey,
			resp: obj("", M{"email": arr(freeform(""), ""), "chat": arr(freeform(""), ""), "webhook": arr(freeform(""), ""), "total": integer("")}, "email", "chat", "webhook", "total")},
		{method: get, path: "/status/pages/{id}/languages", tag: "Status pages", summary: "Languages and translations", access: anyKey, resp: ref("Languages")},
		{method: put, path: "/status/pages/{id}/languages", tag: "Status pages", summary: "Change languages", access: anyKey, feature: "status-pages", body: ref("Languages"), resp: ref("Languages")},

		// Alert channels.
		{method: get, path: "/integrations", tag: "Alert channels", summary: "Channel types with fields, connections and status", access: anyKey,
			resp: obj("", M{"types": arr(freeform("Channel type: name, fields, availability on the plan."), ""), "connections": arr(ref("Channel"), "")}, "types", "connections")},
		{method: get, path: "/integrations/alert-contacts", tag: "Alert channels", summary: "Workspace email alert contacts", access: anyKey,
			resp: obj("", M{"contacts": arr(freeform(""), "")}, "contacts")},
		{method: post, path: "/integrations/{type}/connections", tag: "Alert channels", summary: "Create a connection", access: automationKey, feature: "",
			desc: "Channel availability depends on the plan (403 FEATURE_NOT_AVAILABLE). An eleventh connection of a type is 409 CONNECTION_LIMIT_REACHED.",
			body: ref("Connection"), status: 201, resp: ref("ConnectionCreated"), extra: []int{409}},
		{method: put, path: "/integrations/connections/{connectionId}", tag: "Alert channels", summary: "Edit a connection", access: automationKey, body: ref("Connection"), resp: ref("Channel")},
		{method: del, path: "/integrations/connections/{connectionId}", tag: "Alert channels", summary: "Delete a connection", access: automationKey, status: 204},
		{method: put, path: "/integrations/connections/{connectionId}/routing", tag: "Alert channels", summary: "Set a connection's routing", access: automationKey, body: ref("Routing"), resp: ref("Channel")},
		{method: post, path: "/integrations/connections/{connectionId}/test", tag: "Alert channels", summary: "Send a test alert", access: anyKey,
			limit: "30 per hour per workspace and 60 per hour per IP", resp: ref("Success"), extra: []int{503}},
		{method: post, path: "/integrations/connections/{connectionId}/rotate-secret", tag: "Alert channels", summary: "Rotate a webhook's signing secret", access: ownerOnly,
			resp: obj("", M{"connection_id": uuid(""), "signing_secret": str("Shown once.")}, "connection_id", "signing_secret"), extra: []int{409}},

		// Alert recipients and settings.
		{method: get, path: "/alert-recipients", tag: "Alert recipients and settings", summary: "Recipients and confirmation state", access: anyKey,
			desc: "Every address the workspace's resources send alert emails to (monitors' and groups' notificationEmails, email channels, escalation steps, on-call schedules), each once. New addresses are sent a confirmation email; with confirmation_required, alert emails go to confirmed addresses only.",
			resp: obj("", M{
				"contacts": arr(obj("", M{
					"email":                email(""),
					"source":               str("First kind of resource naming the address: monitor, group, alert_channel, escalation_policy or on_call_schedule."),
					"sources":              arr(str(""), "Every kind of resource naming the address."),
					"status":               enum("", "confirmed", "pending", "unconfirmed"),
					"confirmed":            boolean(""),
					"confirmation_sent_at": null(dateTime("")),
					"confirmations_sent":   integer(""),
					"confirmed_at":         null(dateTime("")),
				}, "email", "source", "sources", "status", "confirmed", "confirmation_sent_at", "confirmations_sent", "confirmed_at"), ""),
				"confirmation_required": boolean("Alert emails are held back from addresses that have not confirmed."),
			}, "contacts", "confirmation_required")},
		{method: post, path: "/alert-recipients", tag: "Alert recipients and settings", summary: "Add a recipient", access: ownerOnly,
			desc: "Adds the address to the workspace's email AlertChannel alert-recipients (created when absent, routed to every monitor); it is sent a confirmation link. 409 CONFLICT when it is already there.",
			body: strictObj("", M{"email": email("")}, "email"), status: 201,
			resp: obj("", M{"email": email(""), "status": enum("", "confirmed", "pending", "unconfirmed"), "confirmed": boolean(""),
				"alert_channel": str("Name of the AlertChannel holding the address."), "message": str("")}, "email", "status", "confirmed", "alert_channel"),
			extra: []int{409}},
		{method: del, path: "/alert-recipients/{email}", tag: "Alert recipients and settings", summary: "Remove a recipient", access: ownerOnly,
			desc:   "Removes an address added with POST; one named by a monitor, group, channel, escalation policy or on-call schedule is 409 (edit that resource).",
			status: 204, extra: []int{409}},
		{method: post, path: "/alert-recipients/resend", tag: "Alert recipients and settings", summary: "Resend a recipient's confirmation email", access: anyKey,
			desc: "Sends a new confirmation link (the previous one stops working), at most once a minute per address (429 with Retry-After). A confirmed address is answered with sent false.",
			body: obj("", M{"email": email("")}, "email"), resp: obj("", M{"email": email(""), "confirmed": boolean(""), "sent": boolean(""),
				"status": enum("", "confirmed", "pending", "unconfirmed"), "message": str("")}, "email", "confirmed", "sent", "status"),
			noNotFound: true, extra: []int{404, 429, 503}},
		{method: get, path: "/settings/notifications", tag: "Alert recipients and settings", summary: "Notification preferences", access: anyKey,
			resp: obj("", M{
				"channels": arr(ref("Channel"), ""), "recipients": arr(freeform(""), ""), "notify_on": obj("", M{"down": boolean(""), "degraded": boolean(""), "recovery": boolean("")}),
				"escalation_policies": integer("Number of escalation policies."), "maintenance_suppresses_alerts": boolean(""), "test_emails_available": boolean(""),
			}, "channels", "recipients", "notify_on")},
		{method: get, path: "/settings/notification-attempts", tag: "Alert recipients and settings", summary: "Alert delivery statistics", access: anyKey,
			resp: obj("", M{
				"generated_at": dateTime(""), "truncated": boolean(""),
				"windows": arr(obj("", M{
					"window": str(""), "since": dateTime(""), "by_outcome": ref("DeliveryCounts"),
					"by_channel": arr(obj("", M{"channel_id": str(""), "name": str(""), "type": str("")}), "Per channel: id, name, type and counts."),
				}, "window", "since", "by_outcome", "by_channel"), ""),
			}, "generated_at", "windows")},
		{method: get, path: "/settings/escalation-policies", tag: "Alert recipients and settings", summary: "Escalation policies", access: anyKey, resp: listOf(ref("EscalationPolicy"))},
		{method: get, path: "/settings/on-call-schedules", tag: "Alert recipients and settings", summary: "On-call schedules with who is on call now", access: anyKey, resp: listOf(ref("OnCallSchedule"))},
		{method: get, path: "/settings/on-call-schedules/current", tag: "Alert recipients and settings", summary: "Who is on call now, per schedule", access: anyKey, resp: listOf(ref("OnCallNow"))},
		{method: get, path: "/settings/suppression-windows", tag: "Alert recipients and settings", summary: "Quiet hours and deployment windows", access: anyKey, resp: listOf(freeform(""))},

		// Reliability.
		{method: get, path: "/reliability/overview", tag: "Reliability", summary: "Reliability of every monitor", access: anyKey,
			resp: ref("ReliabilityOverview")},
		{method: get, path: "/reliability/monitor/{monitorId}", tag: "Reliability", summary: "Uptime, MTTR, MTBF, health score and SLO state of a monitor", access: anyKey, resp: ref("MonitorReliability")},
		{method: get, path: "/reliability/dependencies", tag: "Reliability", summary: "Monitor dependencies", access: anyKey, feature: "dependencies", resp: listOf(ref("Dependency"))},
		{method: post, path: "/reliability/dependencies", tag: "Reliability", summary: "Add a dependency", access: ownerOnly, feature: "dependencies", body: ref("DependencyBody"), status: 201, resp: ref("Dependency")},
		{method: del, path: "/reliability/dependencies/{id}", tag: "Reliability", summary: "Remove a dependency", access: ownerOnly, feature: "dependencies", status: 204},
		{method: get, path: "/reliability/slo-targets", tag: "Reliability", summary: "SLO targets", access: anyKey, feature: "slo", resp: listOf(ref("SLOTarget"))},
		{method: post, path: "/reliability/slo-targets", tag: "Reliability", summary: "Create or replace the monitor's SLO target", access: anyKey, feature: "slo",
			desc: "201 when created, 200 when the monitor's target was replaced.", body: ref("SLOTargetBody"), status: 201, alsoStatus: []int{200}, resp: ref("SLOTarget")},
		{method: put, path: "/reliability/slo-targets/{id}", tag: "Reliability", summary: "Change an SLO target", access: anyKey, feature: "slo", body: ref("SLOTargetBody"), resp: ref("SLOTarget")},
		{method: del, path: "/reliability/slo-targets/{id}", tag: "Reliability", summary: "Delete an SLO target", access: anyKey, feature: "slo", status: 204},

		// AI incident assist.
		{method: get, path: "/incident-comms/status", tag: "AI incident assist", summary: "Features available and remaining allowance", access: anyKey, feature: "ai-assist", resp: ref("AssistStatus")},
		{method: get, path: "/incident-comms/incidents/{id}", tag: "AI incident assist", summary: "Saved AI content of an incident", access: anyKey, feature: "ai-assist", resp: ref("AssistSaved")},
		{method: post, path: "/incident-comms/incidents/{id}/summary", tag: "AI incident assist", summary: "Generate a summary", access: anyKey, feature: "ai-assist", limit: drafts, resp: ref("AIContent"), extra: []int{503}},
		{method: post, path: "/incident-comms/incidents/{id}/postmortem/generate", tag: "AI incident assist", summary: "Generate a postmortem", access: anyKey, feature: "ai-assist", limit: drafts,
			body: ref("Overwrite"), bodyOptional: true, resp: ref("AIContent"), extra: []int{409, 503}},
		{method: post, path: "/incident-comms/incidents/{id}/status-updates", tag: "AI incident assist", summary: "Draft a status update", access: anyKey, feature: "ai-assist", limit: drafts,
			body: ref("DraftRequest"), bodyOptional: true, status: 201, resp: ref("StatusUpdateDraft"), extra: []int{503}},
		{method: patch, path: "/incident-comms/status-updates/{draftId}", tag: "AI incident assist", summary: "Edit a draft", access: anyKey, feature: "ai-assist", body: ref("DraftEdit"), resp: ref("StatusUpdateDraft"), extra: []int{409}},
		{method: post, path: "/incident-comms/status-updates/{draftId}/publish", tag: "AI incident assist", summary: "Publish a draft as a public incident note", access: anyKey, feature: "ai-assist",
			resp: ref("PublishedDraft"), extra: []int{409}},
		{method: post, path: "/incident-comms/status-updates/{draftId}/discard", tag: "AI incident assist", summary: "Discard a draft", access: anyKey, feature: "ai-assist", resp: ref("StatusUpdateDraft"), extra: []int{409}},
		// Website health (plan feature website-health).
		{method: get, path: "/website-health", tag: "Website health", summary: "Sites with their latest reports", access: anyKey, feature: "website-health",
			resp: obj("", M{"sites": arr(ref("Site"), ""), "audit_available": boolean("Whether this server can run the browser audit.")}, "sites", "audit_available")},
		{method: post, path: "/website-health/sites", tag: "Website health", summary: "Add a site", access: anyKey, feature: "website-health", body: freeform(""), status: 201, resp: ref("Site")},
		{method: get, path: "/website-health/sites/{id}", tag: "Website health", summary: "Site details", access: anyKey, feature: "website-health", resp: ref("SiteDetail")},
		{method: patch, path: "/website-health/sites/{id}", tag: "Website health", summary: "Update a site", access: anyKey, feature: "website-health", body: freeform(""), resp: ref("Site")},
		{method: del, path: "/website-health/sites/{id}", tag: "Website health", summary: "Delete a site", access: anyKey, feature: "website-health", status: 204},
		{method: post, path: "/website-health/sites/{id}/run", tag: "Website health", summary: "Crawl now", access: anyKey, feature: "website-health",
			limit: "20 per hour per workspace", status: 202, resp: ref("SiteRun"), extra: []int{409, 503}},
		{method: get, path: "/website-health/reports/{runId}", tag: "Website health", summary: "A crawl report", access: anyKey, feature: "website-health", resp: ref("SiteReport")},
		{method: get, path: "/website-health/reports/{runId}/issues.csv", tag: "Website health", summary: "A report's issues as CSV", access: anyKey, feature: "website-health",
			resp: str("CSV"), respType: "text/csv"},
		// Third-party status.
		{method: get, path: "/third-party-status/providers", tag: "Third-party status", summary: "Providers that can be followed", access: anyKey, resp: listOf(ref("Provider")), extra: []int{503}},
		{method: get, path: "/third-party-status/providers/{providerId}", tag: "Third-party status", summary: "A provider and its components", access: anyKey, resp: ref("ProviderDetails"), extra: []int{503}},
		{method: get, path: "/third-party-status/subscriptions", tag: "Third-party status", summary: "Followed providers", access: anyKey, feature: "third-party-status", resp: listOf(ref("FollowedProvider")), extra: []int{503}},
		{method: post, path: "/third-party-status/subscriptions", tag: "Third-party status", summary: "Follow a provider", access: anyKey, feature: "third-party-status",
			body: freeform(""), status: 201, resp: ref("FollowedProvider"), extra: []int{409, 503}},
		{method: patch, path: "/third-party-status/subscriptions/{id}", tag: "Third-party status", summary: "Change a subscription", access: anyKey, feature: "third-party-status", body: freeform(""), resp: ref("FollowedProvider"), extra: []int{503}},
		{method: del, path: "/third-party-status/subscriptions/{id}", tag: "Third-party status", summary: "Unfollow a provider", access: anyKey, feature: "third-party-status", status: 204, extra: []int{503}},
		{method: get, path: "/third-party-status/status-pages/{statusPageId}", tag: "Third-party status", summary: "Services shown on a status page", access: anyKey, feature: "third-party-status", resp: ref("PageServices"), extra: []int{503}},
		{method: put, path: "/third-party-status/status-pages/{statusPageId}", tag: "Third-party status", summary: "Set the services shown on a status page", access: anyKey, feature: "third-party-status", body: freeform(""), resp: ref("PageServices"), extra: []int{503}},
		// Telemetry export (Automation key, plan feature telemetry-export).
		{method: get, path: "/automation/otel", tag: "Telemetry export", summary: "Export settings and delivery status", access: automationKey, feature: "telemetry-export", resp: ref("OTelExport"), extra: []int{404, 503}},
		{method: put, path: "/automation/otel", tag: "Telemetry export", summary: "Create or update the export", access: automationKey, feature: "telemetry-export", body: freeform(""), resp: ref("OTelExport"), alsoStatus: []int{201}, extra: []int{503}},
		{method: del, path: "/automation/otel", tag: "Telemetry export", summary: "Remove the export", access: automationKey, feature: "telemetry-export", status: 204, extra: []int{404, 503}},
		{method: post, path: "/automation/otel/test", tag: "Telemetry export", summary: "Send one test span", access: automationKey, feature: "telemetry-export",
			limit: "10 per 15 minutes per workspace", resp: ref("TestResult"), extra: []int{503}},
	}...)

	// Endpoints of the human account: every method, API keys refused.
	for _, p := range []string{"/account", "/account/{path}", "/team/{path}", "/billing/{path}", "/api-keys", "/api-keys/{path}",
		"/workspaces", "/workspaces/{path}", "/subscription", "/subscription/{path}", "/checkout", "/checkout/{path}", "/auth/{path}"} {
		for _, m := range []string{get, post, put, patch, del} {
			ops = append(ops, op{method: m, path: p, tag: "Account", summary: "Human account endpoint (" + m + "); dashboard session only", access: sessionOnly})
		}
	}
	return ops
}

// incidentFilters are the query parameters of GET /incidents (paged) and
// its export.
func incidentFilters(paged bool) []param {
	ps := []param{
		q("status", enum("Omit for all.", incidentStates...), ""),
		q("monitor_id", uuid(""), ""),
		q("from", dateTime(""), "Lower bound on the start time."),
		q("to", dateTime(""), "Upper bound on the start time."),
		q("q", bounds(str(""), nil, 200), "Search in monitor names and URLs."),
	}
	if paged {
		ps = append(ps, intQ("page", 1, 1<<30, 1, ""), intQ("page_size", 1, 100, 25, ""))
	}
	return ps
}
