package main

import "slices"

// M is a JSON object of the document.
type M = map[string]any

// Schema helpers (JSON Schema 2020-12, as OpenAPI 3.1 uses it).

func ref(name string) M { return M{"$ref": "#/components/schemas/" + name} }

func typed(t, desc string) M {
	m := M{"type": t}
	if desc != "" {
		m["description"] = desc
	}
	return m
}

func str(desc string) M     { return typed("string", desc) }
func integer(desc string) M { return typed("integer", desc) }
func number(desc string) M  { return typed("number", desc) }
func boolean(desc string) M { return typed("boolean", desc) }
func uuid(desc string) M    { return with(str(desc), "format", "uuid") }
func dateTime(desc string) M {
	return with(str(desc), "format", "date-time")
}
func uri(desc string) M { return with(str(desc), "format", "uri") }
func email(desc string) M {
	return with(str(desc), "format", "email")
}

// enum is a string restricted to vals.
func enum(desc string, vals ...string) M {
	m := str(desc)
	m["enum"] = toAny(vals)
	return m
}

func arr(items M, desc string) M {
	m := typed("array", desc)
	m["items"] = items
	return m
}

// obj is an object with props; required lists the required ones.
func obj(desc string, props M, required ...string) M {
	m := typed("object", desc)
	m["properties"] = props
	if len(required) > 0 {
		slices.Sort(required)
		m["required"] = toAny(required)
	}
	return m
}

// strictObj is obj with unknown properties rejected.
func strictObj(desc string, props M, required ...string) M {
	return strict(obj(desc, props, required...))
}

// strict forbids properties other than those listed.
func strict(m M) M { return with(m, "additionalProperties", false) }

// freeform is an object whose properties are not fixed.
func freeform(desc string) M { return with(typed("object", desc), "additionalProperties", true) }

// anyValue is any JSON value. The empty schema {} says so, but validators
// that read a schema without a type by OpenAPI 3.0 rules refuse null for
// it, so null is listed as an alternative.
func anyValue(desc string) M {
	m := M{"anyOf": []any{M{}, M{"type": "null"}}}
	if desc != "" {
		m["description"] = desc
	}
	return m
}

// null makes s also accept null.
func null(s M) M {
	if t, ok := s["type"].(string); ok {
		c := with(s)
		c["type"] = []any{t, "null"}
		if e, ok := c["enum"].([]any); ok {
			c["enum"] = append(slices.Clone(e), nil)
		}
		return c
	}
	return M{"anyOf": []any{s, M{"type": "null"}}}
}

// with returns a copy of m with the key/value pairs kv set.
func with(m M, kv ...any) M {
	c := M{}
	for k, v := range m {
		c[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		c[kv[i].(string)] = kv[i+1]
	}
	return c
}

func bounds(m M, min, max any) M {
	c := with(m)
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
	checkStates       = []string{"up", "down", "degraded", "blocked", "unknown"}
	bulkActions       = []string{"pause", "resume", "delete", "add_tags", "remove_tags", "move_group"}
	incidentStates    = []string{"ongoing", "resolved", "suppressed", "acknowledged"}
	draftPhases       = []string{"investigating", "identified", "monitoring", "resolved"}
	heartbeatOK       = []string{"success", "ok", "up", "fail", "failure", "down", "error"}
	planActions       = []string{"create", "update", "replace", "delete", "noop"}
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

// handSchemas are the components.schemas not derived from Go types
// (wire.go): request bodies, the error shapes, monitor config.
func handSchemas() M {
	tags := bounds(arr(bounds(str("Tag; lower-cased and de-duplicated."), 1, 32), "Up to 20 tags."), nil, 20)
	regions := bounds(arr(str("Probe region code."), "Probe region codes."), 1, 50)
	headers := with(typed("object", "Header name to value; a value may be {\"secret_ref\": {\"name\", \"key\"}} naming a Secret of the workspace (owner level only; the Secret must opt in with the label monitoring.uptime-operator.io/credentials=true)."),
		"maxProperties", 50, "additionalProperties", M{"anyOf": []any{str(""), ref("SecretRef")}})
	assertion := obj("Assertion on the response.", M{
		"source": str("What is asserted: status_code, response_time, body, json_body, header, …"), "property": str("JSON path or header name."),
		"operator": str("Comparison: equals, not_equals, contains, greater_than, less_than, …"), "target": M{"description": "Expected value (string, number or boolean)."},
	}, "source", "operator")
	monitorFields := func(create bool) M {
		p := M{
			"name":                 bounds(str("Display name."), 1, 255),
			"url":                  uri("Target URL: http:// or https:// for http and api, https:// for mcp; must resolve to a public address."),
			"interval_seconds":     bounds(integer("Seconds between checks; not below the plan's minimum; default 120 or the plan minimum."), 15, 900),
			"group_id":             null(uuid("Monitor group.")),
			"escalation_policy_id": null(uuid("Escalation policy.")),
			"tags":                 tags,
			"config":               ref("MonitorConfig"),
		}
		if create {
			p["type"] = enum("Monitor type (default http); cannot change after creation.", monitorTypes...)
			p["regions"] = with(regions, "description", "Probe region codes; default is the plan's locations.")
		} else {
			p["is_active"] = boolean("false pauses the monitor.")
			p["type"] = enum("Accepted only when equal to the current type.", monitorTypes...)
			p["regions"] = with(regions, "description", "Accepted only when equal to the current regions; change regions with PUT /monitors/{id}/regions.")
		}
		return p
	}
	monitorSpec := monitorFields(true)
	delete(monitorSpec, "group_id")
	delete(monitorSpec, "escalation_policy_id")
	monitorSpec["key"] = ref("MonitorKey")
	monitorSpec["paused"] = boolean("Whether the monitor is paused.")
	monitorSpec["regions"] = null(regions)
	planChange := obj("One change of a plan.", M{
		"action": enum("", planActions...), "key": ref("MonitorKey"), "monitor_id": null(uuid("")), "name": str(""), "type": str(""),
		"adopted": boolean("An un-keyed monitor of the same name and type gets the key."),
		"diff": arr(obj("", M{
			"field": str("Managed field, e.g. config.timeout."),
			"from":  anyValue("Value before the change; null when unset."),
			"to":    anyValue("Value after the change; null when removed."),
		}, "field", "from", "to"), "Changed managed fields."),
	}, "action", "key", "monitor_id", "name", "type")
	planSummary := M{"create": integer(""), "update": integer(""), "replace": integer(""), "delete": integer(""), "noop": integer(""), "total": integer("")}
	applySummary := with(planSummary)
	for _, k := range []string{"applied", "unchanged", "failed", "skipped"} {
		applySummary[k] = integer("")
	}
	warning := obj("", M{"key": str(""), "message": str("")}, "message")
	connRouting := obj("Which alerts a connection receives.", M{
		"scope":        enum("", "all", "groups", "monitors"),
		"group_ids":    bounds(arr(uuid(""), ""), nil, 500),
		"monitor_ids":  bounds(arr(uuid(""), ""), nil, 500),
		"min_severity": enum("", "down", "degraded"),
	})

	return M{
		// Errors.
		"ErrorCode": enum("Error codes of the API.", errorCodes...),
		"ValidationError": obj("400 VALIDATION_ERROR.", M{
			"error":  with(str(""), "const", "Validation failed"),
			"code":   with(str(""), "const", "VALIDATION_ERROR"),
			"errors": bounds(arr(ref("FieldError"), ""), 1, nil),
		}, "error", "code", "errors"),
		"FeatureError": obj("403 FEATURE_NOT_AVAILABLE: the workspace's plan lacks a feature.", M{
			"error":         str(""),
			"code":          with(str(""), "const", "FEATURE_NOT_AVAILABLE"),
			"details":       obj("", M{"feature": str("The missing plan feature.")}),
			"plan":          str("The workspace's plan."),
			"required_plan": str("The cheapest plan with the feature."),
			"upgradePath":   str("Command that moves the workspace to that plan."),
		}, "error", "code", "plan"),
		"EntitlementLimitError": obj("403 ENTITLEMENT_LIMIT_REACHED: a plan limit is reached.", M{
			"error":   str(""),
			"code":    with(str(""), "const", "ENTITLEMENT_LIMIT_REACHED"),
			"details": obj("", M{"resource": str("e.g. monitors, status_pages."), "current": integer(""), "limit": integer("")}, "resource", "current", "limit"),
		}, "error", "code", "details"),
		"PlainTooMany": with(str("Plain-text 429 body."), "const", "Too many requests, please try again later"),

		// Monitors.
		"SecretRef":     obj("Reference to a Secret key of the workspace.", M{"secret_ref": obj("", M{"name": str(""), "key": str("")}, "name", "key")}, "secret_ref"),
		"MonitorKey":    with(bounds(str("Monitoring-as-code key: letters, digits and . _ : / -, starting with a letter or digit."), 1, 128), "pattern", `^[A-Za-z0-9][A-Za-z0-9._:/-]*$`),
		"MonitorCreate": obj("Body of POST /monitors and POST /monitors/test. Unknown top-level fields are ignored.", monitorFields(true), "name"),
		"MonitorUpdate": obj("Body of PUT /monitors/{id}: only sent fields change; config keys are merged (null removes one).", monitorFields(false)),
		"MonitorSpec":   obj("A keyed monitor spec for monitoring as code: the create fields plus key and paused; group_id, escalation_policy_id and is_active are refused (VALIDATION_ERROR). Omitted fields are not managed.", monitorSpec),
		"MonitorConfig": with(obj("Type-specific settings: at most 50 keys and 32 KB as JSON; unknown keys are rejected. Keys apply to the types named in their descriptions.", M{
			"method":                    enum("http, api.", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"),
			"headers":                   headers,
			"body":                      str("http, api: request body to send."),
			"timeout":                   integer("http/api/multistep/mcp: 1000-60000 ms; ping/port/udp/dns: 1-30 s."),
			"expected_status_codes":     bounds(arr(integer(""), "http, api."), nil, 500),
			"keyword":                   bounds(str("http, api: text the response must contain."), nil, 1000),
			"keyword_case_insensitive":  boolean("http, api."),
			"max_redirects":             bounds(integer("http, api."), 0, 5),
			"max_response_time_ms":      bounds(integer("http, api: slower responses count as failed."), 1, 600000),
			"degraded_response_time_ms": integer("http, api: slower responses are degraded; lower than max_response_time_ms."),
			"max_response_bytes":        bounds(integer("http, api."), 1, 10485760),
			"assertions":                bounds(arr(assertion, "api."), nil, 50),
			"host":                      str("ping, port, udp: hostname or IP; must be public."),
			"port":                      bounds(integer("port, udp."), 1, 65535),
			"tls":                       boolean("port: connect with TLS."),
			"packet_count":              integer("ping: clamped to 1-10."),
			"payload":                   str("udp."),
			"payload_hex":               str("udp."),
			"expected_response":         str("udp."),
			"silent_is_up":              boolean("udp."),
			"cron_expression":           str("cron: required."),
			"grace_seconds":             bounds(integer("cron."), 0, 604800),
			"time_zone":                 str("cron: IANA time zone."),
			"name":                      str("dns: name to resolve."),
			"record_type":               str("dns: A, AAAA, CNAME, MX, TXT, NS, …"),
			"resolver":                  str("dns: resolver address."),
			"protocol":                  str("dns: udp or tcp."),
			"expected_values":           bounds(arr(str(""), "dns."), nil, 50),
			"match_mode":                str("dns."),
			"steps":                     arr(freeform("multistep: {name, method, url, headers, body, expected_status_codes, extract [{variable, source, property}], assertions}."), "multistep."),
			"expected_tools":            arr(str(""), "mcp."),
			"protocol_version":          str("mcp."),
			"tool_call":                 obj("mcp.", M{"name": str(""), "arguments": freeform("")}, "name"),
			"notification_emails":       arr(email(""), "Per-monitor alert recipients; ignored when sent with an API key on POST/PUT /monitors; needs an Automation key through monitoring as code."),
		}), "maxProperties", 50, "additionalProperties", false),
		"BulkRequest": obj("", M{
			"action": enum("", bulkActions...), "ids": bounds(arr(uuid(""), ""), 1, 500),
			"tags": arr(str(""), "For add_tags and remove_tags."), "group_id": null(uuid("For move_group; null removes from the group.")),
		}, "action", "ids"),
		"Regions": obj("The regions a monitor is checked from.", M{
			"regions":           arr(str(""), "Regions the monitor is checked from: its own list, or the plan's default regions when it has none."),
			"effective_regions": arr(str(""), "The same list, under the name of the monitor object's field."),
			"is_default":        boolean("True when the list is the plan's default (the monitor sets no regions of its own)."),
		}, "regions", "effective_regions", "is_default"),
		"CronHeartbeat": (obj("", M{
			"status": enum("", heartbeatOK...), "execution_time_ms": bounds(integer(""), 0, 604800000),
			"execution_count": integer(""), "status_code": bounds(integer(""), 0, 999),
		})),

		// Groups.
		"MonitorGroupBody": obj("Group create (name required) or rename.", M{
			"name": bounds(str(""), 1, 255), "description": null(str("")),
			"notification_emails": bounds(arr(email(""), "Owner only: changing it with an API key is 403 WORKSPACE_OWNER_REQUIRED."), nil, 20),
		}),

		// Incidents.
		"NoteBody":        obj("", M{"body": bounds(str(""), 1, 5000), "public": boolean("Marks a public update (status page subscribers are told).")}, "body"),
		"ResolveBody":     obj("", M{"note": bounds(str(""), nil, 5000)}),
		"SnoozeBody":      obj("Either until or minutes.", M{"until": dateTime("Future, at most 30 days ahead."), "minutes": bounds(integer(""), 1, 43200)}),
		"Postmortem":      obj("", M{"postmortem": bounds(str(""), nil, 50000)}, "postmortem"),
		"RunbookStepBody": obj("", M{"title": bounds(str(""), 1, 255), "description": bounds(str(""), nil, 5000)}, "title"),
		"RunbookBody":     obj("", M{"name": bounds(str(""), 1, 255), "steps": bounds(arr(ref("RunbookStepBody"), ""), 1, 100), "monitor_type": null(str("")), "service_tag": null(str("")), "is_active": boolean("")}, "name", "steps"),
		"Runbook":         obj("", M{"id": uuid(""), "name": str(""), "steps": arr(ref("RunbookStepBody"), ""), "monitor_type": null(str("")), "service_tag": null(str("")), "is_active": boolean(""), "created_at": dateTime("")}, "id", "name", "steps", "is_active"),
		"DeployEventBody": obj("", M{
			"service_name": bounds(str(""), 1, 255), "environment": bounds(str(""), 1, 64), "version": bounds(str(""), 1, 120),
			"deployed_at": dateTime("Default now."), "metadata": freeform(""),
			"source": str("A code-hosting service name here is 400 USE_SIGNED_DEPLOY_HOOK."),
		}, "service_name"),
		"DeployEvent": obj("", M{
			"id": uuid(""), "service_name": str(""), "environment": null(str("")), "version": null(str("")), "source": null(str("")),
			"deployed_at": dateTime(""), "metadata": null(freeform("")), "created_at": dateTime(""),
		}, "id", "service_name", "deployed_at"),

		// Maintenance.
		"MaintenanceBody": obj("PUT and PATCH change only sent fields.", M{
			"title": bounds(str(""), 1, 255), "description": null(bounds(str(""), nil, 5000)),
			"starts_at": dateTime("Required on create."), "ends_at": dateTime("Required on create; after starts_at."), "time_zone": str("IANA."),
			"recurrence": M{"anyOf": []any{enum("", "none", "daily", "weekly", "monthly"),
				obj("", M{"frequency": str(""), "interval": bounds(integer(""), 1, 52), "until": null(dateTime(""))}, "frequency"), M{"type": "null"}}},
			"scope": enum("", "all", "monitors", "groups"), "monitor_ids": bounds(arr(uuid(""), ""), nil, 500),
			"group_ids": bounds(arr(uuid(""), ""), nil, 100), "impact": enum("", "low", "medium", "high"), "cancelled": boolean(""),
		}),

		// Status pages.
		"StatusPageCreate": obj("", M{"title": bounds(str(""), 1, 255), "description": null(bounds(str(""), nil, 1000)), "is_public": boolean("")}, "title"),
		"StatusPageUpdate": strict(obj("Unknown fields are rejected.", M{
			"title": bounds(str(""), 1, 255), "description": null(bounds(str(""), nil, 1000)), "slug": bounds(str(""), 3, 64),
			"is_public": boolean(""), "logo_url": null(str("https URL or empty.")), "favicon_url": null(str("https URL or empty; needs white-label.")),
			"accent_color": null(str("Hex colour or empty.")), "hide_powered_by": boolean("Needs white-label (403 WHITE_LABEL_NOT_ENTITLED)."),
			"show_response_times": boolean(""),
		})),
		"PageMonitorEntry": obj("One monitor of PUT /status/pages/{id}/monitors.", M{"monitor_id": uuid(""), "section": null(bounds(str(""), nil, 100))}, "monitor_id"),
		"PageMonitorAdd":   obj("Body of POST /status/pages/{id}/monitors; adding a monitor already on the page changes its section.", M{"monitorId": uuid(""), "section": null(bounds(str(""), nil, 100))}, "monitorId"),
		"PageMonitors":     obj("", M{"monitors": bounds(arr(ref("PageMonitorEntry"), ""), nil, 500)}, "monitors"),
		"PageAccess":       strict(obj("", M{"mode": enum("", "public", "password", "sso"), "password": null(bounds(str(""), 8, 128)), "is_public": boolean("")}, "mode")),
		"PageDomain":       strictObj("", M{"domain": null(str("Custom domain; null or empty removes it."))}),
		"Languages": strictObj("", M{
			"default": str(""), "enabled": arr(str(""), ""),
			"translations": arr(obj("", M{"language": str(""), "title": str(""), "description": str("")}, "language"), ""),
		}),

		// Alert channels.
		"Connection": obj("Channel fields at top level (by type: webhook_url; integration_key; api_key and region us/eu; chat_id; repository and token; to as E.164), plus name and routing. Blank secret fields on edit keep the stored value.", M{
			"name": bounds(str("Default is the channel name."), nil, 60), "routing": ref("Routing"),
			"webhook_url": uri(""), "integration_key": str(""), "api_key": str(""), "region": enum("", "us", "eu"),
			"chat_id": str(""), "repository": str("owner/repo."), "token": str(""), "to": str("E.164 phone number."),
		}),
		"Routing": strict(connRouting),
		"ConnectionCreated": obj("", M{
			"success": boolean(""), "message": str(""), "connection_id": uuid(""), "name": str(""), "integration_type": str(""),
			"auto_test": boolean(""), "signing_secret": str("Webhook connections only; shown once."),
		}, "success", "connection_id", "name", "integration_type"),
		"Channel": obj("", M{
			"id": uuid(""), "type": str(""), "name": str(""), "status": str(""), "routing": freeform(""), "consecutive_failures": integer(""),
			"last_delivery_at": null(dateTime("")), "last_delivery_status": null(str("")), "created_at": dateTime(""),
		}, "id", "type", "name", "status"),

		"DeliveryCounts": obj("", M{"total": integer(""), "delivered": integer(""), "failed": integer(""), "pending": integer(""), "attempts": integer("")}),

		// Reliability.
		"DependencyBody": strictObj("", M{"parent_monitor_id": uuid(""), "child_monitor_id": uuid(""), "suppression_mode": enum("", "suppress_child_if_parent_down")}, "parent_monitor_id", "child_monitor_id"),
		"Dependency": obj("", M{
			"id": str(""), "parent_monitor_id": uuid(""), "child_monitor_id": uuid(""), "suppression_mode": str(""),
			"parent_monitor_name": str(""), "child_monitor_name": str(""),
		}, "id", "parent_monitor_id", "child_monitor_id"),
		"SLOTargetBody": obj("monitor_id and target_percentage are required on create; monitor_id is not accepted on PUT.", M{
			"monitor_id": uuid(""), "target_percentage": bounds(number(""), 90, 99.999), "sli_type": enum("", "availability", "latency"),
			"window_minutes": bounds(integer(""), 60, 43200), "burn_rate_fast_threshold": bounds(number(""), 0.1, 100),
			"burn_rate_slow_threshold": bounds(number(""), 0.1, 100), "is_enabled": boolean(""),
		}),
		// Monitoring as code.
		"PlanRequest": obj("Body of plan and apply (up to 2 MB).", M{
			"monitors":                        bounds(arr(ref("MonitorSpec"), "Every spec needs a key."), nil, 500),
			"prune":                           boolean("Delete keyed monitors not in the list."),
			"adopt_by_name":                   boolean("Give a key to an un-keyed monitor with the same name and type."),
			"continue_on_error":               boolean("Apply only."),
			"expected_fingerprint":            str("Apply only: the plan_fingerprint of the reviewed plan (409 PLAN_CHANGED when different)."),
			"allow_prune_without_fingerprint": boolean("Apply only."),
		}, "monitors"),
		"Plan": obj("", M{
			"changes": arr(planChange, ""), "summary": obj("", planSummary), "warnings": arr(warning, ""),
			"plan_fingerprint": str("sha256:<hex> of the canonical changes."),
		}, "changes", "summary", "warnings", "plan_fingerprint"),
		"ApplyResult": obj("200, or 207 when some changes failed.", M{
			"ok": boolean(""), "summary": obj("", applySummary),
			"results":          arr(obj("", M{"key": str(""), "action": enum("", planActions...), "status": str(""), "monitor_id": null(uuid("")), "error": ref("ErrorBody")}, "key", "action", "status"), ""),
			"plan_fingerprint": str(""), "warnings": arr(warning, ""),
		}, "ok", "summary", "results", "plan_fingerprint"),

		// AI incident assist.
		"FollowedProvider": M{"allOf": []any{ref("ThirdPartySubscription"), obj("", M{"provider_name": str("")}, "provider_name")},
			"description": "A followed provider: the subscription and the provider's name."},
		// Website health: the store's records with the report summary.
		"SiteRun": M{"allOf": []any{ref("HealthRun"), obj("", M{"summary": null(ref("SiteReportSummary"))}, "summary")},
			"description": "A crawl without its issues."},
		"Site": M{"allOf": []any{ref("HealthSite"), obj("", M{"latest_report": null(ref("SiteRun"))}, "latest_report")},
			"description": "A site with its latest crawl."},
		"SiteDetail": M{"allOf": []any{ref("Site"), obj("", M{"reports": arr(ref("SiteRun"), "The latest crawls (up to 10), newest first, without summaries.")}, "reports")}},
		"PageServices": obj("The third-party services shown on a status page.", M{
			"status_page_id": uuid(""),
			"services":       arr(M{"allOf": []any{ref("ThirdPartyService"), obj("", M{"provider_name": str(""), "status_page_url": str("")}, "provider_name", "status_page_url")}}, ""),
		}, "status_page_id", "services"),
		"DraftEdit":    strictObj("", M{"body": bounds(str(""), nil, 5000), "phase": enum("", draftPhases...)}),
		"DraftRequest": obj("", M{"phase": enum("", draftPhases...), "guidance": bounds(str(""), nil, 1000)}),
		"Overwrite":    obj("", M{"overwrite": boolean("")}),
	}
}

// sharedResponses are components.responses.
func sharedResponses() M {
	jsonErr := func(desc string, schema M) M {
		return M{"description": desc, "content": M{"application/json": M{"schema": schema}}}
	}
	// page adds the HTML page a browser gets instead of the JSON error.
	page := func(r M) M {
		r["content"].(M)["text/html"] = M{"schema": str("HTML page.")}
		return r
	}
	tooMany := jsonErr("Rate limited (RATE_LIMITED). Some limits answer with a plain-text body.", ref("ErrorBody"))
	tooMany["content"].(M)["text/plain"] = M{"schema": ref("PlainTooMany")}
	tooMany["headers"] = M{
		"Retry-After":         M{"$ref": "#/components/headers/Retry-After"},
		"RateLimit-Limit":     M{"$ref": "#/components/headers/RateLimit-Limit"},
		"RateLimit-Remaining": M{"$ref": "#/components/headers/RateLimit-Remaining"},
		"RateLimit-Reset":     M{"$ref": "#/components/headers/RateLimit-Reset"},
	}
	return M{
		"BadRequest": jsonErr("BAD_REQUEST (body not valid JSON), VALIDATION_ERROR with errors[{field, message}], or another rejected value.",
			M{"anyOf": []any{ref("ValidationError"), ref("ErrorBody")}}),
		"Unauthorized":    jsonErr("No key (`No token provided`), invalid key (`Invalid API key`), both without code; or 401 API_KEY_DISABLED.", ref("ErrorBody")),
		"NotFound":        jsonErr("NOT_FOUND: absent in this workspace (ids of other workspaces are 404 too).", ref("ErrorBody")),
		"Conflict":        jsonErr("Conflict (CONFLICT, INCIDENT_RESOLVED, PLAN_CHANGED, CONNECTION_LIMIT_REACHED).", ref("ErrorBody")),
		"PayloadTooLarge": jsonErr("PAYLOAD_TOO_LARGE: body over 100 KB (2 MB for plan and apply).", ref("ErrorBody")),
		"TooManyRequests": tooMany,
		"InternalError":   jsonErr("INTERNAL_ERROR.", ref("ErrorBody")),
		"Unavailable":     jsonErr("Briefly unavailable (e.g. CHANNEL_UNAVAILABLE, EXPIRY_UNAVAILABLE, REGION_UNAVAILABLE), or an optional feature this server does not run (AI_UNAVAILABLE, SITE_HEALTH_UNAVAILABLE, THIRD_PARTY_UNAVAILABLE, TELEMETRY_EXPORT_UNAVAILABLE).", ref("ErrorBody")),
		"NotImplemented":  jsonErr("NOT_IMPLEMENTED: an owner-only endpoint not modelled yet (only owners get here).", ref("ErrorBody")),
		"NotFoundPage":    page(jsonErr("NOT_FOUND; a browser gets an HTML page saying the link is not valid.", ref("ErrorBody"))),
		"UnavailablePage": page(jsonErr("Briefly unavailable; a browser gets an HTML page.", ref("ErrorBody"))),
		"PruneConfirmationRequired": jsonErr("PRUNE_CONFIRMATION_REQUIRED: the apply would delete or replace monitors without expected_fingerprint or allow_prune_without_fingerprint.",
			ref("ErrorBody")),
	}
}

func sharedHeaders() M {
	h := func(desc string) M { return M{"description": desc, "schema": integer("")} }
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
			"name": "X-Workspace-Id", "in": "header", "required": false, "schema": str(""),
			"description": "Optional; when sent it must be the key's workspace, else 403 WORKSPACE_ACCESS_DENIED.",
		},
	}
}
